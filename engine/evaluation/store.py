"""The campaign's columnar run store: run files ingested once into Parquet, read by run or by topic.

Layout, under `<campaign>/.cranfield-store/` (Hive partitioning, readable by pyarrow.dataset, Dask,
DuckDB or Spark as it is):

    runs/run=<tag>/part-<sha>.parquet   one file per run: topic, doc, score, rank, pos
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

import hashlib
import json
import os
import time
import urllib.parse
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import CranfieldError, FormatError, Problem, Warnings
from ..ranking.order import arrow_run_order
from ..ranking.join import dict_codes
from ..formats.runs import run_heads
from ..util.arrowbuf import arrow_numpy, numpy_arrow

if TYPE_CHECKING:
    import pandas as pd             # imported where a table is made: `eval --campaign` reads parts without it

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


# --------------------------------------------------------------------------- ingest one file

def _order(tab: pa.Table) -> np.ndarray | None:
    """Row order topic asc, score desc, doc desc (byte order; ranking.trec_order); None when the rows
    already are."""
    return arrow_run_order(tab.column("topic"), tab.column("score"), tab.column("doc"))


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


CHUNK_BYTES = 16 * 2**20     # text parsed at a time by the streaming ingest (bounds a worker's memory)


class _NotStreamable(Exception):
    """The run file cannot be ingested chunk by chunk (not clean Arrow-parsable text in one run, gzip, a
    byte order mark, or topics not contiguous in byte order): it is ingested whole."""


def _parse(path: str, w: Warnings, raw: list[bytes] | None = None) -> tuple[str, pa.Table] | None:
    """(tag, table of topic, doc, score, rank, line) in file order, duplicates dropped and reported.
    `raw`: [the file's bytes], taken from the list so they are freed once Arrow has parsed them."""
    from ..formats.runs import arrow_run, read_run_arrays
    from ..formats.files import read_bytes

    data = read_bytes(path, raw.pop() if raw else None)
    fast = arrow_run(path, data)
    if fast is None:
        a = read_run_arrays(path, w, data=data)           # the validating reader: raises FormatError
        if a is None:
            return None
        tab = pa.table({"topic": pa.array(a["topic"], pa.string()), "doc": pa.array(a["doc"], pa.string()),
                        "score": pa.array(a["score"], pa.float64()), "rank": pa.array(a["rank"], pa.int64()),
                        "line": pa.array(a["line"], pa.int64())})
        return str(a["run"]), tab
    tag, t = fast
    del data
    tab = pa.table({"topic": t.column("topic"), "doc": t.column("doc"), "score": t.column("score"),
                    "rank": t.column("rank"), "line": pa.array(np.arange(1, len(t) + 1, dtype=np.int64))})
    dups = _Repeats(path)
    tab = dups.drop(tab)[0]
    dups.report(w)
    return tag, tab


class _Repeats:
    """Documents retrieved twice for a topic, dropped (the first line kept) table by table and reported
    once at the end as the text readers report them (the first 50 with their lines, then a count)."""

    def __init__(self, path: str):
        self.path, self.shown, self.count = path, [], 0

    def drop(self, tab: pa.Table, heads: np.ndarray | None = None, line0: int | None = None
             ) -> tuple[pa.Table, np.ndarray | None]:
        """(`tab` without its repeated rows, the mask of the rows dropped or None). `heads`: see
        `_duplicates`; `line0`: the line of the first row when the rows are consecutive lines (else
        `tab` has a `line` column)."""
        dup = _duplicates(tab, heads)
        if dup is None:
            return tab, None
        idx = np.flatnonzero(dup)
        room = idx[:max(0, 50 - len(self.shown))]
        if len(room):
            lines = (tab.column("line").to_numpy() if line0 is None
                     else np.arange(line0, line0 + len(tab), dtype=np.int64))
            first = _first_lines(tab, room, lines)
            docs, topics = tab.column("doc"), tab.column("topic")
            for i in room:
                t, d = topics[int(i)].as_py(), docs[int(i)].as_py()
                self.shown.append((self.path, int(lines[i]), d, t, first.get((t, d), "?")))
        self.count += len(idx)
        return tab.filter(pa.array(~dup)), dup

    def report(self, w: Warnings) -> None:
        if self.count:
            from ..formats.runs import warn_repeated_docs
            warn_repeated_docs(w, self.shown, self.count - len(self.shown), self.path)


DUP_SLICE_ROWS = 32_768       # rows hashed at a time by the repeated-document check (cache-sized)
_WORD_BYTES = 64              # document ids up to this long are keyed by their 64-bit words (`_repeat_candidates`)


def _duplicates(tab: pa.Table, heads: np.ndarray | None = None) -> np.ndarray | None:
    """Rows whose (topic, doc) occurred on an earlier line, or None when there are none. `heads`: the
    first rows of the topics when each topic's rows are contiguous (and document ids hold no NUL byte,
    as the text readers ensure); then only rows whose (topic, id) key repeats are checked
    (`_repeat_candidates`), or, for longer ids, slices of whole topics of about `DUP_SLICE_ROWS` rows
    (small hash tables)."""
    n = len(tab)
    if heads is not None and n > 1:
        cand = _repeat_candidates(tab.column("doc"), heads)
        if cand is not None:
            d = _duplicate_rows(tab.take(numpy_arrow(cand))) if len(cand) else None
            if d is None:
                return None
            dup = np.zeros(n, bool)
            dup[cand[d]] = True
            return dup
    if heads is not None and n > 2 * DUP_SLICE_ROWS:
        at = np.searchsorted(heads, np.arange(DUP_SLICE_ROWS, n, DUP_SLICE_ROWS))
        cuts = np.unique(np.concatenate(([0], heads[at[at < len(heads)]], [n])))
        dup = None
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            d = _duplicates(tab.slice(a, b - a))
            if d is not None:
                if dup is None:
                    dup = np.zeros(n, bool)
                dup[a:b] = d
        return dup
    return _duplicate_rows(tab)


def _repeat_candidates(doc: pa.ChunkedArray | pa.Array, heads: np.ndarray) -> np.ndarray | None:
    """Rows whose (topic, document) 64-bit key (`ranking.join.pair_keys` of the ids' words) occurs more
    than once (`heads`: the first rows of the topics, each topic's rows contiguous): a superset of the
    repeated documents and their earlier lines, usually empty. None when an id is longer than
    `_WORD_BYTES` (the padded ids would take too much memory)."""
    from ..ranking.join import id_words, pair_keys
    from ..util.arrowbuf import arrow_bytes
    if pc.max(pc.binary_length(doc)).as_py() > _WORD_BYTES:
        return None
    key = pair_keys(_topic_index(len(doc), heads), id_words(arrow_bytes(doc, multiple=8, copy=False)))
    s = np.sort(key)
    same = s[1:] == s[:-1]
    if not same.any():
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.isin(key, s[1:][same]))


