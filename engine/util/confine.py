"""Confinement: every file a campaign reads or writes lies inside its directory.

A path named in campaign.yaml (`runs.X.file`) and every file found in runs/, judgments/ and topics/
must resolve, symbolic links included, inside the campaign directory, unless it lies under a root
the person running the command granted (`person_roots`: `--allow-outside DIR`, CRANFIELD_ALLOW_OUTSIDE,
or `allow_outside:` in their own $XDG_CONFIG_HOME/cranfield/config.yaml). campaign.yaml's
`allow_outside:` only narrows those grants (and announces what the campaign expects): a campaign cannot
widen its own confinement. A refused file is never opened; an admitted outside file's errors name its
path and line, never its content (engine.errors.OUTSIDE_FILES). On a shared server a campaign directory is thus no
way to read another user's files.

`CAMPAIGN_PATHS` is the one list of the paths a campaign owns (campaign.yaml, runs/, judgments/ and its
log, leases, serve tokens and sources, pools/, docs/, topics/, truth/, the run store, the cache, exports/,
reports/, nuggets/, answers/, audit/ (judge audits: the canaries planted in pools));
`campaign_path(root, name, ...)` is the one way to reach them: it refuses, before anything is opened,
read or written, a path that a symbolic link (of the file or of any folder on the way) takes outside
the campaign. `confine_output(root, path)` does the same for an output path a user names inside the
campaign (report --out, judgments export --out).
"""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import OUTSIDE_FILES, FormatError, Problem

PERSON_ENV = "CRANFIELD_ALLOW_OUTSIDE"      # os.pathsep-separated roots (set by --allow-outside)


def person_config_path() -> Path:
    """The person's own configuration file: $XDG_CONFIG_HOME/cranfield/config.yaml (~/.config by default)."""
    return _config_path(os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))


@lru_cache(maxsize=16)
def _config_path(xdg: str | None, home: str | None) -> Path:
    """`person_config_path` for these values of XDG_CONFIG_HOME and HOME (asked on every anchored access)."""
    base = xdg or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "cranfield" / "config.yaml"


def person_roots() -> list[Path]:
    """The roots outside any campaign the person running the command granted, resolved: the folders of
    CRANFIELD_ALLOW_OUTSIDE (what `--allow-outside DIR` sets) and `allow_outside:` of their config file."""
    named = [x for x in os.environ.get(PERSON_ENV, "").split(os.pathsep) if x]
    cfg = person_config_path()
    try:
        import yaml
        data = yaml.safe_load(cfg.read_text(encoding="utf-8")) if cfg.is_file() else None
    except Exception:                   # noqa: BLE001 - an unreadable config grants nothing
        data = None
    if isinstance(data, dict) and isinstance(data.get("allow_outside"), list):
        named += [str(x) for x in data["allow_outside"]]
    return [Path(os.path.expanduser(x)).resolve() for x in named]


def _under(p: Path, r: Path) -> bool:
    return p == r or p.is_relative_to(r)


def allowed_roots(root: Path, config: dict) -> list[Path]:
    """The campaign directory, then the outside roots: those the person granted (`person_roots`),
    narrowed by campaign.yaml's `allow_outside` when it lists any (a listed root counts only as far as
    it lies under a granted one)."""
    person = person_roots()
    listed = []
    for r in config.get("allow_outside") or []:
        p = Path(os.path.expanduser(str(r)))
        listed.append((p if p.is_absolute() else Path(root) / p).resolve())
    if not listed:
        extra = person
    else:
        extra = [c for c in listed if any(_under(c, g) for g in person)]
        extra += [g for g in person if any(_under(g, c) for c in listed) and g not in extra]
    return [Path(root).resolve(), *extra]


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
    for i, r in enumerate(roots):
        if real == r or real.is_relative_to(r):
            if i:                       # admitted through a granted outside root: its content is not shown
                OUTSIDE_FILES.update((str(path), str(real)))
            return True
    return False


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
                       hint="copy the files into the campaign directory (not a link), or, if you mean to read "
                            "that folder, grant it yourself: --allow-outside DIR, or `allow_outside: [DIR]` in "
                            f"{person_config_path()} (campaign.yaml's allow_outside only narrows what you grant)")


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
    "serve_tokens": "judgments/serve-tokens.json",
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
    "audit": "audit",
}


@lru_cache(maxsize=64)
def _roots(root: str, mtime_ns: int, person: tuple[str, ...]) -> tuple[Path, ...]:
    cfg: dict = {}
    try:
        import yaml
        from . import fs
        text = fs.read_text(Path(root) / CAMPAIGN_PATHS["config"], _allowed=[])    # a link: no extra roots
        data = yaml.load(text,
                         Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))    # libyaml: ten times faster
        if isinstance(data, dict) and isinstance(data.get("allow_outside"), list):
            cfg = {"allow_outside": [str(x) for x in data["allow_outside"]]}
    except Exception:                   # noqa: BLE001 - an unreadable campaign.yaml allows no extra roots
        cfg = {}
    return tuple(allowed_roots(Path(root), cfg))


def campaign_roots(root: os.PathLike | str) -> list[Path]:
    """The campaign directory and its `allow_outside` roots (campaign.yaml read once per change). Every
    later access under `root` is anchored there (engine.util.fs)."""
    from . import fs
    fs.register(root)
    cfg = Path(root) / CAMPAIGN_PATHS["config"]
    try:
        st = cfg.lstat()
        stamp = st.st_mtime_ns if not cfg.is_symlink() or inside(cfg, [Path(root).resolve()]) else -1
    except OSError:
        stamp = 0
    if stamp == -1:                     # campaign.yaml itself leads outside: its roots are not trusted
        return [Path(root).resolve()]
    person = (os.environ.get(PERSON_ENV, ""), str(person_config_path()))
    return list(_roots(str(Path(root)), stamp, person))


def confine(root: os.PathLike | str, path: os.PathLike | str, what: str | None = None,
            roots: list[Path] | None = None) -> Path:
    """`path` (under the campaign `root`) unchanged, or a FormatError (nothing opened) when it resolves,
    through a symbolic link of the file or of a folder on the way, outside the campaign."""
    from . import fs
    r = Path(root)
    p = Path(path)
    fs.register(r)                      # every later access under the campaign is anchored there
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
    from . import fs
    d = campaign_path(root, name)
    if not fs.is_dir(d):
        return []
    rs = campaign_roots(root)
    return [confine(root, q, None, rs) for q in fs.glob(d, pattern)]


def confine_output(root: os.PathLike | str, path: os.PathLike | str) -> Path:
    """An output path the user named: when it lies inside the campaign directory (as written), it must
    also resolve inside it (no symbolic link out); elsewhere it is the user's choice."""
    r = Path(os.path.abspath(root))
    p = Path(os.path.abspath(path))
    if p == r or p.is_relative_to(r):
        confine(r, p)
    return Path(path)


from . import fs as _fs     # noqa: E402 - fs asks this module for the grants (no import back)
_fs.set_policy(sys.modules[__name__])
