"""The anchored walk: registered roots, link admission, and the folder descriptor of a path's final name
(see engine.util.fs)."""
from __future__ import annotations
from __future__ import annotations

import errno
import os
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW_DIR = _DIR | os.O_NOFOLLOW
_MAX_LINKS = 40
_CAMPAIGNS: set[str] = set()        # registered campaign directories, absolute as written
_PERSON: tuple = (None, ())         # (key, roots): the person's grants, read once per change

_POLICY: list = [None]              # engine.util.confine, which sets itself here (it imports fs, not back)


def set_policy(confine) -> None:
    """Where the grants and the campaign's admitted roots come from: `confine` (engine.util.confine)
    gives person_config_path, PERSON_ENV, person_roots, campaign_roots and the refusal's hint."""
    _POLICY[0] = confine


def register(root: os.PathLike | str) -> None:
    """Anchor every later access under `root` (a campaign directory) at it."""
    _CAMPAIGNS.add(os.path.abspath(root))


def _person_roots() -> tuple[str, ...]:
    global _PERSON
    confine = _POLICY[0]
    if confine is None:                 # nothing registered a campaign: no grants to anchor at
        return ()
    cfg = confine.person_config_path()
    try:
        st = os.stat(cfg)
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    key = (os.environ.get(confine.PERSON_ENV, ""), str(cfg), stamp)
    if _PERSON[0] != key:               # no grant named and no config file: nothing to read (no yaml import)
        grants = confine.person_roots() if key[0] or stamp is not None else []
        _PERSON = (key, tuple(str(p) for p in grants))
    return _PERSON[1]


def _under(a: str, r: str) -> bool:
    return a == r or a.startswith(r.rstrip("/") + "/")


def anchor_of(path: os.PathLike | str) -> str | None:
    """The registered root `path` lies under as written (the innermost), or None: the person's own file."""
    a = os.path.abspath(path)
    person = _person_roots()
    while True:                         # the folders of `a`, innermost first: one set lookup each
        if a in _CAMPAIGNS or a in person:
            return a
        i = a.rfind("/")
        if i <= 0:
            return None
        a = a[:i]


def _allowed(anchor: str) -> list[str]:
    """Roots a link met under `anchor` may lead into: first the anchor's own (as written and resolved),
    then the outside roots (an admitted file there has its content kept out of messages)."""
    confine = _POLICY[0]
    if anchor in _CAMPAIGNS and confine is not None:
        rs = [str(p) for p in confine.campaign_roots(anchor)]
        return [anchor, rs[0], "", *rs[1:]]
    person = list(_person_roots())
    return [anchor, os.path.realpath(anchor), "", *person]


def _refuse(shown: str, anchor: str, why: str):
    from ...errors import FormatError, Problem
    confine = _POLICY[0]
    hint = confine._outside(Path(shown), Path(anchor), shown, shown).hint if confine is not None else None
    return FormatError(Problem(shown, None, f"{why}; refused, nothing read or written"), hint=hint)


def _admit(shown: str, target: str, anchor: str, allowed: list[str]) -> tuple[str, str]:
    """The link target `target` (absolute, lexical) and the root it lies under, or a refusal."""
    t = os.path.normpath(target)
    outside = False
    best = None
    for r in allowed:
        if r == "":
            outside = True
            continue
        if _under(t, r) and (best is None or len(r) > len(best[0])):
            best = (r, outside)
    if best is None:
        raise _refuse(shown, anchor, "leads through a symbolic link outside the campaign directory")
    if best[1]:
        from ...errors import OUTSIDE_FILES
        OUTSIDE_FILES.update((shown, t))
    return t, best[0]


def _link_target(d: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=d)
    except OSError:
        return None


class _Where:
    """An anchored folder descriptor and the final name in it (close with `close`)."""
    __slots__ = ("fd", "name", "folder", "anchor", "allowed", "shown")

    def __init__(self, fd, name, folder, anchor, allowed, shown):
        self.fd, self.name, self.folder = fd, name, folder
        self.anchor, self.allowed, self.shown = anchor, allowed, shown

    def close(self) -> None:
        os.close(self.fd)

    def path(self) -> str:
        return os.path.join(self.folder, self.name)


def _walk(path, *, mkdir: bool = False, follow: bool = True, mode: int = 0o777,
          allowed: list[str] | None = None) -> _Where:
    """The anchored folder of `path`'s final name: every folder opened relative to the one before with
    O_NOFOLLOW; a link on the way (and the final name when `follow`) is read and walked again from
    the root its target lies under (refused outside the admitted roots); `mkdir` creates missing
    folders. A path under no root: its folder opened as named."""
    shown = str(path)
    a = os.path.abspath(path)
    anchor = anchor_of(a)
    if anchor is None:
        folder, name = os.path.split(a)
        if mkdir:
            os.makedirs(folder, exist_ok=True)
        return _Where(os.open(folder, _DIR), name, folder, None, None, shown)
    root = anchor
    hops = 0
    while True:
        rel = a[len(root):].strip("/")
        parts = rel.split("/") if rel else []
        if not parts:                       # a root itself: named by the person, its folder as named
            folder, name = os.path.split(root)
            return _Where(os.open(folder, _DIR), name, folder, None, None, shown)
        fd = os.open(root, _DIR)
        folder = root
        restart = None
        try:
            for i, comp in enumerate(parts[:-1]):
                try:
                    nfd = os.open(comp, _NOFOLLOW_DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not mkdir:
                        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown) from None
                    try:
                        os.mkdir(comp, mode, dir_fd=fd)
                    except FileExistsError:
                        pass
                    nfd = os.open(comp, _NOFOLLOW_DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise OSError(exc.errno, exc.strerror, shown) from None
                    t = _link_target(fd, comp)
                    if t is None:
                        raise OSError(exc.errno, exc.strerror, shown) from None
                    restart = os.path.join(os.path.normpath(os.path.join(folder, t)), *parts[i + 1:])
                    break
                os.close(fd)
                fd = nfd
                folder = os.path.join(folder, comp)
            else:
                name = parts[-1]
                t = _link_target(fd, name) if follow else None
                if t is None:
                    return _Where(fd, name, folder, anchor, allowed, shown)
                restart = os.path.normpath(os.path.join(folder, t))
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        hops += 1
        if hops > _MAX_LINKS:
            raise _refuse(shown, anchor, "passes too many symbolic links (a loop?)")
        if allowed is None:
            allowed = _allowed(anchor)
        a, root = _admit(shown, restart, anchor, allowed)


def _nofollow(w: _Where) -> int:
    """O_NOFOLLOW for an anchored final name; the person's own file is opened as they named it."""
    return os.O_NOFOLLOW if w.anchor is not None else 0


def _raise_named(exc: OSError, shown: str, anchor: str | None):
    if exc.errno == errno.ELOOP and anchor is not None:     # the final name became a link after the check
        return _refuse(shown, anchor, "is a symbolic link")
    return OSError(exc.errno, exc.strerror or str(exc), shown)


def _flags(mode: str) -> int:
    plus = "+" in mode
    if "r" in mode:
        f = os.O_RDWR if plus else os.O_RDONLY
    elif "w" in mode:
        f = (os.O_RDWR if plus else os.O_WRONLY) | os.O_CREAT | os.O_TRUNC
    elif "a" in mode:
        f = (os.O_RDWR if plus else os.O_WRONLY) | os.O_CREAT | os.O_APPEND
    elif "x" in mode:
        f = (os.O_RDWR if plus else os.O_WRONLY) | os.O_CREAT | os.O_EXCL
    else:
        raise ValueError(f"mode {mode!r}")
    return f | os.O_CLOEXEC
