"""Atomic file writes and clean operating-system errors.

`atomic_write(path, data)` writes a temporary file beside `path`, fsyncs it, renames it over `path`
and fsyncs the directory: a reader sees the old file or the new one, never half of one, and a failed
write (disk full, read-only, permission) leaves nothing behind. `os_error_message(exc)` turns an
OSError into one line naming the path and what to do; the CLI prints it instead of a traceback. Writers
re-raise an OSError with the path they were writing (a bare ENOSPC from write() names no file).
"""
from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space and run the command again",
    errno.EFBIG: "the file would pass the size allowed (a file size limit or a full file system): free some "
                 "space or raise the limit, then run the command again",
    errno.EDQUOT: "your disk quota is used up: free some space and run the command again",
    errno.EROFS: "the file system is read-only: work on a writable copy of the campaign directory",
    errno.EACCES: "permission denied: check the owner and permissions (ls -l) or run as the owner",
    errno.EPERM: "operation not permitted: check the owner and permissions (ls -l)",
    errno.ENOENT: "no such file or directory: check the path",
    errno.ENOTDIR: "a part of the path is not a directory: check the path",
    errno.EISDIR: "is a directory, expected a file: check the path",
    errno.ELOOP: "too many symbolic links (a loop?): fix the link",
    errno.ENAMETOOLONG: "the file name is too long: use a shorter path",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) and run the command again",
    errno.EIO: "input/output error: the disk may be failing; check it and run the command again",
    errno.EEXIST: "the file already exists: remove it or choose another name",
    errno.ENOTEMPTY: "the directory is not empty",
}


def os_error_message(exc: OSError) -> str:
    """One line: the path, the system's words, and what to do."""
    what = exc.strerror or str(exc)
    advice = _ADVICE.get(exc.errno or -1, "check the path, the disk and the permissions, then run the command again")
    if exc.filename is None:
        return f"{what} ({advice})"
    where = str(exc.filename)
    if exc.filename2 is not None:
        where = f"{exc.filename} -> {exc.filename2}"
    return f"{where}: {what} ({advice})"


_WRITE_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def write_failure(exc: BaseException, path: os.PathLike | str) -> str | None:
    """When `exc` is a failed write of `path` for want of room (a full disk, a file-size limit, a quota;
    also as Arrow words it: "[errno 27] File too large"), the one message naming `path`; else None."""
    import re
    code = getattr(exc, "errno", None)
    if code not in _WRITE_ERRNOS:
        m = re.search(r"\[errno (\d+)\]", str(exc), re.IGNORECASE)
        code = int(m.group(1)) if m else None
    if code not in _WRITE_ERRNOS:
        return None
    return f"{path}: cannot be written: {os.strerror(code)} ({_ADVICE[code]})"


@contextmanager
def atomic_path(path: os.PathLike | str) -> Iterator[Path]:
    """Yield a path of a new temporary file beside `path` (`/proc/self/fd/N` of a file engine.util.fs
    created O_EXCL under an unpredictable name in the anchored folder); on normal exit it is fsynced and
    renamed over `path`, on any error removed. The writer opens the yielded path itself."""
    from . import fs
    with fs.atomic_proc_path(path) as tmp:
        yield Path(tmp)


def atomic_write(path: os.PathLike | str, data: bytes) -> None:
    """Write `data` to `path` atomically and durably (engine.util.fs.atomic_write). An OSError names `path`."""
    from . import fs
    fs.atomic_write(path, data)


@contextmanager
def exclusive_lock(path: os.PathLike | str, directory: bool = False) -> Iterator[None]:
    """Hold an exclusive flock on `path` (a lock file, created if needed; or an existing directory),
    anchored (engine.util.fs.lock)."""
    from . import fs
    with fs.lock(path, directory=directory):
        yield


def campaign_lock(root: os.PathLike | str):
    """The campaign's lock (an exclusive flock on the campaign directory itself, so no lock file is
    left): every read-modify-replace of campaign.yaml (submit, init, the TUI's intake) holds it."""
    from . import fs
    fs.makedirs(root)
    return exclusive_lock(root, directory=True)
