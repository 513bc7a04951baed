"""Swapping a campaign path between the real file (or folder) and a symbolic link out, for the race tests
of issue 34 (tests/test_swap_race.py, benchmarks/fuzz.py --boundaries).

`Swap(target, outside)` parks a link to `outside` beside `target`; `flip()` exchanges the two names in
one step (renameat2 RENAME_EXCHANGE), so the real file's inode survives every swap and whatever a command
appended to it stays in it. `restore()` leaves the real entry (or what a command renamed over the link,
which is the newer content) at `target`. `HOOK` is a sitecustomize for the command's own process: at the
first use (open, mkdir, rename, listing, sqlite connect) of the target, before the system call, it flips
the target to the link -- the worst moment, after every check a command makes, for a deterministic test.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a: str, b: str) -> None:
    """Swap the names `a` and `b` atomically (both must exist)."""
    if _libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a, None, b)


def supported(folder: Path) -> bool:
    """True when this system and file system can exchange two names in one step."""
    a, b = folder / ".xa", folder / ".xb"
    try:
        a.write_text("a")
        b.symlink_to(a)
        exchange(str(a), str(b))
        return a.is_symlink() and b.read_text() == "a"
    except (OSError, AttributeError):
        return False
    finally:
        for p in (a, b):
            try:
                p.unlink()
            except OSError:
                pass


class Swap:
    """`target` (a campaign path) and a link to `outside` parked at `target`'s sibling `.swap-NAME`."""

    def __init__(self, target: Path, outside: Path):
        self.target, self.outside = Path(target), Path(outside)
        self.park = self.target.with_name(f".swap-{self.target.name}")
        if self.park.is_symlink() or self.park.exists():
            self.park.unlink()
        self.park.symlink_to(self.outside, target_is_directory=self.outside.is_dir())

    def flip(self) -> None:
        """One swap: the link takes the target's name and the real entry the parked name, or back.
        When a command renamed its own file over the link, the flip back finds that file parked: it is
        swapped in again (newer than the entry that was parked) and the link parked afresh."""
        if not os.path.lexists(self.target):
            return
        exchange(str(self.target), str(self.park))
        if not self.park.is_symlink() and not self.target.is_symlink():
            # target was a command's new file (it replaced our link): keep it, park a link again
            exchange(str(self.target), str(self.park))
            self._repark()

    def _repark(self) -> None:
        if self.park.is_dir() and not self.park.is_symlink():
            import shutil
            shutil.rmtree(self.park)
        else:
            self.park.unlink()
        self.park.symlink_to(self.outside, target_is_directory=self.outside.is_dir())

    def restore(self) -> None:
        """The real entry (or a command's newer one) at `target`, the link gone."""
        if self.target.is_symlink():
            if os.path.lexists(self.park) and not self.park.is_symlink():
                exchange(str(self.target), str(self.park))
            else:
                self.target.unlink()
        if os.path.lexists(self.park):
            if self.park.is_symlink():
                self.park.unlink()
            else:                               # a stale real entry: the target holds newer content
                import shutil
                shutil.rmtree(self.park) if self.park.is_dir() else self.park.unlink()


HOOK = r'''
"""Test hook (tests/_swap.py): flip CRANFIELD_TEST_SWAP's target to its parked link at its first use."""
import ctypes, json, os, sys
_spec = os.environ.get("CRANFIELD_TEST_SWAP")
if _spec:
    _s = json.loads(_spec)
    _t, _park, _name = _s["target"], _s["park"], os.path.basename(_s["target"])
    _libc = ctypes.CDLL(None, use_errno=True)
    _fn = _libc.renameat2
    _state = {"done": False, "busy": False}
    _EVENTS = {"open", "os.mkdir", "os.rename", "os.listdir", "os.scandir", "os.remove", "os.rmdir",
               "sqlite3.connect", "os.truncate", "shutil.copyfile", "os.chmod", "os.link", "os.symlink"}

    def _hits(p):
        if isinstance(p, int) or p is None:
            return False
        try:
            p = os.fsdecode(p)
        except TypeError:
            return False
        if os.path.isabs(p):
            p = os.path.normpath(p)
            return p == _t or p.startswith(_t + "/")
        return p == _name or p.startswith(_name + "/") or p.endswith("/" + _name)

    def _hook(event, args):
        if _state["done"] or _state["busy"] or event not in _EVENTS:
            return
        if not any(_hits(a) for a in (args[:1] if event == "open" else args[:2])):
            return
        _state["busy"] = True
        try:
            _state["done"] = True
            if os.path.lexists(_t):
                _fn(-100, os.fsencode(_t), -100, os.fsencode(_park), 2)
            else:
                os.rename(_park, _t)
        finally:
            _state["busy"] = False

    sys.addaudithook(_hook)
'''
