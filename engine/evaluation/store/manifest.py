"""The run store's manifest (its commit point): source keys, content hashes and stat keys, the packed
per-topic lists of an entry, and which manifests are used."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from .layout import FORMAT
from ...util import fs


def _stat_key(st: os.stat_result) -> list:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def file_sha256(path: os.PathLike | str) -> str:
    from engine.formats.files import regular_file
    regular_file(path)
    with fs.open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _source_key(path: Path) -> str:
    return str(path.resolve())


def _pack_topics(e: dict) -> dict:
    """A manifest entry with its per-topic lists (ingest_file's topics, topic_rows, topic_rg) packed:
    topics joined by spaces (a topic id holds no whitespace; no JSON escapes, which would make the
    nesting check scan characters), the integers as base64 of little-endian int64 / int32, so the
    manifest every command reads parses in milliseconds at any size."""
    import base64
    if e.get("tag") is None or isinstance(e.get("topics"), str):
        return e
    return {**e, "topics": " ".join(e["topics"]),
            "topic_rows": base64.b64encode(np.asarray(e["topic_rows"], "<i8").tobytes()).decode("ascii"),
            "topic_rg": base64.b64encode(np.asarray(e["topic_rg"], "<i4").tobytes()).decode("ascii")}


def _unpack_topics(e: dict) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(topics, rows, row groups) of a packed manifest entry; ValueError when they do not agree."""
    import base64
    topics = e["topics"].split(" ") if e["topics"] else []
    rows = np.frombuffer(base64.b64decode(e["topic_rows"], validate=True), "<i8")
    rg = np.frombuffer(base64.b64decode(e["topic_rg"], validate=True), "<i4")
    if not (len(topics) == len(rows) == len(rg)) or int(rows.sum()) != e.get("rows"):
        raise ValueError("per-topic lists do not agree")
    return topics, rows.astype(np.int64), rg.astype(np.int32)


def _empty_manifest() -> dict:
    return {"format": FORMAT, "files": {}, "index_sha256": None}


def _valid_manifest(m) -> bool:
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("files"), dict):
        return False
    for e in m["files"].values():
        if not isinstance(e, dict) or not isinstance(e.get("sha256"), str):
            return False
        if e.get("tag") is not None:
            if not (isinstance(e.get("part"), str) and isinstance(e.get("rows"), int)
                    and all(isinstance(e.get(k), str) for k in ("topics", "topic_rows", "topic_rg"))):
                return False
            k = e["topics"].count(" ") + 1 if e["topics"] else 0     # sizes only: decoded when the index is built
            if len(e["topic_rows"]) != 4 * -(-8 * k // 3) or len(e["topic_rg"]) != 4 * -(-4 * k // 3):
                return False
    return True


def _manifest_refused(m) -> str:
    """Why a manifest `_valid_manifest` refused is not used: from an earlier or later store format
    (not damaged), or damaged; every run file is ingested again either way."""
    f = m.get("format") if isinstance(m, dict) else None
    if isinstance(f, int) and not isinstance(f, bool) and f != FORMAT:
        when = "an earlier" if f < FORMAT else "a later"
        return (f"the run store is from {when} version of cranfield (store format {f}, this version reads "
                f"{FORMAT}); every run file is ingested again to rebuild it")
    return "the run store's manifest is damaged; every run file is ingested again"
