"""The run store's on-disk layout: its folder, part names and schema, the store format, and the
error and hook that every writer and reader of the store shares."""
from __future__ import annotations

import os
import stat
import urllib.parse
from pathlib import Path
from typing import Callable

import pyarrow as pa

from ...errors import CranfieldError
from ...util import fs


STORE_DIR = ".cranfield-store"
FORMAT = 4                    # 3: the per-topic lists of a manifest entry packed into strings;
                              # 4: parts' rank and pos columns delta-encoded (were dictionary-encoded)
ROW_GROUP_ROWS = 32_768       # rows per Parquet row group (whole topics); topic blocks: blocks.BLOCK_ROWS
COMPRESSION = "zstd"
_ENCODING = {"rank": "DELTA_BINARY_PACKED", "pos": "DELTA_BINARY_PACKED"}   # runs of +1 steps: ~0 bytes, fast
SCHEMA = pa.schema([("topic", pa.string()), ("doc", pa.string()), ("score", pa.float64()),
                    ("rank", pa.int64()), ("pos", pa.int32())])


def store_dir(root: os.PathLike | str) -> Path:
    """The campaign's run store folder, confined."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "store")


def _part_name(root: Path, tag: str, sha: str) -> Path:
    """A part's place: named by its run tag and its source's content hash (content-addressed, so a
    new part never overwrites one an older manifest names)."""
    return store_dir(root) / "runs" / f"run={urllib.parse.quote(tag, safe='')}" / f"part-{sha[:24]}.parquet"


class StoreDamaged(CranfieldError):
    """A part or index of the store does not match its manifest and cannot be re-ingested."""


def _rebuild_hint(root: Path) -> str:
    return f"run `cranfield ingest --rebuild {root}` to ingest every run file again"


def _step(label: str) -> None:
    """Called after every durable write of an ingest (part, index, manifest, removal), looked up as
    `layout._step` so that tests replace it here alone to simulate a kill between any two writes."""


def sweep(root: Path, keep: set[str], garbage: Callable[[int], bool], step: str | None = None) -> None:
    """Remove every entry under `root` whose mode (not followed: a link is itself garbage) `garbage` accepts
    and whose path `keep` does not name, calling `_step(step)` after each removal, then the folders left
    empty, deepest first (the store's garbage: parts and heads no manifest names, leftovers of killed
    writes). Entries that vanish or cannot be looked at meanwhile are left alone."""
    if not fs.is_dir(root):
        return
    modes: dict[Path, int] = {}
    for f in fs.rglob(root):
        try:
            modes[f] = fs.stat(f, follow=False).st_mode
        except (OSError, CranfieldError):
            continue
    for f, mode in modes.items():
        if garbage(mode) and str(f) not in keep:
            try:
                fs.unlink(f, missing_ok=False)
            except OSError:
                continue
            if step is not None:
                _step(step)
    for d in sorted((d for d, mode in modes.items() if stat.S_ISDIR(mode)), key=lambda d: -len(d.parts)):
        try:
            fs.rmdir(d)
        except OSError:
            pass
