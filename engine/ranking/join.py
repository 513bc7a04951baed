"""The one join of runs with judgments: grades per retrieved row, judgment keys, judged@k, rank rows."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..util.lazy import lazy_module
from .ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED, Ranked
from .order import _str_codes, byte_rank, order_rows, trec_order, vocab_tie_order

pd = lazy_module("pandas")            # imported by the functions that read tables, not by the kernel


pa = lazy_module("pyarrow")


pc = lazy_module("pyarrow.compute")


def _lut_apply(lut: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """lut[codes], skipped when the lookup table is the identity (the common case)."""
    if len(codes) == 0 or (len(lut) and lut[0] == 0 and np.array_equal(lut, np.arange(len(lut)))):
        return codes
    return lut[codes]


def lookup_rel(q_tcode, q_dcode, q_grade, t_code, r_dcode, n_topics, n_docs) -> np.ndarray:
    """Per run row: its judgment grade, RELVALUE_UNJUDGED (grade < 0) or RELVALUE_NONPOOL."""
    g = np.where(q_grade < 0, RELVALUE_UNJUDGED, q_grade)
    if n_topics * n_docs <= 30_000_000 and (len(g) == 0 or (g.min() >= -128 and g.max() <= 127)):
        lut = np.full(n_topics * n_docs, RELVALUE_NONPOOL, dtype=np.int8)   # dense (topic, doc) table
        lut[q_tcode * n_docs + q_dcode] = g      # duplicates were resolved by the reader (last wins here)
        return lut[t_code * n_docs + r_dcode].astype(np.int64)
    q_key = q_tcode * n_docs + q_dcode
    srt = np.argsort(q_key, kind="stable")
    q_key_s, g_s = q_key[srt], g[srt]
    r_key = t_code * n_docs + r_dcode
    rel = np.full(len(r_key), RELVALUE_NONPOOL, dtype=np.int64)
    if len(r_key) and len(q_key_s):
        pos = np.minimum(np.searchsorted(q_key_s, r_key), len(q_key_s) - 1)
        found = q_key_s[pos] == r_key
        rel[found] = g_s[pos[found]]
    return rel


_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_S31 = np.uint64(31)


def _mix(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit mixer with mix(0) == 0 (wrapping arithmetic; into `out`, else a fresh array)."""
    x = np.multiply(x, _MIX, out=out)
    x ^= x >> _S31
    return x