def _duplicate_rows(tab: pa.Table) -> np.ndarray | None:
    """`_duplicates` on one table: dictionary codes are handed out in order of first appearance, so
    only rows whose document code is not above every earlier one repeat a document; only the rows of
    such documents are keyed by (topic, doc)."""
    n = len(tab)
    if n < 2:
        return None
    enc = pc.dictionary_encode(tab.column("doc"))
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    d = enc.indices.to_numpy()
    new = np.empty(n, bool)
    new[0] = True
    np.greater(d[1:], np.maximum.accumulate(d)[:-1], out=new[1:])
    if new.all():
        return None
    again = np.zeros(len(enc.dictionary), bool)
    again[d[~new]] = True
    rows = np.flatnonzero(again[d])                    # every line of a document seen twice
    tenc = pc.dictionary_encode(tab.column("topic").take(pa.array(rows)))
    tenc = tenc.combine_chunks() if isinstance(tenc, pa.ChunkedArray) else tenc
    key = tenc.indices.to_numpy().astype(np.int64) * len(enc.dictionary) + d[rows]
    order = np.argsort(key, kind="stable")             # a repeat right after its first occurrence
    ks = key[order]
    same = ks[1:] == ks[:-1]
    if not same.any():
        return None
    dup = np.zeros(n, bool)
    dup[rows[order[1:][same]]] = True
    return dup


def _first_lines(tab: pa.Table, idx: np.ndarray, lines: np.ndarray) -> dict:
    """(topic, doc) -> line of its first occurrence, for the repeated rows `idx` (`lines`: each row's
    line)."""
    want = {(tab.column("topic")[int(i)].as_py(), tab.column("doc")[int(i)].as_py()) for i in idx}
    docs = pa.array(sorted({d for _, d in want}), pa.string())
    m = pc.is_in(tab.column("doc"), value_set=docs).to_numpy(zero_copy_only=False)
    out: dict = {}
    sub = tab.filter(pa.array(m))
    for t, d, ln in zip(sub.column("topic").to_pylist(), sub.column("doc").to_pylist(),
                        lines[m].tolist()):
        if (t, d) in want and (t, d) not in out:
            out[(t, d)] = ln
    return out


def _stat_key(st: os.stat_result) -> list:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def file_sha256(path: os.PathLike | str) -> str:
    from engine.formats.files import regular_file
    regular_file(path)
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


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

    def add(self, tab: pa.Table, starts: np.ndarray | None = None) -> None:
        """Append `tab` (topic, doc, score, rank; whole topics, each in trec_eval order; `starts`: the
        topics' first rows when known)."""
        topic = tab.column("topic")
        n = len(tab)
        if starts is None:
            starts = run_heads(topic) if n else np.zeros(0, np.int64)
        out = pa.table({"topic": topic, "doc": tab.column("doc"), "score": tab.column("score"),
                        "rank": tab.column("rank"), "pos": numpy_arrow(_positions(n, starts))}, schema=SCHEMA)
        cut = 0
        for s in starts.tolist():                       # cut row groups at topic starts
            if self.acc + s - cut >= self.group_rows:
                self._flush(out.slice(cut, s - cut))
                cut = s
            self.topic_rg.append(self.rg)
        if n:
            self.topics.extend(topic.take(pa.array(starts)).to_pylist())
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

    def entry(self) -> dict:
        return {"rows": int(self.rows), "topics": self.topics, "topic_rows": self.topic_rows,
                "topic_rg": self.topic_rg}


