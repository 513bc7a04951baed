"""The campaign's columnar run store: run files ingested once into Parquet, read by run or by topic.

Layout, under `<campaign>/.cranfield-store/` (Hive partitioning, readable by pyarrow.dataset, Dask,
DuckDB or Spark as it is):

    runs/run=<tag>/part-<sha>.parquet   one file per run: topic, doc, score, rank, pos
    heads/run=<tag>/head-<sha>.parquet  the part's first 100 rows of each ranking, read by pools (heads.py)
    index.parquet                       run, topic, rows, row_group (one line per run and topic)
    manifest.json                       per source file: content hash, stat, tag, part, part size, rows,
                                        topics, warnings; the index's hash (the commit point)

Rows of a part are in trec_eval order: topic ascending (byte order), score descending, ties by
document id descending; `pos` is the 1-based position in that order (what measures use), `rank`
the file's own rank column. A row group holds whole topics (`ROW_GROUP_ROWS` rows or so), so one topic
or a block of topics is read without touching the rest. Problems are reported as the text readers
report them (file:line: what is wrong) and nothing is recorded for a file with problems.

Self-checking (issue 14): the manifest, written last with one atomic rename, is the single commit
point; parts are named by their source's content hash (a new part never overwrites one the old
manifest names) and unreferenced parts are removed only after the commit, so a kill between any two
writes leaves the old store or the new one. Freshness is by content hash: a file is re-hashed
whenever its size, mtime, ctime or inode differ from the manifest (ctime cannot be set back, so an
in-place edit that keeps size and mtime is still seen) and re-ingested when the hash differs. Every
part carries its run tag, source hash and row count in its footer and page checksums; a part whose
size, footer or pages do not match the manifest is re-ingested from its run file with a warning,
or refused naming the part and `cranfield ingest --rebuild`. The index is checked against its hash
and rebuilt from the manifest when it does not match.
"""
from __future__ import annotations

from .layout import (COMPRESSION, FORMAT, ROW_GROUP_ROWS, SCHEMA, STORE_DIR, StoreDamaged, store_dir)
from .manifest import file_sha256
from .ingest import CHUNK_BYTES, ingest_file
from .read import read_parts, to_frame
from .runstore import RunStore, SyncReport

__all__ = ["COMPRESSION", "FORMAT", "ROW_GROUP_ROWS", "SCHEMA", "STORE_DIR", "StoreDamaged", "store_dir",
           "file_sha256", "CHUNK_BYTES", "ingest_file", "read_parts", "to_frame", "RunStore", "SyncReport"]
