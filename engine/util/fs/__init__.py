"""The one anchored open: every campaign file is reached from its root by directory descriptors.

A campaign directory is registered (`register`, done by `confine.campaign_roots`, so by every
`campaign_path`), and so are the outside roots the person granted (`confine.person_roots`). A path that
lies, as written (made absolute without resolving links), under a registered root is never opened by
its name: the root is opened, then each folder on the way with `O_DIRECTORY|O_NOFOLLOW` relative to the
one before (`dir_fd`), and the file itself with `O_NOFOLLOW`. A component that is a symbolic link is
not followed by the kernel: its target is read (`readlink` at the folder's descriptor), must lie, as
written, under a root the campaign admits (the campaign itself, or a root the person granted: what
`confine` admits), and is then walked again from that root (at most 40 links). Anything else is refused
(FormatError, nothing read or written). A component swapped to a link between a check and a use is
therefore never followed: the check is the use.

Writes: `atomic_file`/`atomic_write` create a temporary file with an unpredictable name
(24 hex digits from `os.urandom`) `O_CREAT|O_EXCL|O_NOFOLLOW` in the target's anchored folder, fsync it, rename it
over the target with the folder's descriptor and fsync the folder. `locked_append`/`append` and
`lock` take an exclusive flock and then check that the name still holds the file locked (else open the
new one). A path under no registered root is the person's own file: opened as named, and written the
same way anchored at its own folder. SQLite and Arrow get a `/proc/self/fd` path of an anchored
descriptor (docs/reliability.md, "The one anchored open").
"""
from __future__ import annotations

from .walk import anchor_of, register, set_policy
from .files import (exists, folder_fd, glob, stats, is_dir, is_file, is_link, listdir, makedirs, open, open_fd, proc_path,
                    read_bytes, read_text, rename, rglob, rmdir, rmtree, stat, unlink)
from .write import append, atomic_file, atomic_proc_path, atomic_write, lock, locked_append, open_locked, temp_name


def sqlite_connect(path, create: bool = False, **kwargs):
    """An sqlite3 connection to `path` through its anchored folder (engine.util.fs.sqlite; loaded on use)."""
    from .sqlite import sqlite_connect as connect
    return connect(path, create=create, **kwargs)

__all__ = ["register", "set_policy", "anchor_of", "open", "open_fd", "read_bytes", "read_text", "proc_path", "stat", "exists",
           "is_file", "is_dir", "is_link", "folder_fd", "makedirs", "listdir", "stats", "glob", "rglob", "unlink", "rmdir", "rmtree",
           "rename", "temp_name", "atomic_file", "atomic_proc_path", "atomic_write", "locked_append", "open_locked", "append",
           "lock", "sqlite_connect"]
