"""Confinement: every file a campaign reads or writes lies inside its directory.

A path named in campaign.yaml (`runs.X.file`) and every file found in runs/, judgments/ and topics/
must resolve, symbolic links included, inside the campaign directory, unless it lies under a root
the campaign names explicitly in `allow_outside: [/data/trec, ...]`. A refused file is never opened,
so no error message can show its content. On a shared server a campaign directory is thus no way to
read another user's files.

`CAMPAIGN_PATHS` is the one list of the paths a campaign owns (campaign.yaml, runs/, judgments/ and its
log, leases and sources, pools/, docs/, topics/, truth/, the run store, the cache, exports/, reports/, nuggets/,
answers/);
`campaign_path(root, name, ...)` is the one way to reach them: it refuses, before anything is opened,
read or written, a path that a symbolic link (of the file or of any folder on the way) takes outside
the campaign. `confine_output(root, path)` does the same for an output path a user names inside the
campaign (report --out, judgments export --out).
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..errors import FormatError, Problem


def allowed_roots(root: Path, config: dict) -> list[Path]:
    """The campaign directory and the roots listed under `allow_outside`, resolved."""
    out = [Path(root).resolve()]
    for r in config.get("allow_outside") or []:
        p = Path(os.path.expanduser(str(r)))
        out.append((p if p.is_absolute() else Path(root) / p).resolve())
    return out


def _real(path: Path) -> Path | None:
    """`path` with symbolic links resolved, or None for a symlink loop."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):       # a symlink loop
        return None


def real_paths(paths) -> list[Path | None]:
    """Each of `paths` as `Path.resolve` gives it (None for a symlink loop), each folder on the way
    resolved once: a name that is no symbolic link is its resolved folder joined with the name (one
    lstat), a link (or a path through `..`) is resolved whole. For a folder's files in one pass."""
    folders: dict[str, Path | None] = {}
    out: list[Path | None] = []
    for p in map(Path, paths):
        name = p.name
        if not name or ".." in p.parts or os.path.islink(p):
            out.append(_real(p))
            continue
        key = str(p.parent)
        if key not in folders:
            folders[key] = _real(p.parent)
        d = folders[key]
        out.append(None if d is None else d / name)
    return out


def inside(path: Path, roots: list[Path], real: Path | None = None) -> bool:
    """True when `path`, symbolic links resolved, lies under one of `roots` (`real`: `path` already
    resolved, e.g. by `real_paths`)."""
    real = real if real is not None else _real(path)
    if real is None:
        return False
    return any(real == r or real.is_relative_to(r) for r in roots)


def refuse_outside(path: Path, roots: list[Path], source: str, what: str, real: Path | None = None) -> None:
    """Raise a FormatError (never reading the file) when `path` resolves outside `roots`.
    `source` is where the path was named (campaign.yaml or the folder it was found in); `real`: `path`
    already resolved (`real_paths`)."""
    if not inside(path, roots, real):
        raise _outside(path, roots[0], source, f"{what}: {path}")


def _outside(path: Path, root: Path, source: str, what: str) -> FormatError:
    """The one refusal of a path outside the campaign (`source`: where it was named or found)."""
    link = " (through a symbolic link)" if _has_link(Path(path), Path(root)) else ""
    return FormatError(Problem(source, None, f"{what} lies outside the campaign directory{link}; refused, nothing "
                                             f"read or written"),
                       hint="copy the files into the campaign directory (not a link), or list the folder under "
                            "`allow_outside:` in campaign.yaml if it is meant to be shared")


def _has_link(path: Path, root: Path) -> bool:
    p = Path(path)
    for q in [p, *p.parents]:
        if q == root or q == q.parent:
            break
        if q.is_symlink():
            return True
    return False


# name -> path relative to the campaign directory: every file or folder a campaign reads or writes
CAMPAIGN_PATHS: dict[str, str] = {
    "config": "campaign.yaml",
    "runs": "runs",
    "topics": "topics",
    "judgments": "judgments",
    "log": "judgments/log.jsonl",
    "leases": "judgments/leases.jsonl",
    "sources": "judgments/sources",
    "pools": "pools",
    "pool_log": "pools/pools.log.jsonl",
    "docs": "docs",
    "store": ".cranfield-store",
    "cache": ".cranfield-cache",
    "truth": "truth",
    "exports": "exports",
    "reports": "reports",
    "nuggets": "nuggets",
    "answers": "answers",
}


@lru_cache(maxsize=64)
def _roots(root: str, mtime_ns: int) -> tuple[Path, ...]:
    cfg: dict = {}
    try:
        import yaml
        data = yaml.load((Path(root) / CAMPAIGN_PATHS["config"]).read_text(encoding="utf-8"),
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))    # libyaml: ten times faster
        if isinstance(data, dict) and isinstance(data.get("allow_outside"), list):
            cfg = {"allow_outside": [str(x) for x in data["allow_outside"]]}
    except Exception:                   # noqa: BLE001 - an unreadable campaign.yaml allows no extra roots
        cfg = {}
    return tuple(allowed_roots(Path(root), cfg))


def campaign_roots(root: os.PathLike | str) -> list[Path]:
    """The campaign directory and its `allow_outside` roots (campaign.yaml read once per change)."""
    cfg = Path(root) / CAMPAIGN_PATHS["config"]
    try:
        st = cfg.lstat()
        stamp = st.st_mtime_ns if not cfg.is_symlink() or inside(cfg, [Path(root).resolve()]) else -1
    except OSError:
        stamp = 0
    if stamp == -1:                     # campaign.yaml itself leads outside: its roots are not trusted
        return [Path(root).resolve()]
    return list(_roots(str(Path(root)), stamp))


def confine(root: os.PathLike | str, path: os.PathLike | str, what: str | None = None,
            roots: list[Path] | None = None) -> Path:
    """`path` (under the campaign `root`) unchanged, or a FormatError (nothing opened) when it resolves,
    through a symbolic link of the file or of a folder on the way, outside the campaign."""
    r = Path(root)
    p = Path(path)
    rs = roots if roots is not None else campaign_roots(r)
    if not inside(p, rs):
        try:
            rel = p.relative_to(r)
        except ValueError:
            rel = p
        raise _outside(p, r, str(p), what or str(rel))
    return p


def campaign_path(root: os.PathLike | str, name: str, *parts: str, roots: list[Path] | None = None) -> Path:
    """The campaign path `name` of CAMPAIGN_PATHS (joined with `parts`), refused when a symbolic link
    takes it outside the campaign (see `confine`). KeyError for a name not in the list."""
    rel = CAMPAIGN_PATHS[name]
    p = Path(root) / rel
    if parts:
        p = p.joinpath(*parts)
    return confine(root, p, None, roots)


def campaign_files(root: os.PathLike | str, name: str, pattern: str = "*") -> list[Path]:
    """The files of the campaign folder `name` matching `pattern` (sorted), each confined."""
    d = campaign_path(root, name)
    if not d.is_dir():
        return []
    rs = campaign_roots(root)
    return [confine(root, q, None, rs) for q in sorted(d.glob(pattern))]


def confine_output(root: os.PathLike | str, path: os.PathLike | str) -> Path:
    """An output path the user named: when it lies inside the campaign directory (as written), it must
    also resolve inside it (no symbolic link out); elsewhere it is the user's choice."""
    r = Path(os.path.abspath(root))
    p = Path(os.path.abspath(path))
    if p == r or p.is_relative_to(r):
        confine(r, p)
    return Path(path)
