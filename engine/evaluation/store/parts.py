"""Writing a run's Parquet part: rows of whole topics in trec_eval order, row groups cut at topic
starts, each topic's rows and row group recorded for the index."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...formats.runs import run_heads
from ...util.arrowbuf import numpy_arrow
from .heads import HeadWriter
from .layout import _ENCODING, COMPRESSION, SCHEMA


def _topic_index(n: int, starts: np.ndarray) -> np.ndarray:
    """0-based index of each of `n` rows' topic (`starts`: the topics' first rows, the first at 0)."""
    t_code = np.zeros(n, np.int64)
    t_code[starts[1:]] = 1
    return np.cumsum(t_code, out=t_code)


def _positions(n: int, starts: np.ndarray) -> np.ndarray:
    """1-based position of each of `n` rows within its topic (`starts`: the topics' first rows)."""
    if n == 0:
        return np.zeros(0, np.int32)
    pos = np.ones(n, np.int32)
    pos[starts[1:]] = (1 - np.diff(starts)).astype(np.int32)
    return np.cumsum(pos, dtype=np.int32)


class _PartWriter:
    """Writes a part row group by row group from tables of whole topics in trec_eval order: a row group
    is closed at the first topic start once it holds `group_rows` rows or more; records each topic's
    rows and row group for the index."""

    def __init__(self, path, tag: str, source: str, group_rows: int):
        meta = {b"cranfield.run": tag.encode("utf-8"), b"cranfield.source": source.encode("utf-8")}
        self.wr = pq.ParquetWriter(path, SCHEMA.with_metadata(meta), compression=COMPRESSION,
                                   use_dictionary=["topic"], column_encoding=_ENCODING,
                                   write_statistics=["topic"], write_page_checksum=True)
        self.group_rows = group_rows
        self.pending: list[pa.Table] = []
        self.acc = self.rg = self.rows = 0
        self.topics: list[str] = []
        self.topic_rows: list[int] = []
        self.topic_rg: list[int] = []
        self.head = HeadWriter(tag, source)         # the first rows of each ranking, for pools (heads.py)

    def add(self, tab: pa.Table, starts: np.ndarray | None = None) -> None:
        """Append `tab` (topic, doc, score, rank; whole topics, each in trec_eval order; `starts`: the
        topics' first rows when known)."""
        topic = tab.column("topic")
        n = len(tab)
        if starts is None:
            starts = run_heads(topic) if n else np.zeros(0, np.int64)
        out = pa.table({"topic": topic, "doc": tab.column("doc"), "score": tab.column("score"),
                        "rank": tab.column("rank"), "pos": numpy_arrow(_positions(n, starts))}, schema=SCHEMA)
        self.head.add(out, starts)
        cut = 0
        for s in starts.tolist():                       # cut row groups at topic starts
            if self.acc + s - cut >= self.group_rows:
                self._flush(out.slice(cut, s - cut))
                cut = s
            self.topic_rg.append(self.rg)
        if n:
            self.topics.extend(topic.take(numpy_arrow(starts)).to_pylist())
            self.topic_rows.extend(np.diff(np.append(starts, n)).tolist())
        if n > cut:
            self.pending.append(out.slice(cut))
            self.acc += n - cut
        self.rows += n

    def _flush(self, last: pa.Table | None = None) -> None:
        parts = self.pending + ([last] if last is not None and len(last) else [])
        if parts:
            t = pa.concat_tables(parts)
            self.wr.write_table(t, row_group_size=len(t))   # one row group
            self.rg += 1
        self.pending, self.acc = [], 0

    def close(self, sha: str) -> None:
        self._flush()
        self.wr.add_key_value_metadata({"cranfield.sha256": sha, "cranfield.rows": str(self.rows)})
        self.wr.close()
        self.head.close(sha)

    def entry(self) -> dict:
        return {"rows": int(self.rows), "topics": self.topics, "topic_rows": self.topic_rows,
                "topic_rg": self.topic_rg}