def _in_trec_order(tab: pa.Table, heads: np.ndarray | None = None) -> pa.Table:
    """`tab` in trec_eval order (unchanged when it already is); `heads`: the first rows of its topics
    when they already come in byte order, each in one run of rows."""
    if heads is None:
        order = _order(tab)
        return tab if order is None else tab.take(numpy_arrow(order))
    from ..ranking.order import arrow_tie_order, order_rows, trec_order
    n = len(tab)
    order = trec_order(np.zeros(n, np.int64), _topic_index(n, heads), arrow_numpy(tab.column("score")), len(heads),
                       arrow_tie_order(tab.column("doc")))
    if order is None:
        return tab
    perm = numpy_arrow(order_rows(order, n))
    if isinstance(order, tuple):         # only rows tied on score moved, within their topic
        return tab.set_column(tab.schema.get_field_index("doc"), "doc", tab.column("doc").take(perm)) \
                  .set_column(tab.schema.get_field_index("rank"), "rank", tab.column("rank").take(perm))
    return tab.take(perm)


def _text_chunks(fh, h, size: int):
    """Pieces of whole lines of about `size` bytes read from `fh`, every byte also fed to hash `h`;
    the first piece is refused (_NotStreamable) when it starts as gzip data or with a byte order mark."""
    first = True
    while True:
        text = fh.read(size)
        if first and (text[:2] == b"\x1f\x8b" or text[:3] == b"\xef\xbb\xbf"):
            raise _NotStreamable
        first = False
        if not text:
            return
        if text[-1:] != b"\n":
            text += fh.readline()                      # complete the last line
        h.update(text)
        yield text


def _parsed_pieces(path: str, texts):
    """(tag, table) of each text piece, parsed by the Arrow fast path of the text reader; _NotStreamable
    for a piece it does not take."""
    from ..formats.runs import arrow_run
    for text in texts:
        fast = arrow_run(path, text)
        del text
        if fast is None:
            raise _NotStreamable
        yield fast


def _ingest_stream(path: str, tmp: Path, group_rows: int, w: Warnings) -> dict:
    """Ingest a clean run file whose topics come in byte order, one text piece at a time (memory bounded
    by `CHUNK_BYTES` and the largest topic): each piece read and hashed (in a thread, one piece ahead),
    parsed by the Arrow fast path of the text reader, the rows of its complete topics de-duplicated,
    put in trec_eval order and written. Raises _NotStreamable for any other file."""
    from contextlib import closing
    from ..util.parallel import produced_ahead
    if str(path).endswith(".gz"):
        raise _NotStreamable
    h = hashlib.sha256()
    tag, pw, line0 = None, None, 1
    carry: list[pa.Table] = []                            # the rows of the last topic so far, not copied
    carry_topic: str | None = None
    carry_rows, carry_line0 = 0, 1
    dups = _Repeats(path)

    def emit(seg: pa.Table, heads: np.ndarray, first_line: int) -> None:
        seg, dropped = dups.drop(seg, heads, first_line)
        if dropped is not None:                           # a topic's first row is never a repeat
            heads = (np.cumsum(~dropped) - 1)[heads]
        pw.add(_in_trec_order(seg, heads), heads)

    try:
        with open(path, "rb") as fh, closing(produced_ahead(_text_chunks(fh, h, CHUNK_BYTES))) as texts:
            for ptag, t in _parsed_pieces(path, texts):
                if tag is not None and ptag != tag:
                    raise _NotStreamable
                if pw is None:
                    tag = ptag
                    pw = _PartWriter(tmp, tag, str(path), group_rows)
                n = len(t)
                cur = t.select(["topic", "doc", "score", "rank"])
                del t
                heads = run_heads(cur.column("topic"))    # of this piece alone: each row scanned once
                hv = cur.column("topic").take(numpy_arrow(heads))
                if len(hv) > 1 and not pc.all(pc.less(hv.slice(0, len(hv) - 1), hv.slice(1))).as_py():
                    raise _NotStreamable                  # topics not contiguous in byte order
                first = hv[0].as_py()
                same = first == carry_topic               # the piece goes on with the carried topic
                if carry_topic is not None and not same and first < carry_topic:
                    raise _NotStreamable                  # (str order is UTF-8 byte order)
                last = int(heads[-1])
                if same and last == 0:
                    carry.append(cur)                     # still the carried topic: kept, not concatenated
                    carry_rows += n
                else:                                     # the carried topic and this piece's complete ones
                    seg_heads = (np.concatenate(([0], carry_rows + heads[1 if same else 0:-1])) if carry_rows
                                 else heads[:-1])
                    seg = pa.concat_tables([*carry, cur.slice(0, last)])
                    if len(seg):
                        emit(seg, seg_heads, carry_line0)
                    carry, carry_topic = [cur.slice(last)], hv[-1].as_py()
                    carry_rows, carry_line0 = n - last, line0 + last
                    del seg
                line0 += n
                del cur
            if pw is None:
                raise _NotStreamable                      # empty: the text reader words it
            if carry:
                emit(pa.concat_tables(carry), np.zeros(1, np.int64), carry_line0)
            pw.close(h.hexdigest())
    except BaseException:
        if pw is not None:
            pw.wr.close()
        raise
    dups.report(w)
    return {"sha256": h.hexdigest(), "tag": tag, **pw.entry()}


