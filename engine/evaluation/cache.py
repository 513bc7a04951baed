"""Per-campaign Parquet cache of evaluation results, under `<campaign>/.cranfield-cache/`.

An entry is keyed by a hash of the input files' fingerprints (path, size, mtime_ns, ctime_ns, inode), the measures,
the evaluation options and the engine code (version and the measure modules' fingerprints), so any
change to a run, a judgment file, the log or campaign.yaml selects a new entry. Old entries are
pruned (newest `KEEP` kept). A cache that cannot be read or written is bypassed, never fatal.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd
from ..util import fs

CACHE_DIR = ".cranfield-cache"
KEEP = 16
_ENGINE = Path(__file__).resolve().parents[1]


def fingerprint(paths: Iterable[os.PathLike | str]) -> list[tuple[str, int, int, int, int]]:
    """(path, size, mtime_ns, ctime_ns, inode) per file; a missing file is (path, -1, -1, -1, -1).
    ctime cannot be set back (utime sets mtime only), so an in-place edit that keeps the size and the
    modification time still selects a new entry (issue 14)."""
    out = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((str(Path(p).resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        except OSError:
            out.append((str(p), -1, -1, -1, -1))
    return out


_VALUE_PACKAGES = ("measures", "estimators", "ranking", "formats", "evaluation/store")   # every module of these
_VALUE_MODULES = ("evaluation/evaluate.py", "evaluation/seam.py", "evaluation/blocks.py",
                  "judgments/log.py", "campaign/campaign.py", "campaign/config.py")


def _code_fingerprint() -> list:
    """Version and fingerprints of every module that computes values (measures, estimators, the
    ranking kernel, readers and the evaluation paths)."""
    from ..version import __version__
    mods = ([p for pkg in _VALUE_PACKAGES for p in fs.glob(_ENGINE / pkg, "*.py")]
            + [_ENGINE / n for n in _VALUE_MODULES])
    return [__version__, fingerprint(mods)]


def cache_key(files: Iterable, measures: Any, options: Any, extra: Any = None) -> str:
    """Hex digest over input fingerprints, measures, options and engine code."""
    opts = options.__dict__ if hasattr(options, "__dict__") else options
    payload = json.dumps({"files": sorted(fingerprint(files)), "measures": measures, "options": opts,
                          "extra": extra, "code": _code_fingerprint()}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def cache_dir(root: os.PathLike | str) -> Path:
    """The campaign's cache folder, confined."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "cache")


def load_or_compute(root: os.PathLike | str, key: str, compute: Callable[[], pd.DataFrame],
                    prefix: str = "eval") -> pd.DataFrame:
    """The cached table for `key`, or `compute()` stored under it."""
    d = cache_dir(root)
    path = d / f"{prefix}-{key}.parquet"
    if fs.is_file(path):
        try:
            return _read(path)
        except Exception:
            pass  # unreadable entry: recompute and overwrite
    df = compute()
    try:
        fs.makedirs(d)
        gi = d / ".gitignore"
        if not fs.exists(gi):
            fs.atomic_write(gi, b"*\n")
        _write(path, df)
        _prune(d, prefix)
    except OSError:
        pass  # read-only campaign: no caching
    return df


def read_tables(root: os.PathLike | str, key: str, names: tuple[str, ...], prefix: str) -> dict[str, pd.DataFrame] | None:
    """The cached tables `names` stored under `key` (one Parquet file each, `write_tables`), or None when
    any is missing or unreadable."""
    d = cache_dir(root)
    paths = {n: d / f"{prefix}-{key}-{n}.parquet" for n in names}
    if not all(fs.is_file(p) for p in paths.values()):
        return None
    try:
        return {n: _read(p) for n, p in paths.items()}
    except Exception:
        return None  # unreadable entry: the caller computes and writes it again


def write_tables(root: os.PathLike | str, key: str, tables: dict[str, pd.DataFrame], prefix: str) -> None:
    """Store `tables` under `key` for `read_tables` (the newest KEEP entries of `prefix` kept); a
    campaign that cannot be written is not cached."""
    d = cache_dir(root)
    try:
        fs.makedirs(d)
        gi = d / ".gitignore"
        if not fs.exists(gi):
            fs.atomic_write(gi, b"*\n")
        for n, df in tables.items():
            _write(d / f"{prefix}-{key}-{n}.parquet", df)
        _prune(d, prefix, KEEP * len(tables))
    except OSError:
        pass  # read-only campaign: no caching


def _write(path: Path, df: pd.DataFrame) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"cranfield.attrs"] = json.dumps(df.attrs, default=str).encode("utf-8")
    table = table.replace_schema_metadata(meta)
    with fs.atomic_proc_path(path) as tmp:
        pq.write_table(table, tmp)


def _read(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    with fs.proc_path(path) as name:
        table = pq.read_table(name)
    df = table.to_pandas()
    raw = (table.schema.metadata or {}).get(b"cranfield.attrs")
    df.attrs = json.loads(raw) if raw else {}
    return df


def _prune(d: Path, prefix: str, keep: int = KEEP) -> None:
    entries = sorted(fs.glob(d, f"{prefix}-*.parquet"), key=lambda p: fs.stat(p).st_mtime_ns, reverse=True)
    for p in entries[keep:]:
        try:
            fs.unlink(p)
        except OSError:
            pass


def clear(root: os.PathLike | str) -> int:
    """Delete every cache entry of a campaign; returns how many were removed."""
    n = 0
    for p in fs.glob(cache_dir(root), "*.parquet"):
        fs.unlink(p)
        n += 1
    return n


def cached_evaluate(campaign, measures, options) -> pd.DataFrame:
    """`engine.evaluation.evaluate` over a campaign's runs and merged judgments, through the cache."""
    gains = campaign.gains()
    key = cache_key(campaign.input_files(), list(measures) if measures is not None else None, options,
                    extra={"gains": sorted(gains.items())})
    return load_or_compute(campaign.root, key, lambda: evaluate_campaign(campaign, measures, options))


def evaluate_campaign(campaign, measures, options, progress=None) -> pd.DataFrame:
    """A campaign's long table of `measures` (engine.evaluation.evaluate_campaign, uncached)."""
    from .seam import evaluate_campaign as evaluate
    return evaluate(campaign, measures, options=options, progress=progress).table
