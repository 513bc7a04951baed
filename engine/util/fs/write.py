"""Anchored writes: atomic temp-and-rename, locked appends, locks (see engine.util.fs)."""
from __future__ import annotations

import builtins
import errno
import fcntl
import os
from contextlib import contextmanager
from typing import IO, Iterator

from .walk import _nofollow, _raise_named, _walk
from .files import folder_fd


def _fsync_fd(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass


def temp_name(name: str) -> str:
    """An unpredictable hidden temporary name beside `name` (short whatever `name`'s length)."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= 64:
        base = name
    else:
        import hashlib
        base = hashlib.sha256(raw).hexdigest()[:16]
    return f".{base}.{_token()}.tmp"


def _token() -> str:
    """24 hex digits from the system's CSPRNG (what `secrets.token_hex(12)` gives, without its imports)."""
    return os.urandom(12).hex()


@contextmanager
def atomic_file(path: os.PathLike | str, mode: str = "wb", encoding: str | None = None,
                newline: str | None = None, exclusive: bool = False) -> Iterator[IO]:
    """A file object on a new temporary file beside `path` (created O_EXCL|O_NOFOLLOW under an
    unpredictable name in the anchored folder, folders made as needed); on normal exit it is fsynced
    and renamed over `path` (the name, never a link's target) and the folder fsynced; on an error it is
    removed. An OSError names `path`, never the temporary name. `exclusive`: linked into place instead,
    a FileExistsError when `path` exists meanwhile (never clobbered)."""
    w = _walk(path, mkdir=True, follow=False)
    tmp = None
    fh = None
    try:
        for _ in range(8):
            tmp = temp_name(w.name)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666,
                             dir_fd=w.fd)
                break
            except FileExistsError:
                tmp = None
        else:
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), w.shown)
        fh = builtins.open(fd, mode, encoding=encoding, newline=newline)
        yield fh
        fh.flush()
        os.fsync(fh.fileno())
        fh.close()
        if exclusive:
            os.link(tmp, w.name, src_dir_fd=w.fd, dst_dir_fd=w.fd, follow_symlinks=False)
        else:
            os.replace(tmp, w.name, src_dir_fd=w.fd, dst_dir_fd=w.fd)
            tmp = None
        _fsync_fd(w.fd)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), w.shown) from None
    finally:
        if fh is not None and not fh.closed:
            try:
                fh.close()
            except OSError:
                pass
        if tmp is not None:
            try:
                os.unlink(tmp, dir_fd=w.fd)
            except OSError:
                pass
        w.close()


@contextmanager
def atomic_proc_path(path: os.PathLike | str) -> Iterator[str]:
    """As `atomic_file`, but yields the `/proc/self/fd/N` path of the temporary file, for a library that
    writes to a name (Arrow): the kernel reopens the very temporary file, whatever the names do."""
    with atomic_file(path, "wb") as fh:
        yield f"/proc/self/fd/{fh.fileno()}"


def atomic_write(path: os.PathLike | str, data: bytes | str) -> None:
    """Write `data` (str: UTF-8) to `path` atomically and durably (see `atomic_file`)."""
    with atomic_file(path, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def open_locked(path, flags: int = os.O_RDWR | os.O_APPEND | os.O_CREAT, perm: int = 0o644) -> int:
    """A descriptor of `path` under an exclusive flock, checked after locking to be the file the name
    still holds (a writer that swapped in a new file while this one waited: the new one is opened)."""
    while True:
        w = _walk(path, mkdir=bool(flags & os.O_CREAT))
        try:
            try:
                fd = os.open(w.name, flags | _nofollow(w) | os.O_CLOEXEC, perm, dir_fd=w.fd)
            except OSError as exc:
                raise _raise_named(exc, w.shown, w.anchor) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = os.fstat(fd)
                try:
                    now = os.stat(w.name, dir_fd=w.fd, follow_symlinks=False)
                except FileNotFoundError:
                    now = None
            except BaseException:
                os.close(fd)
                raise
        finally:
            w.close()
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextmanager
def locked_append(path: os.PathLike | str, perm: int = 0o644) -> Iterator[int]:
    """`path` open for reading and appending (created with its folders) under an exclusive flock, the
    file locked being the one the name holds; yields the descriptor."""
    fd = open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, perm)
    try:
        yield fd
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def append(path: os.PathLike | str, data: bytes) -> None:
    """Append `data` to `path` under its lock (see `locked_append`) with one write, then fsync."""
    with locked_append(path) as fd:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


@contextmanager
def lock(path: os.PathLike | str, directory: bool = False) -> Iterator[None]:
    """Hold an exclusive flock on `path`: a lock file (created with its folders, checked to be the one
    the name holds) or an existing folder (`directory`)."""
    if directory:
        cm = folder_fd(path)
        fd = cm.__enter__()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            cm.__exit__(None, None, None)      # closing drops the lock
        return
    fd = open_locked(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