def id_words(ids: np.ndarray) -> np.ndarray:
    """Byte-string ids (numpy dtype S, NUL-padded, no NUL inside an id) as 64-bit words, one row per
    word position (words[k][i]: bytes 8k..8k+7 of id i)."""
    w = max(ids.dtype.itemsize, 1)
    width = -(-w // 8) * 8
    a = ids.astype(f"S{width}") if width != ids.dtype.itemsize else np.ascontiguousarray(ids)
    return a.view(np.uint64).reshape(len(a), width // 8).T          # a view: rows are strided


def pair_keys(t_code: np.ndarray, words: np.ndarray, seed: int = 0) -> np.ndarray:
    """A 64-bit key per (topic code, id words) column that does not depend on the padding width (NUL
    words add nothing): equal pairs have equal keys; unequal pairs almost never do (callers check hits
    and take another `seed` after a collision)."""
    step = np.uint64((0x9E3779B97F4A7C16 * seed) % 2**64)
    acc = t_code.astype(np.uint64)
    acc += np.uint64(1 + seed)
    acc *= _MIX2
    tmp = np.empty_like(acc)
    for k, row in enumerate(words):
        _mix(row, out=tmp)
        tmp *= np.uint64(2 * k + 3) + step
        acc += tmp
    np.right_shift(acc, np.uint64(29), out=tmp)
    acc ^= tmp
    return _mix(acc, out=acc)


class _Keys(NamedTuple):
    seed: int
    key: np.ndarray          # the distinct pair keys, sorted
    qrow: np.ndarray         # per key: its judgment row (the last of equal pairs)
    t: np.ndarray            # per key: its topic code
    words: np.ndarray        # per key: its document id's words (one row per word position)
    rel: np.ndarray          # per key: its grade, RELVALUE_UNJUDGED below 0
    shift: np.uint64         # a key's home slot: its top bits (key >> shift)
    slot_key: np.ndarray     # the probe table: per slot its key (slots of keys in ascending order)
    slot_pos: np.ndarray     # per slot: the key's position in `key`, -1 for an empty slot


def _probe_table(key: np.ndarray) -> tuple[np.uint64, np.ndarray, np.ndarray]:
    """Sorted distinct keys in an open-addressing table (at most a quarter full; a key's home slot is its
    top bits, so home slots ascend with the keys): each key sits at the first free slot from its home,
    the occupied slots hold the keys in ascending order, a free slot (key 2**64-1, position -1) follows
    the last."""
    n = len(key)
    bits = max(int(4 * n - 1).bit_length(), 4)
    home = (key >> np.uint64(64 - bits)).astype(np.int64)
    at = np.maximum.accumulate(home - np.arange(n)) + np.arange(n) if n else home
    size = (1 << bits) + n + 1
    slot_key = np.full(size, np.iinfo(np.uint64).max, np.uint64)
    slot_pos = np.full(size, -1, np.int64)
    slot_key[at] = key
    slot_pos[at] = np.arange(n)
    return np.uint64(64 - bits), slot_key, slot_pos


def _probe(keys: _Keys, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices into `ks` of the keys present, their positions in keys.key): each looks from its home
    slot on past slots with smaller keys (a free slot's key is the largest: the search ends there)."""
    slot = (ks >> keys.shift).view(np.int64)
    idx = None
    found_i, found_p = [], []
    while len(slot):
        sk = keys.slot_key[slot]
        h = np.flatnonzero(sk == ks)
        pos = keys.slot_pos[slot[h]]
        real = pos >= 0                                    # (a key 2**64-1 meets a free slot's)
        found_i.append((h if idx is None else idx[h])[real])
        found_p.append(pos[real])
        more = np.flatnonzero(sk < ks)
        idx = more if idx is None else idx[more]
        slot, ks = slot[more] + 1, ks[more]
    return np.concatenate(found_i), np.concatenate(found_p)


class PairGrades:
    """Judgments as sorted 64-bit keys of their (topic code, document id) pairs, built once for many
    runs: a run's rows are joined by probing a hash table of the keys, every hit checked
    byte for byte (no per-run hash table of strings, no shared document vocabulary). A pair judged
    twice keeps its last row (`distinct` tells). Safe to share between threads: a new seed after a key
    collision replaces the keys in one step."""

    def __init__(self, q_tcode: np.ndarray, q_ids: np.ndarray, q_grade: np.ndarray):
        self._src = (np.asarray(q_tcode, np.int64), id_words(q_ids), np.asarray(q_grade))
        self.distinct = True
        self.keys = self._make(0)

    @property
    def seed(self) -> int:
        return self.keys.seed

    def _make(self, seed: int) -> _Keys:
        t, words, grade = self._src
        for seed in range(seed, seed + 8):  # noqa: B020  (the range is made once, from the first seed)
            key = pair_keys(t, words, seed)
            order = np.argsort(key, kind="stable")
            key = key[order]
            last = np.append(key[1:] != key[:-1], True)       # the last of equal keys (input order)
            if not last.all():
                dup = np.flatnonzero(~last)                   # equal keys must be equal pairs
                a, b = order[dup], order[dup + 1]
                if not _same_pairs(t[a], words, a, t[b], words, b).all():
                    continue                                  # a collision: another seed
                self.distinct = False
                order, key = order[last], key[last]
            rel = np.where(grade < 0, RELVALUE_UNJUDGED, grade).astype(np.int64)[order]
            return _Keys(seed, key, order, t[order], np.ascontiguousarray(words[:, order]), rel,
                         *_probe_table(key))
        raise RuntimeError("PairGrades: no collision-free key seed")   # never reached in practice

    def _join(self, t_code: np.ndarray, ids: np.ndarray, repeats: bool
              ) -> tuple[np.ndarray, np.ndarray, _Keys] | None:
        """(rows with a judgment, their positions among the keys, the keys); None when two rows share a
        pair (unless `repeats`). A key collision (different pairs, one key) makes the keys again with
        another seed."""
        t_code = np.asarray(t_code, np.int64)
        words = id_words(ids)
        k = self.keys
        for _ in range(8):
            key = pair_keys(t_code, words, k.seed)
            if not repeats and len(key) > 1:
                ks = np.sort(key)
                if (ks[1:] == ks[:-1]).any():                 # equal keys: the same pair twice?
                    order = np.argsort(key)
                    ks = key[order]
                    eq = np.flatnonzero(ks[1:] == ks[:-1])
                    a, b = order[eq], order[eq + 1]
                    same = _same_pairs(t_code[a], words, a, t_code[b], words, b)
                    if same.any():
                        return None                           # a pair twice
                    # different pairs, one key: a pair may repeat with another between its rows
                    k = self.keys = self._make(k.seed + 1)
                    continue
            if len(k.key) == 0:
                return np.zeros(0, np.int64), np.zeros(0, np.int64), k
            rows, qpos = _probe(k, key)
            if _same_pairs(t_code[rows], words, rows, k.t[qpos], k.words, qpos).all():
                return rows, qpos, k
            k = self.keys = self._make(k.seed + 1)            # a collision: another seed, both sides
        raise RuntimeError("PairGrades: no collision-free key seed")   # never reached in practice

    def rows(self, t_code: np.ndarray, ids: np.ndarray, repeats: bool = False) -> np.ndarray | None:
        """Per row (topic code, document id as dtype S): the position of its judgment in the judgment
        arrays given (the last of equal ones), -1 when not judged; None when two rows share a pair
        (unless `repeats`)."""
        return self._per_row(t_code, ids, repeats, -1, "qrow")

    def grades(self, t_code: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
        """Per row: its judgment grade, RELVALUE_UNJUDGED (grade < 0) or RELVALUE_NONPOOL; None when two
        rows share a pair (a document retrieved twice for a topic)."""
        return self._per_row(t_code, ids, False, RELVALUE_NONPOOL, "rel")

    def _per_row(self, t_code: np.ndarray, ids: np.ndarray, repeats: bool, fill: int, field: str
                 ) -> np.ndarray | None:
        out = np.full(len(t_code), fill, np.int64)
        if len(t_code):
            got = self._join(t_code, ids, repeats)
            if got is None:
                return None
            rows, qpos, keys = got
            out[rows] = getattr(keys, field)[qpos]
        return out


def _same_pairs(ta: np.ndarray, wa: np.ndarray, ia: np.ndarray, tb: np.ndarray, wb: np.ndarray, ib: np.ndarray
                ) -> np.ndarray:
    """Per i: whether (ta[i], id ia[i] of words wa) and (tb[i], id ib[i] of words wb) are the same pair
    (a word past one side's width is NUL there)."""
    same = ta == tb
    for k in range(max(len(wa), len(wb))):
        same &= (wa[k][ia] if k < len(wa) else 0) == (wb[k][ib] if k < len(wb) else 0)
    return same


def dict_codes(col, values: list[str]) -> np.ndarray:
    """Per row of a (chunked, possibly dictionary-encoded) string column: its index in `values`, -1 if
    absent. Dictionary chunks are looked up once per distinct value."""
    vs = pa.array(values, pa.string())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if not chunks:
        return np.zeros(0, np.int32)
    # one lookup call for all chunks (Arrow builds the value set's hash table once per call): the
    # dictionaries of dictionary chunks, then every row of the others
    is_dict = [pa.types.is_dictionary(ch.type) for ch in chunks]
    looked = [ch.dictionary if d else ch for ch, d in zip(chunks, is_dict)]
    idx = pc.fill_null(pc.index_in(pa.chunked_array(looked, type=looked[0].type) if len({a.type for a in looked}) == 1
                                   else pa.chunked_array([a.cast(pa.string()) for a in looked], type=pa.string()),
                                   value_set=vs), -1).to_numpy()
    out, at = [], 0
    for ch, d, a in zip(chunks, is_dict, looked):
        part = idx[at:at + len(a)]
        at += len(a)
        out.append(part[ch.indices.to_numpy()] if d else part)
    return np.concatenate(out)


def ranked_rows(runs: pd.DataFrame, depth: int | None = None, by_name: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's ranking of run rows (columns run, topic, doc, score): (positional row indices in
    trec_eval order, each row's 1-based rank in its (run, topic)). Groups come runs then topics in order
    of first appearance (`by_name`: in byte order of their names); within a group score descending,
    ties by document id descending in byte order (equal rows keep file order). With `depth`, only
    rows ranked <= depth."""
    n = len(runs)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rc, r_names = _str_codes(runs["run"])
    tc, t_names = _str_codes(runs["topic"])
    if by_name:
        rc, tc = byte_rank(r_names)[rc], byte_rank(t_names)[tc]
    dc, d_names = _str_codes(runs["doc"])
    score = runs["score"].to_numpy(np.float64)
    n_t = max(len(t_names), 1)
    rows = order_rows(trec_order(rc, tc, score, n_t, vocab_tie_order(d_names, dc)), n)
    g = (rc * n_t + tc)[rows]
    first = np.concatenate(([True], g[1:] != g[:-1]))
    rank = np.arange(n, dtype=np.int64) - np.maximum.accumulate(np.where(first, np.arange(n), 0)) + 1
    if depth is not None:
        keep = rank <= depth
        rows, rank = rows[keep], rank[keep]
    return rows, rank


def ranked_doc_lists(runs, run_names, depth: int | None = None) -> dict[tuple[str, str], list[str]]:
    """{(run, topic): documents in trec_eval order} for the runs named (first `depth` per topic), from
    one `ranked_rows` over those runs' rows: names are compared by code, documents turned to text once."""
    want = {str(r) for r in run_names}
    rc, r_names = _str_codes(runs["run"])
    keep = np.flatnonzero(np.isin(rc, np.flatnonzero(np.isin(r_names.astype(str), list(want)))))
    sub = runs.iloc[keep]
    if not len(sub):
        return {}
    rows, _ = ranked_rows(sub, depth or None)
    src, s_runs = _str_codes(sub["run"])
    stc, s_topics = _str_codes(sub["topic"])
    dc, d_names = _str_codes(sub["doc"])
    g = (src * max(len(s_topics), 1) + stc)[rows]
    docs = d_names.astype(str)[dc[rows]].tolist()
    cut = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1], [True])))
    n_t = max(len(s_topics), 1)
    return {(str(s_runs[g[i] // n_t]), str(s_topics[g[i] % n_t])): docs[i:j] for i, j in zip(cut[:-1], cut[1:])}


def _join_codes(runs: pd.DataFrame, qrels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Topic and document codes shared by run rows (first len(runs)) and judgment rows (the rest),
    equal for equal text: (topic codes, doc codes, number of topics, number of docs)."""
    tc, t_names = _str_codes(pd.concat([runs["topic"].astype(object), qrels["topic"].astype(object)],
                                       ignore_index=True))
    dc, d_names = _str_codes(pd.concat([runs["doc"].astype(object), qrels["doc"].astype(object)],
                                       ignore_index=True))
    return tc, dc, max(len(t_names), 1), max(len(d_names), 1)


def judgment_keys(runs: pd.DataFrame, qrels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    """The join of run rows with judgments on (topic, doc) as text: (per run row, per judgment row) a
    code of its (topic, doc) pair, equal codes for equal pairs; and the number of codes."""
    n = len(runs)
    if n + len(qrels) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    tc, dc, _, n_d = _join_codes(runs, qrels)
    codes, uniq = pd.factorize(tc * n_d + dc)
    codes = codes.astype(np.int64)
    return codes[:n], codes[n:], len(uniq)


def run_grades(runs: pd.DataFrame, qrels: pd.DataFrame) -> np.ndarray:
    """The judgment of each run row joined on (topic, doc): its grade (>= 0), RELVALUE_UNJUDGED for a
    pooled but unjudged document (grade < 0 in the judgments) and RELVALUE_NONPOOL without one."""
    if len(runs) == 0:
        return np.zeros(0, np.int64)
    tc, dc, n_t, n_d = _join_codes(runs, qrels)
    n = len(runs)
    return lookup_rel(tc[n:], dc[n:], qrels["grade"].to_numpy(np.int64), tc[:n], dc[:n], n_t, n_d)


def judged_at(group: np.ndarray, rank: np.ndarray, rel: np.ndarray, k: int, n_groups: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """judged@k counts per group from per-row group index, rank and judgment (`rel`, as run_grades or
    Ranked.rel): (rows ranked <= k that carry a judgment (rel >= 0), rows ranked <= k)."""
    top = rank <= k
    g = np.asarray(group, np.int64)[top]
    judged = np.bincount(g, weights=(np.asarray(rel)[top] >= 0), minlength=n_groups).astype(np.int64)
    return judged, np.bincount(g, minlength=n_groups).astype(np.int64)


def judged_share_at(runs: pd.DataFrame, qrels: pd.DataFrame, depths: tuple[int, ...] = (10,)
                    ) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """judged@k: per run (in order of first appearance), the share of its top-k documents over all its
    topics that carry a judgment (grade >= 0); NaN for a run with no rows. (run names, {k: shares})."""
    rc, r_names = _str_codes(runs["run"])
    rows, rank = ranked_rows(runs, max(depths) if depths else 0)
    rel = run_grades(runs.iloc[rows], qrels)
    out = {}
    for k in depths:
        num, den = judged_at(rc[rows], rank, rel, k, len(r_names))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = np.where(den > 0, num / np.maximum(den, 1), np.nan)
    return r_names, out


def ranked_judgment_rows(r: Ranked, q_topic: np.ndarray, q_doc) -> np.ndarray:
    """The join of a `Ranked`'s rows with judgment rows: per row, the index of its (topic, doc) judgment
    (the last of equal ones, as the readers resolve duplicates), -1 when none. `q_topic`: per judgment
    row its index in r.topic_names (-1 when unknown); `q_doc`: its document id."""
    q_topic = np.asarray(q_topic, np.int64)
    if r.n_rows == 0 or len(q_topic) == 0:
        return np.full(r.n_rows, -1, np.int64)
    codes, uniq = pd.factorize(np.concatenate((np.asarray(r.doc, dtype=object), np.asarray(q_doc, dtype=object))))
    nd = max(len(uniq), 1)
    rkey = r.g_topic[r.row_group].astype(np.int64) * nd + codes[: r.n_rows]
    qkey = np.where(q_topic >= 0, q_topic * nd + codes[r.n_rows:], -1)
    return _key_lookup(qkey, rkey, np.ones(len(rkey), bool))


def _key_lookup(q_key: np.ndarray, r_key: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per r_key: the index of the last equal q_key (the judgment row), -1 if none or not `valid`."""
    out = np.full(len(r_key), -1, np.int64)
    if len(q_key) == 0 or len(r_key) == 0:
        return out
    order = np.argsort(q_key, kind="stable")
    ks = q_key[order]
    last = np.concatenate((ks[1:] != ks[:-1], [True]))
    ks, pos_of = ks[last], order[last]
    sel = np.flatnonzero(valid)
    p = np.minimum(np.searchsorted(ks, r_key[sel]), len(ks) - 1)
    hit = ks[p] == r_key[sel]
    out[sel[hit]] = pos_of[p[hit]]
    return out


def rename_runs(df: pd.DataFrame, rename: dict[str, str], column: str = "run") -> pd.DataFrame:
    """`df` with store run tags replaced by campaign names (categorical or plain column), in place."""
    if not rename or df is None or len(df) == 0:
        return df
    col = df[column]
    if isinstance(col.dtype, pd.CategoricalDtype):
        df[column] = col.cat.rename_categories([rename.get(r, r) for r in col.cat.categories])
    else:
        df[column] = col.map(lambda r: rename.get(r, r))
    return df