def _ingest_whole(path: str, tmp: Path, group_rows: int, w: Warnings, raw: bytes) -> dict:
    """Ingest a run file read whole (any file the text readers accept; problems raise FormatError)."""
    sha = hashlib.sha256(raw).hexdigest()
    box = [raw]
    del raw                                        # _parse frees the text once it is parsed
    parsed = _parse(path, w, box)
    if parsed is None:
        return {"sha256": sha, "tag": None, "rows": 0}
    tag, tab = parsed
    pw = _PartWriter(tmp, tag, str(path), group_rows)
    try:
        pw.add(_in_trec_order(tab))
        del tab
        pw.close(sha)
    except BaseException:
        pw.wr.close()
        raise
    return {"sha256": sha, "tag": tag, **pw.entry()}


def ingest_file(path: str, part: str, group_rows: int = ROW_GROUP_ROWS) -> dict:
    """Parse one run file and write it as a Parquet part in trec_eval order. Returns its manifest entry
    (sha256 and stat of the source, tag, rows, topics, warnings, seconds) or {"problems": [...],
    "hint": ...} when the file is bad. Clean files with topics in byte order are streamed
    (`_ingest_stream`), others read whole."""
    t0 = time.perf_counter()
    from engine.formats.files import regular_file
    from ..util.atomic import atomic_path

    def failed(exc: Exception) -> dict:
        from ..util.atomic import write_failure
        if write_failure(exc, part):     # the part being written, not the run read, is at fault
            raise CranfieldError(write_failure(exc, part))
        if isinstance(exc, FormatError):
            return {"problems": [(p.path, p.line, p.message) for p in exc.problems], "hint": exc.hint}
        return {"problems": [(str(path), None, f"cannot be read ({exc.strerror or exc})")],
                "hint": "check that the file exists and is readable"}
    try:
        st = regular_file(path)
    except (FormatError, OSError) as exc:
        return failed(exc)
    w = Warnings()
    try:
        try:
            with atomic_path(part) as tmp:
                got = _ingest_stream(path, tmp, group_rows, w)
        except _NotStreamable:
            w = Warnings()
            raw = Path(path).read_bytes()
            with atomic_path(part) as tmp:
                got = _ingest_whole(path, tmp, group_rows, w, raw)
                if got["tag"] is None:
                    raise _NotStreamable                 # nothing to store
    except _NotStreamable:
        pass
    except (FormatError, OSError) as exc:
        return failed(exc)
    src = {"sha256": got["sha256"], "stat": _stat_key(st)}
    if got["tag"] is None:
        return {**src, "tag": None, "rows": 0, "warnings": [(p.path, p.line, p.message) for p in w]}
    _step("part")
    return {**src, "tag": got["tag"], "rows": got["rows"], "part_bytes": os.path.getsize(part),
            "topics": got["topics"], "topic_rows": got["topic_rows"], "topic_rg": got["topic_rg"],
            "warnings": [(p.path, p.line, p.message) for p in w], "seconds": round(time.perf_counter() - t0, 3)}


def _ingest_job(job: tuple[str, str]) -> dict:
    return ingest_file(*job)


# --------------------------------------------------------------------------- the store

@dataclass
class SyncReport:
    """What `sync` did: files ingested, reused and removed, with timings."""

    ingested: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rows: int = 0


def _source_key(path: Path) -> str:
    return str(path.resolve())


def _part_name(root: Path, tag: str, sha: str) -> Path:
    """A part's place: named by its run tag and its source's content hash (content-addressed, so a
    new part never overwrites one an older manifest names)."""
    return store_dir(root) / "runs" / f"run={urllib.parse.quote(tag, safe='')}" / f"part-{sha[:24]}.parquet"


def _step(label: str) -> None:
    """Called after every durable write of an ingest (part, index, manifest, removal). Tests replace
    it to simulate a kill between any two writes."""


class StoreDamaged(CranfieldError):
    """A part or index of the store does not match its manifest and cannot be re-ingested."""


def _rebuild_hint(root: Path) -> str:
    return f"run `cranfield ingest --rebuild {root}` to ingest every run file again"


