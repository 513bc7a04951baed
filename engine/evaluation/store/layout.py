"""The run store's on-disk layout: its folder, part names and schema, the store format, and the
error and hook that every writer and reader of the store shares."""
from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pyarrow as pa

from ...errors import CranfieldError


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
