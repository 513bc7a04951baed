"""Anchored reads, metadata and folders (see engine.util.fs)."""
from __future__ import annotations

import builtins
import errno
import os
import stat as _stat
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from .walk import _DIR, _NOFOLLOW_DIR, _flags, _link_target, _nofollow, _raise_named, _refuse, _walk, anchor_of


def open_fd(path: os.PathLike | str, flags: int = os.O_RDONLY, perm: int = 0o666) -> int:
    """A descriptor of `path` opened with `flags` (anchored; the final name with O_NOFOLLOW)."""
    w = _walk(path, mkdir=bool(flags & os.O_CREAT))
    try:
        return os.open(w.name, flags | _nofollow(w) | os.O_CLOEXEC, perm, dir_fd=w.fd)
    except OSError as exc:
        raise _raise_named(exc, w.shown, w.anchor) from None
    finally:
        w.close()


def open(path: os.PathLike | str, mode: str = "r", buffering: int = -1, encoding: str | None = None,
         errors: str | None = None, newline: str | None = None, *, _allowed: list[str] | None = None) -> IO:
    """`builtins.open` for a campaign path: anchored (see the module); another path as named. Writing
    modes do not create folders."""
    if anchor_of(path) is None:
        return builtins.open(path, mode, buffering, encoding, errors, newline)
    w = _walk(path, allowed=_allowed)
    try:
        fd = os.open(w.name, _flags(mode) | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666, dir_fd=w.fd)
    except OSError as exc:
        raise _raise_named(exc, w.shown, w.anchor) from None
    finally:
        w.close()
    try:
        kind = os.fstat(fd).st_mode
        if _stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not _stat.S_ISREG(kind):         # a FIFO or device swapped in: never read (it could block forever)
            from ...errors import FormatError, Problem
            raise FormatError(Problem(str(path), None, "not a regular file; refused without reading"))
        os.set_blocking(fd, True)
        fh = builtins.open(fd, mode, buffering, encoding, errors, newline)
    except BaseException:
        os.close(fd)
        raise
    raw = getattr(fh, "buffer", fh)
    try:
        getattr(raw, "raw", raw).name = str(path)       # messages name the path, not the descriptor
    except (AttributeError, TypeError):
        pass
    return fh


def read_bytes(path: os.PathLike | str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def read_text(path: os.PathLike | str, encoding: str = "utf-8", errors: str = "strict", *,
              _allowed: list[str] | None = None) -> str:
    with open(path, "r", encoding=encoding, errors=errors, _allowed=_allowed) as fh:
        return fh.read()


@contextmanager
def proc_path(path: os.PathLike | str) -> Iterator[str]:
    """A `/proc/self/fd/N` path of `path` opened for reading (anchored): for a library that insists on a
    name (Arrow's memory map); the kernel reopens the very file, not a name. The descriptor is closed on exit."""
    fd = open_fd(path, os.O_RDONLY)
    try:
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------- metadata, folders

def stat(path: os.PathLike | str, follow: bool = True) -> os.stat_result:
    """`os.stat` of `path` (anchored; `follow`: an admitted link's target, else the link itself)."""
    anchor = anchor_of(path)
    if anchor is None or os.path.abspath(path) == anchor:     # the person's own path, or a root they named
        return os.stat(path, follow_symlinks=follow)
    w = _walk(path, follow=follow)
    try:
        return os.stat(w.name, dir_fd=w.fd, follow_symlinks=False)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, w.shown) from None
    finally:
        w.close()