class _Lock:
    """An exclusive lock on the store (fcntl), so two processes never ingest at the same time."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = None

    def __enter__(self):
        import fcntl
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


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


class RunStore:
    """The Parquet run store of one campaign directory (see the module docstring)."""

    def __init__(self, root: os.PathLike | str, warnings: Warnings | None = None):
        self.root = Path(root)
        self.dir = store_dir(self.root)
        self.warnings = warnings if warnings is not None else Warnings()
        self._manifest: dict | None = None
        self._index: pd.DataFrame | None = None
        self._verified: set[str] = set()
        self._footers: dict[str, pq.FileMetaData] = {}   # part path -> footer read by check_part

    # ------------------------------------------------------------------ manifest
    @property
    def manifest(self) -> dict:
        if self._manifest is None:
            try:
                from ..formats.safeload import loads_json
                m = loads_json((self.dir / "manifest.json").read_bytes(), str(self.dir / "manifest.json"))
            except (OSError, ValueError):
                m = None
            if m is not None and not _valid_manifest(m):
                self.warnings.add(str(self.dir / "manifest.json"), None, _manifest_refused(m))
                m = None
            self._manifest = m if m is not None else _empty_manifest()
        return self._manifest

    def _write_manifest(self, m: dict) -> None:
        """The commit point: one atomic rename of the whole manifest."""
        from ..util.atomic import atomic_write
        self.dir.mkdir(parents=True, exist_ok=True)
        gi = self.dir / ".gitignore"
        if not gi.exists():
            atomic_write(gi, b"*\n")
        atomic_write(self.dir / "manifest.json", json.dumps(m, indent=1).encode("utf-8"))
        self._manifest = m
        _step("manifest")

    def _fresh(self, p: Path, e: dict | None) -> tuple[bool, dict | None]:
        """(up to date, entry with refreshed stat) for source `p` against its manifest entry `e`."""
        if e is None:
            return False, None
        try:
            st = p.stat()
        except OSError:
            return False, None
        part_ok = e.get("tag") is None or self._part_size_ok(e)
        if e.get("stat") == _stat_key(st):
            return part_ok, e
        try:
            same = file_sha256(p) == e.get("sha256")   # stat changed: the content hash decides
        except OSError:
            return False, None
        return (same and part_ok), ({**e, "stat": _stat_key(st)} if same else None)

    def _part_size_ok(self, e: dict) -> bool:
        try:
            return os.path.getsize(self.root / e["part"]) == e.get("part_bytes")
        except (OSError, KeyError, TypeError):
            return False

    def stale(self, files: Iterable[os.PathLike | str]) -> list[Path]:
        """The files whose ingested copy is missing, damaged or out of date (by content hash)."""
        have = self.manifest["files"]
        return [Path(f) for f in files if not self._fresh(Path(f), have.get(_source_key(Path(f))))[0]]

    def sync(self, files: list[os.PathLike | str], warnings: Warnings | None = None, workers: int | None = None,
             progress: Callable[[int, int], None] | None = None, executor: Executor | None = None
             ) -> SyncReport:
        """Bring the store up to date with `files` (the campaign's run files, in order): ingest new or
        changed files (one process per core), drop files no longer listed, rewrite the index, then
        commit the manifest. Problems of every file are raised together as one FormatError; warnings
        of every file (also of reused ones) go to `warnings`."""
        t0 = time.perf_counter()
        w = warnings if warnings is not None else Warnings()
        files = [Path(f) for f in files]
        rep = SyncReport()
        with _Lock(self.dir / ".lock"):
            self._manifest = None
            m = self.manifest
            for x in self.warnings:
                w.add(x.path, x.line, x.message)
            self.warnings = Warnings()
            todo: list[Path] = []
            reuse: dict[str, dict] = {}
            for p in files:
                key = _source_key(p)
                e = m["files"].get(key)
                ok, e2 = self._fresh(p, e)
                if ok:
                    reuse[key] = e2
                    continue
                if e is not None and e2 is not None and e.get("tag") is not None:
                    w.add(str(self.root / e["part"]), None, f"run store part of {p} is missing or damaged; "
                                                            f"re-ingested from the run file")
                todo.append(p)
            results: dict[str, dict] = {}
            if todo:
                pend = self.dir / "runs" / ".pending"
                jobs = [(str(p), str(pend / f"{os.getpid()}-{i}.parquet")) for i, p in enumerate(todo)]
                results = self._ingest(jobs, workers, progress, executor)
            problems: list[Problem] = []
            hints: list[str] = []
            new_files: dict[str, dict] = {}
            seen_tag: dict[str, str] = {}
            for p in files:
                key = _source_key(p)
                fresh = str(p) in results
                if fresh:
                    r = dict(results[str(p)])
                    tmp_part = Path(r.pop("tmp_part"))
                    if "problems" in r:
                        problems.extend(Problem(*x) for x in r["problems"])
                        if r.get("hint") and r["hint"] not in hints:
                            hints.append(r["hint"])
                        continue
                    e = _pack_topics(r)
                elif key in reuse:
                    e = dict(reuse[key])
                else:
                    continue
                for x in e.get("warnings", []):
                    w.add(*x)
                tag = e.get("tag")
                if tag is not None and tag in seen_tag:
                    problems.append(Problem(str(p), None, f"run tag {tag!r} is also the tag of {seen_tag[tag]}"))
                    if "every run needs a distinct tag" not in " ".join(hints):
                        hints.append("every run needs a distinct tag; edit the 6th column of one file")
                    continue
                if tag is not None:
                    seen_tag[tag] = str(p)
                    if fresh:
                        final = _part_name(self.root, tag, e["sha256"])
                        final.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(tmp_part, final)
                        _step("rename")
                        e["part"] = str(final.relative_to(self.root))
                (rep.ingested if fresh else rep.reused).append(str(p))
                new_files[key] = e
            listed = {_source_key(p) for p in files}
            rep.removed = [k for k in m["files"] if k not in new_files and k not in listed]
            order = [_source_key(p) for p in files if _source_key(p) in new_files]
            new_m = {"format": FORMAT, "files": {k: new_files[k] for k in order}, "index_sha256": None}
            if (rep.ingested or rep.removed or problems or new_m["files"] != m["files"]
                    or not self._index_ok(m)):
                new_m["index_sha256"] = self._write_index(new_m)
                self._write_manifest(new_m)          # the commit point
            self._collect_garbage()
            self._index = None
            self._verified = set()
            if problems:
                raise FormatError(problems, hint="; ".join(hints) or None)
        rep.rows = int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))
        rep.seconds = time.perf_counter() - t0
        return rep

    def _collect_garbage(self) -> None:
        """Remove part files (and leftovers of killed writes) that the committed manifest does not name."""
        keep = {str(self.root / e["part"]) for e in self.manifest["files"].values() if e.get("part")}
        runs = self.dir / "runs"
        if not runs.is_dir():
            return
        for f in sorted(runs.rglob("*")):
            if f.is_file() and str(f) not in keep:
                try:
                    f.unlink()
                    _step("unlink")
                except OSError:
                    pass
        for d in sorted((d for d in runs.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
            _rmdir_empty(d)
        for f in self.dir.glob(".*.tmp*"):
            try:
                f.unlink()
            except OSError:
                pass

    def _ingest(self, jobs: list[tuple[str, str]], workers: int | None, progress, executor) -> dict[str, dict]:
        """ingest_file over (source, temporary part) jobs: in this process for small inputs, else on
        `executor` or one process per core."""
        from ..util.parallel import map_tasks
        big = sum(os.path.getsize(p) if os.path.exists(p) else 0 for p, _ in jobs) > 64 * 2**20
        res = map_tasks(_ingest_job, jobs, workers if big else 1, executor, progress)
        return {src: {**r, "tmp_part": part} for (src, part), r in zip(jobs, res)}

    @staticmethod
    def _index_table(m: dict) -> pa.Table:
        runs, topics, rows, rgs = [], [], [], []
        for e in m["files"].values():
            if e.get("tag") is None:
                continue
            try:
                t, r, g = _unpack_topics(e)
            except (ValueError, TypeError, KeyError):
                raise StoreDamaged(f"the run store's manifest is damaged (the topics of run {e['tag']!r}); "
                                   f"run `cranfield ingest --rebuild` on the campaign to ingest every run file "
                                   f"again") from None
            runs.append(np.full(len(t), e["tag"], dtype=object))
            topics.append(np.asarray(t, dtype=object))
            rows.append(r)
            rgs.append(g)
        cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt))
        return pa.table({"run": pa.array(cat(runs, object), pa.string()),
                         "topic": pa.array(cat(topics, object), pa.string()),
                         "rows": pa.array(cat(rows, np.int64)), "row_group": pa.array(cat(rgs, np.int32))})

    def _write_index(self, m: dict) -> str:
        """Write index.parquet for manifest `m` (before the manifest); returns its sha256."""
        from ..util.atomic import atomic_path
        self.dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.dir / "index.parquet") as tmp:
            pq.write_table(self._index_table(m), tmp)
        _step("index")
        return file_sha256(self.dir / "index.parquet")

    def _index_ok(self, m: dict) -> bool:
        try:
            return m.get("index_sha256") is not None and file_sha256(self.dir / "index.parquet") == m["index_sha256"]
        except OSError:
            return False

    # ------------------------------------------------------------------ reading
    @property
    def index(self) -> pd.DataFrame:
        """run, topic, rows, row_group for every run and topic in the store (rebuilt from the manifest
        when index.parquet does not match its recorded hash)."""
        if self._index is None:
            m = self.manifest
            if self._index_ok(m):
                try:
                    self._index = pq.read_table(self.dir / "index.parquet").to_pandas()
                except (OSError, pa.ArrowException):
                    self._index = None
            if self._index is None:
                self._index = self._index_table(m).to_pandas()
        return self._index

    @property
    def runs(self) -> list[str]:
        """Run tags in the order of the source files."""
        return [e["tag"] for e in self.manifest["files"].values() if e.get("tag") is not None]

    def _entry(self, run: str) -> tuple[str, dict]:
        for k, e in self.manifest["files"].items():
            if e.get("tag") == run:
                return k, e
        raise CranfieldError(f"run {run!r} is not in the store of {self.root}")

    def check_part(self, run: str) -> str | None:
        """What is wrong with `run`'s part (size, footer, tag, source hash, rows), or None."""
        _, e = self._entry(run)
        path = self.root / e["part"]
        try:
            if os.path.getsize(path) != e.get("part_bytes"):
                return "its size differs from the manifest (truncated or replaced)"
            md = pq.ParquetFile(path).metadata
        except OSError as exc:
            return f"it cannot be read ({exc.strerror or exc})"
        except (pa.ArrowException, ValueError) as exc:
            return f"it is not a valid Parquet file ({str(exc).splitlines()[0][:80]})"
        kv = md.metadata or {}
        if kv.get(b"cranfield.run", b"").decode("utf-8", "replace") != run:
            return f"it holds run {kv.get(b'cranfield.run', b'?').decode('utf-8', 'replace')!r}, not {run!r}"
        if kv.get(b"cranfield.sha256", b"").decode("ascii", "replace") != e.get("sha256"):
            return "it was made from other content than the manifest's run file"
        if md.num_rows != e.get("rows"):
            return f"it holds {md.num_rows} rows, the manifest {e.get('rows')}"
        self._footers[str(path)] = md                  # the checked footer, reused by reads
        return None

    def _repair(self, run: str, why: str) -> None:
        """Re-ingest `run` from its run file (when that file still holds the content the manifest
        recorded), with a warning; else raise StoreDamaged naming the part and --rebuild."""
        key, e = self._entry(run)
        part = self.root / e["part"]
        self._footers.pop(str(part), None)
        src = Path(key)
        try:
            same = src.is_file() and file_sha256(src) == e.get("sha256")
        except OSError:
            same = False
        if not same:
            raise StoreDamaged(f"{part}: run store part of run {run!r} is damaged ({why}) and its run file "
                               f"{src} has changed or is gone; {_rebuild_hint(self.root)}")
        with _Lock(self.dir / ".lock"):
            tmp = self.dir / "runs" / ".pending" / f"{os.getpid()}-repair.parquet"
            r = ingest_file(str(src), str(tmp))
            if "problems" in r or r.get("tag") != run or r.get("sha256") != e.get("sha256"):
                raise StoreDamaged(f"{part}: run store part of run {run!r} is damaged ({why}) and could not be "
                                   f"re-ingested from {src}; {_rebuild_hint(self.root)}")
            final = _part_name(self.root, run, r["sha256"])
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, final)
            m = json.loads(json.dumps(self.manifest))
            m["files"][key] = _pack_topics({**e, **{k: v for k, v in r.items() if k != "warnings"},
                                            "part": str(final.relative_to(self.root))})
            m["index_sha256"] = self._write_index(m)
            self._write_manifest(m)
            self._collect_garbage()
        self._index = None
        self.warnings.add(str(part), None, f"run store part of run {run!r} was damaged ({why}); re-ingested "
                                           f"from {src}")

    def part(self, run: str) -> Path:
        """The verified part of `run` (re-ingested when damaged, see `check_part`)."""
        if run not in self._verified:
            why = self.check_part(run)
            if why is not None:
                self._repair(run, why)
                why = self.check_part(run)
                if why is not None:
                    _, e = self._entry(run)
                    raise StoreDamaged(f"{self.root / e['part']}: run store part of run {run!r}: {why}; "
                                       f"{_rebuild_hint(self.root)}")
            self._verified.add(run)
        _, e = self._entry(run)
        return self.root / e["part"]

    @property
    def rows(self) -> int:
        return int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))

    def topics(self) -> list[str]:
        """Every topic any run retrieved for, in byte order."""
        return sorted(set(self.index["topic"].tolist()), key=lambda s: s.encode("utf-8"))

    def read(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
             columns: list[str] | None = None, max_pos: int | None = None) -> pa.Table:
        """Rows of `runs` (default all, in store order) for `topics` (default all), as one Arrow table
        (`read_parts`); within a run, rows are in trec_eval order. `max_pos` keeps the first `max_pos`
        documents of each ranking."""
        try:
            return self._read(runs, topics, columns, max_pos)
        except StoreDamaged as exc:           # a damaged page: re-ingest that run once, then read again
            run = getattr(exc, "run", None)
            if run is None:
                raise
            self._repair(run, "a page failed its checksum")
            return self._read(runs, topics, columns, max_pos)

    def _read(self, runs, topics, columns, max_pos) -> pa.Table:
        run_list = self.runs if runs is None else list(runs)
        if topics is None:
            return read_parts([(r, str(self.part(r)), None) for r in run_list], None, columns, max_pos,
                              use_threads=True, footers=self._footers)
        tset = sorted(set(map(str, topics)), key=lambda s: s.encode("utf-8"))
        ix = self.index
        ix = ix[ix["topic"].isin(tset)]
        rg_of = ix.groupby("run", sort=False)["row_group"].apply(lambda s: tuple(sorted(set(s.tolist())))).to_dict()
        return read_parts([(r, str(self.part(r)), rg_of.get(r, ())) for r in run_list], tset, columns, max_pos,
                          use_threads=True, footers=self._footers)

    def frame(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
              max_pos: int | None = None) -> pd.DataFrame:
        """Like `read`, as the run table of `formats.read_runs`: run, topic, doc (categorical), rank,
        score."""
        return to_frame(self.read(runs, topics, columns=["topic", "doc", "rank", "score"], max_pos=max_pos))

    def topic_blocks(self, topics: list[str], max_rows: int, runs: list[str] | None = None,
                     cap: int | None = None) -> list[list[str]]:
        """`topics` (in the given order) cut into consecutive blocks of at most ~`max_rows` run rows
        (counting at most `cap` rows per ranking when given). Each cut falls, within the last half of
        a block, where the fewest runs have a row group holding topics on both sides of it (a row group
        read by two blocks is read twice)."""
        ix = self.index
        if runs is not None:
            ix = ix[ix["run"].isin(set(runs))]
        rows = ix["rows"] if cap is None else np.minimum(ix["rows"], cap)
        per = rows.groupby(ix["topic"]).sum()
        counts = per.reindex(topics).fillna(0).to_numpy(np.int64)
        n = len(topics)
        # straddle[i]: row groups holding a topic before position i and one at or after it
        at = ix["topic"].map({t: i for i, t in enumerate(topics)})
        held = ix.assign(at=at)[at.notna()].groupby(["run", "row_group"], sort=False)["at"].agg(["min", "max"])
        diff = np.zeros(n + 2, np.int64)
        np.add.at(diff, held["min"].to_numpy(np.int64) + 1, 1)
        np.add.at(diff, held["max"].to_numpy(np.int64) + 1, -1)
        straddle = np.cumsum(diff)[: n + 1]
        before = np.concatenate(([0], np.cumsum(counts)))            # rows of topics[:i]
        blocks: list[list[str]] = []
        start = 0
        for i in range(n):
            while i > start and before[i + 1] - before[start] > max_rows:   # (topics[j:i + 1] may still be)
                # cut at j in (start, i]: rows of the block >= max_rows / 2, fewest row groups split, latest
                lo = start + 1 + int(np.searchsorted(before[start + 1:i + 1] - before[start], max_rows / 2))
                lo = min(lo, i)
                j = lo + int(np.flatnonzero(straddle[lo:i + 1] == straddle[lo:i + 1].min())[-1])
                blocks.append(list(topics[start:j]))
                start = j
        if start < n:
            blocks.append(list(topics[start:]))
        return blocks


