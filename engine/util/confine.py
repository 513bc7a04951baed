"""Confinement: every file a campaign reads or writes lies inside its directory.

A path named in campaign.yaml (`runs.X.file`) and every file found in runs/, judgments/ and topics/
must resolve, symbolic links included, inside the campaign directory, unless it lies under a root
the campaign names explicitly in `allow_outside: [/data/trec, ...]`. A refused file is never opened,
so no error message can show its content. On a shared server a campaign directory is thus no way to
read another user's files.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import FormatError, Problem


def allowed_roots(root: Path, config: dict) -> list[Path]:
    """The campaign directory and the roots listed under `allow_outside`, resolved."""
    out = [Path(root).resolve()]
    for r in config.get("allow_outside") or []:
        p = Path(os.path.expanduser(str(r)))
        out.append((p if p.is_absolute() else Path(root) / p).resolve())
    return out


def inside(path: Path, roots: list[Path]) -> bool:
    """True when `path`, symbolic links resolved, lies under one of `roots`."""
    try:
        real = Path(path).resolve()
    except (OSError, RuntimeError):       # a symlink loop
        return False
    return any(real == r or real.is_relative_to(r) for r in roots)


def refuse_outside(path: Path, roots: list[Path], source: str, what: str) -> None:
    """Raise a FormatError (never reading the file) when `path` resolves outside `roots`.
    `source` is where the path was named (campaign.yaml or the folder it was found in)."""
    if inside(path, roots):
        return
    link = " (through a symbolic link)" if _has_link(path, roots[0]) else ""
    raise FormatError(Problem(source, None, f"{what}: {path} lies outside the campaign directory{link}; "
                                            f"refused, not read"),
                      hint="copy the file into the campaign directory, or list its folder under "
                           "`allow_outside:` in campaign.yaml if it is meant to be shared")


def _has_link(path: Path, root: Path) -> bool:
    p = Path(path)
    for q in [p, *p.parents]:
        if q == root or q == q.parent:
            break
        if q.is_symlink():
            return True
    return False
