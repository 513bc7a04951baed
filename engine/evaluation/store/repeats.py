"""Documents retrieved twice for a topic in a run file: found, dropped (the first line kept) and
reported as the text readers report them."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import Warnings
from ...util.arrowbuf import numpy_arrow
from .parts import _topic_index


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
            from ...formats.runs import warn_repeated_docs
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
    from ...ranking.join import id_words, pair_keys
    from ...util.arrowbuf import arrow_bytes
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
