"""Ingest: one run file parsed into a Parquet part (`ingest_file`), streamed piece by piece when the
file allows (`_ingest_stream`, the hot path), else read whole (`_ingest_whole`)."""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CranfieldError, FormatError, Warnings
from ...ranking.order import arrow_run_order
from ...formats.runs import run_heads
from ...util.arrowbuf import arrow_numpy, numpy_arrow
from . import heads, layout
from .layout import ROW_GROUP_ROWS
from .manifest import _stat_key
from .parts import _PartWriter, _topic_index
from .repeats import _Repeats
from ...util import fs


def _order(tab: pa.Table) -> np.ndarray | None:
    """Row order topic asc, score desc, doc desc (byte order; ranking.trec_order); None when the rows
    already are."""
    return arrow_run_order(tab.column("topic"), tab.column("score"), tab.column("doc"))


CHUNK_BYTES = 16 * 2**20     # text parsed at a time by the streaming ingest (bounds a worker's memory)


class _NotStreamable(Exception):
    """The run file cannot be ingested chunk by chunk (not clean Arrow-parsable text in one run, gzip, a
    byte order mark, or topics not contiguous in byte order): it is ingested whole."""


def _parse(path: str, w: Warnings, raw: list[bytes] | None = None) -> tuple[str, pa.Table] | None:
    """(tag, table of topic, doc, score, rank, line) in file order, duplicates dropped and reported.
    `raw`: [the file's bytes], taken from the list so they are freed once Arrow has parsed them."""
    from ...formats.runs import arrow_run, read_run_arrays
    from ...formats.files import read_bytes

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


def _in_trec_order(tab: pa.Table, heads: np.ndarray | None = None) -> pa.Table:
    """`tab` in trec_eval order (unchanged when it already is); `heads`: the first rows of its topics
    when they already come in byte order, each in one run of rows."""
    if heads is None:
        order = _order(tab)
        return tab if order is None else tab.take(numpy_arrow(order))
    from ...ranking.order import arrow_tie_order, order_rows, trec_order
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
    """(tag, table of topic, doc, score, rank, its topics' first rows, their topic ids) of each text
    piece, parsed by the Arrow fast path of the text reader; _NotStreamable for a piece it does not take
    or whose topics are not contiguous in byte order."""
    from ...formats.runs import arrow_run
    for text in texts:
        fast = arrow_run(path, text)
        del text
        if fast is None:
            raise _NotStreamable
        tag, t = fast
        cur = t.select(["topic", "doc", "score", "rank"])
        del t, fast
        heads = run_heads(cur.column("topic"))    # of this piece alone: each row scanned once
        hv = cur.column("topic").take(numpy_arrow(heads))
        if len(hv) > 1 and not pc.all(pc.less(hv.slice(0, len(hv) - 1), hv.slice(1))).as_py():
            raise _NotStreamable                  # topics not contiguous in byte order
        yield tag, cur, heads, hv


def _ingest_stream(path: str, tmp: Path, group_rows: int, w: Warnings) -> dict:
    """Ingest a clean run file whose topics come in byte order, one text piece at a time (memory bounded
    by `CHUNK_BYTES` and the largest topic): each piece read, hashed and parsed by the Arrow fast path of
    the text reader (in a thread, one piece ahead), the rows of its complete topics de-duplicated, put
    in trec_eval order and written. Raises _NotStreamable for any other file."""
    from contextlib import closing
    from ...util.parallel import produced_ahead
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
        # read, hashed and parsed in a thread, one piece ahead of the writing here (both release the GIL)
        with fs.open(path, "rb") as fh, \
                closing(produced_ahead(_parsed_pieces(path, _text_chunks(fh, h, CHUNK_BYTES)))) as pieces:
            for ptag, cur, heads, hv in pieces:
                if tag is not None and ptag != tag:
                    raise _NotStreamable
                if pw is None:
                    tag = ptag
                    pw = _PartWriter(tmp, tag, str(path), group_rows)
                n = len(cur)
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
    from ...util.atomic import atomic_path

    def failed(exc: Exception) -> dict:
        from ...util.atomic import write_failure
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
            with atomic_path(part) as tmp, heads.writing(part):
                got = _ingest_stream(path, tmp, group_rows, w)
        except _NotStreamable:
            w = Warnings()
            raw = fs.read_bytes(path)
            with atomic_path(part) as tmp, heads.writing(part):
                got = _ingest_whole(path, tmp, group_rows, w, raw)
                if got["tag"] is None:
                    raise _NotStreamable from None       # nothing to store
    except _NotStreamable:
        pass
    except (FormatError, OSError) as exc:
        return failed(exc)
    src = {"sha256": got["sha256"], "stat": _stat_key(st)}
    if got["tag"] is None:
        return {**src, "tag": None, "rows": 0, "warnings": [(p.path, p.line, p.message) for p in w]}
    layout._step("part")
    return {**src, "tag": got["tag"], "rows": got["rows"], "part_bytes": os.path.getsize(part),
            "topics": got["topics"], "topic_rows": got["topic_rows"], "topic_rg": got["topic_rg"],
            "warnings": [(p.path, p.line, p.message) for p in w], "seconds": round(time.perf_counter() - t0, 3)}


def _ingest_job(job: tuple[str, str]) -> dict:
    return ingest_file(*job)
