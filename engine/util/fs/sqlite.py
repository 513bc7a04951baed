"""SQLite through an anchored folder descriptor (see engine.util.fs)."""
from __future__ import annotations

import os

from .walk import _raise_named, _refuse, _walk


def sqlite_connect(path: os.PathLike | str, create: bool = False, **kwargs):
    """An sqlite3 connection to the database `path`, reached through its anchored folder: SQLite is
    given `file:/proc/self/fd/D/NAME?nofollow=1` (D: the folder's descriptor, kept open as long as
    the connection), and after opening, the file SQLite holds must be the one the anchored walk found
    (else refused). `create`: made when missing."""
    import sqlite3
    from urllib.parse import quote
    w = _walk(path, mkdir=create, follow=False)
    try:
        try:
            fd = os.open(w.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if create else 0),
                         0o644, dir_fd=w.fd)
        except OSError as exc:
            raise _raise_named(exc, w.shown, w.anchor) from None
        want = os.fstat(fd)
        os.close(fd)
        uri = f"file:{quote(f'/proc/self/fd/{w.fd}/{w.name}')}?nofollow=1"
        conn = sqlite3.connect(uri, uri=True, factory=_conn_factory(), **kwargs)
        conn._dir_fd = os.dup(w.fd)
    finally:
        w.close()
    try:
        conn.execute("PRAGMA schema_version").fetchone()      # makes SQLite open the file
        held = _sqlite_file_identity(conn)
    except sqlite3.Error:
        held = None
    if held is not None and held != (want.st_dev, want.st_ino):
        conn.close()
        raise _refuse(str(path), w.anchor or os.path.dirname(os.path.abspath(path)),
                      "changed while it was opened (a symbolic link swapped in?)")
    return conn


def _sqlite_file_identity(conn) -> tuple[int, int] | None:
    name = conn.execute("PRAGMA database_list").fetchone()[2]
    for ent in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{ent}") == name:
                st = os.stat(f"/proc/self/fd/{ent}")
                return (st.st_dev, st.st_ino)
        except OSError:
            continue
    return None


def _conn_class():
    import sqlite3

    class Conn(sqlite3.Connection):
        """A connection that closes its anchored folder's descriptor with itself."""
        _dir_fd = -1

        def close(self) -> None:
            super().close()
            fd, self._dir_fd = self._dir_fd, -1
            if fd >= 0:
                os.close(fd)

        def __del__(self):
            fd, self._dir_fd = self._dir_fd, -1
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
    return Conn


_CONN = []


def _conn_factory():
    if not _CONN:
        _CONN.append(_conn_class())
    return _CONN[0]