def _kind(path, test) -> bool:
    try:
        return test(stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def exists(path: os.PathLike | str) -> bool:
    return _kind(path, lambda m: True)


def is_file(path: os.PathLike | str) -> bool:
    return _kind(path, _stat.S_ISREG)


def is_dir(path: os.PathLike | str) -> bool:
    return _kind(path, _stat.S_ISDIR)


def is_link(path: os.PathLike | str) -> bool:
    try:
        return _stat.S_ISLNK(stat(path, follow=False).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


@contextmanager
def folder_fd(path: os.PathLike | str, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `path` (anchored, the folder itself not a link; `create`: made if missing)."""
    anchor = anchor_of(path)
    if anchor is None or os.path.abspath(path) == anchor:     # a root itself, or the person's own folder
        if create:
            os.makedirs(path, exist_ok=True)
        fd = os.open(path, _DIR)        # a root itself: named by the person
    else:
        w = _walk(path, mkdir=create)
        try:
            if create:
                try:
                    os.mkdir(w.name, 0o777, dir_fd=w.fd)
                except FileExistsError:
                    pass
            fd = os.open(w.name, _NOFOLLOW_DIR, dir_fd=w.fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _link_target(w.fd, w.name) is not None:
                raise _refuse(w.shown, w.anchor, "is a symbolic link") from None     # swapped in after the walk
            raise _raise_named(exc, w.shown, w.anchor) from None
        finally:
            w.close()
    try:
        yield fd
    finally:
        os.close(fd)


def makedirs(path: os.PathLike | str) -> None:
    """Create the folder `path` and its missing parents (anchored; an existing folder is fine)."""
    if anchor_of(path) is None:
        os.makedirs(path, exist_ok=True)
        return
    with folder_fd(path, create=True):
        pass


def listdir(path: os.PathLike | str) -> list[str]:
    """The names in the folder `path`, sorted (anchored); [] when it does not exist."""
    try:
        with folder_fd(path) as fd:
            return sorted(os.listdir(fd))
    except (FileNotFoundError, NotADirectoryError):
        return []


def stats(path: os.PathLike | str, pattern: str = "*") -> list[tuple[str, os.stat_result]]:
    """(name, stat) of the entries of the folder `path` whose name matches `pattern`, sorted, from one anchored
    walk to the folder; a link's stat is its admitted target's (`stat`), an entry gone or refused is left out;
    [] when the folder does not exist."""
    from fnmatch import fnmatchcase
    from ...errors import CranfieldError
    out = []
    try:
        with folder_fd(path) as fd:
            for name in sorted(os.listdir(fd)):
                if not fnmatchcase(name, pattern):
                    continue
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if _stat.S_ISLNK(st.st_mode):
                        st = stat(Path(path) / name)
                except (OSError, CranfieldError):
                    continue
                out.append((name, st))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return out


def glob(path: os.PathLike | str, pattern: str = "*") -> list[Path]:
    """The entries of the folder `path` whose name matches `pattern` (no folders in the pattern), sorted."""
    p = Path(path)
    from fnmatch import fnmatchcase
    return [p / n for n in listdir(p) if fnmatchcase(n, pattern)]


def unlink(path: os.PathLike | str, missing_ok: bool = True) -> None:
    """Remove the file `path` (anchored; the name itself, a link is not followed)."""
    w = _walk(path, follow=False)
    try:
        os.unlink(w.name, dir_fd=w.fd)
    except FileNotFoundError:
        if not missing_ok:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), w.shown) from None
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, w.shown) from None
    finally:
        w.close()


def rmdir(path: os.PathLike | str) -> None:
    """Remove the empty folder `path` (anchored)."""
    w = _walk(path, follow=False)
    try:
        os.rmdir(w.name, dir_fd=w.fd)
    finally:
        w.close()


def rmtree(path: os.PathLike | str) -> None:
    """Remove the folder `path` and all in it, never following a link (anchored); missing is fine."""
    try:
        cm = folder_fd(path)
        fd = cm.__enter__()
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        _rmtree_fd(fd)
    finally:
        cm.__exit__(None, None, None)
    rmdir(path)


def _rmtree_fd(fd: int) -> None:
    for e in os.scandir(fd):
        if e.is_dir(follow_symlinks=False):
            sub = os.open(e.name, _NOFOLLOW_DIR, dir_fd=fd)
            try:
                _rmtree_fd(sub)
            finally:
                os.close(sub)
            os.rmdir(e.name, dir_fd=fd)
        else:
            os.unlink(e.name, dir_fd=fd)


def rename(src: os.PathLike | str, dst: os.PathLike | str) -> None:
    """Rename `src` over `dst` (both anchored; the names themselves, links not followed)."""
    a = _walk(src, follow=False)
    try:
        b = _walk(dst, follow=False, mkdir=True)
        try:
            os.replace(a.name, b.name, src_dir_fd=a.fd, dst_dir_fd=b.fd)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, a.shown, None, b.shown) from None
        finally:
            b.close()
    finally:
        a.close()


def rglob(path: os.PathLike | str, pattern: str = "*") -> list[Path]:
    """Every entry under the folder `path` (folders included, links never followed) whose name matches
    `pattern`, sorted; [] when it does not exist."""
    from fnmatch import fnmatchcase
    out: list[Path] = []

    def walk(fd: int, here: Path) -> None:
        for e in sorted(os.scandir(fd), key=lambda e: e.name):
            p = here / e.name
            if fnmatchcase(e.name, pattern):
                out.append(p)
            if e.is_dir(follow_symlinks=False):
                sub = os.open(e.name, _NOFOLLOW_DIR, dir_fd=fd)
                try:
                    walk(sub, p)
                finally:
                    os.close(sub)
    try:
        with folder_fd(path) as fd:
            walk(fd, Path(path))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(out)