_FOOTERS: dict[tuple, pq.FileMetaData] = {}


def _footer(path: str) -> pq.FileMetaData:
    """A part's footer, parsed once per process while the file stays the same (size, mtime, inode): a
    block worker reads the same parts for every topic block."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    md = _FOOTERS.get(key)
    if md is None:
        if len(_FOOTERS) >= 1024:
            _FOOTERS.clear()
        md = _FOOTERS[key] = pq.read_metadata(path)
    return md


def read_parts(parts, topics: list[str] | None = None, columns: list[str] | None = None,
               max_pos: int | None = None, use_threads: bool = False, footers: dict | None = None) -> pa.Table:
    """Rows of run parts [(run, part path, row groups, or None for all)] as one Arrow table: a `run`
    dictionary column first, `topic` dictionary-encoded; only `topics` when given and the first
    `max_pos` documents of each ranking. A run with no row groups to read is left out. `footers`: part
    path -> its footer (FileMetaData) already read and checked."""
    cols = columns or ["topic", "doc", "score", "rank", "pos"]
    read_cols = list(dict.fromkeys(cols + (["topic"] if topics is not None else [])
                                   + (["pos"] if max_pos is not None else [])))
    tlist = list(topics) if topics is not None else None
    todo = [(run, path, rgs) for run, path, rgs in parts if rgs is None or rgs]
    cores = os.cpu_count() or 1
    many = use_threads and len(todo) > 1 and cores > 1      # parts read side by side, one thread each

    def load(job) -> pa.Table:
        run, path, rgs = job
        try:
            md = (footers or {}).get(str(path)) or _footer(str(path))
            pf = pq.ParquetFile(path, metadata=md, read_dictionary=["topic"], page_checksum_verification=True)
            inner = use_threads and not many
            t = (pf.read(columns=read_cols, use_threads=inner) if rgs is None
                 else pf.read_row_groups(list(rgs), columns=read_cols, use_threads=inner))
        except (OSError, pa.ArrowException, ValueError) as exc:
            err = StoreDamaged(f"{path}: run store part of run {run!r} cannot be read "
                               f"({str(exc).splitlines()[0][:100]}); run `cranfield ingest --rebuild` on the "
                               f"campaign to ingest every run file again")
            err.run = run
            raise err from None
        mask = np.ones(len(t), bool)
        if tlist is not None:
            mask &= dict_codes(t.column("topic"), tlist) >= 0
        if max_pos is not None:
            mask &= t.column("pos").to_numpy() <= max_pos
        if not mask.all():
            t = t.filter(pa.array(mask))
        return t.select(cols)

    if many:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(min(cores, len(todo))) as ex:
            tables = list(ex.map(load, todo))
    else:
        tables = [load(j) for j in todo]
    names = [(run, len(t)) for (run, _, _), t in zip(todo, tables)]
    if not tables:
        return pa.schema([("run", pa.dictionary(pa.int32(), pa.string()))]
                         + [SCHEMA.field(c) for c in cols]).empty_table()
    tab = pa.concat_tables(tables, promote_options="permissive")
    codes = np.repeat(np.arange(len(names), dtype=np.int32), [n for _, n in names])
    run_col = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array([r for r, _ in names], pa.string()))
    return tab.add_column(0, "run", run_col)


def to_frame(tab: pa.Table) -> pd.DataFrame:
    """An Arrow run table as a pandas run table: run categorical (store order), topic and doc
    categorical with byte-ordered categories (as formats.read_runs gives), other columns as arrays."""
    import pandas as pd

    from ..formats.runs import grouped_categorical, sorted_categorical
    data = {}
    for name in tab.column_names:
        col = tab.column(name)
        if name == "run":
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            if not pa.types.is_dictionary(arr.type):
                arr = pc.dictionary_encode(arr)
            cats = pd.Index(np.asarray(arr.dictionary.to_pylist(), dtype=object), dtype=object)
            codes = arr.indices.to_numpy(zero_copy_only=False).astype(np.int32) if len(arr) else np.zeros(0, np.int32)
            data[name] = pd.Categorical.from_codes(codes, categories=cats, validate=False)
        elif name in ("topic", "doc"):
            if pa.types.is_dictionary(col.type):
                col = col.cast(pa.string())
            data[name] = (grouped_categorical if name == "topic" else sorted_categorical)(col)
        else:
            data[name] = col.to_numpy()
    return pd.DataFrame(data, copy=False)


def _rmdir_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass
