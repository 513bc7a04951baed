"""The columnar ranked-list structure every measure is computed from.

All runs and topics are laid out in one flat array sorted by (run, topic, score desc, doc desc),
exactly trec_eval's order (ties on score broken by document id in decreasing strcmp order), with
CSR-style offsets per (run, topic) group. Measures are vectorized segment operations over it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._lazy import lazy_module
from .errors import CranfieldError

pd = lazy_module("pandas")            # imported by the functions that read tables, not by the kernel
pa = lazy_module("pyarrow")
pc = lazy_module("pyarrow.compute")

RELVALUE_NONPOOL = -1   # retrieved, not in the judgments
RELVALUE_UNJUDGED = -2  # in the pool (qrels grade < 0), not judged
BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval's stand-in document for -c topics without results


class cached_property:
    """A value computed on first read and kept in the instance (functools.cached_property without the
    lock Python 3.11 takes on every first read, which costs small evaluations more than the values)."""

    def __init__(self, fn):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's evaluation flags."""

    rel_level: int = 1             # -l: minimum grade that counts as relevant
    max_depth: int | None = None   # -M: documents per topic used (after sorting)
    judged_only: bool = False      # -J: drop unjudged documents before evaluation
    complete: bool = False         # -c: average over every judged topic (missing topics score 0)
    num_docs_in_coll: int | None = None  # -N
    trec_eval_version: str = "10.0"      # "9" reproduces 9.x cut-off rounding (iprec_at_recall, 11pt_avg)


def _seg_starts(group_ids: np.ndarray) -> np.ndarray:
    if len(group_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], group_ids[1:] != group_ids[:-1])))


class _Docs:
    """Per-row document ids read as an object array on demand (`materialize`)."""

    __slots__ = ()

    def materialize(self) -> np.ndarray:
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        a = self.materialize()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __getitem__(self, key):
        return self.materialize()[key]

    def __iter__(self):
        return iter(self.materialize())


class LazyDocs(_Docs):
    """Per-row document ids, materialized only when read (most measures never need the strings)."""

    __slots__ = ("vocab", "codes", "_arr")

    def __init__(self, vocab: np.ndarray, codes: np.ndarray):
        self.vocab, self.codes, self._arr = vocab, codes, None

    def materialize(self) -> np.ndarray:
        if self._arr is None:
            self._arr = _text(self.vocab[self.codes]) if len(self.codes) else np.zeros(0, dtype=object)
        return self._arr

    def subset(self, key: np.ndarray) -> "LazyDocs":
        return LazyDocs(self.vocab, self.codes[key])

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, key):
        if isinstance(key, (slice, np.ndarray, list)) and self._arr is None:
            return _text(self.vocab[self.codes[key]])
        return self.materialize()[key]


def _text(ids: np.ndarray) -> np.ndarray:
    """Document ids as str objects (a numpy bytes vocabulary, as the plain readers give, is decoded)."""
    if ids.dtype.kind != "S":
        return ids
    return np.asarray([x.decode("utf-8") for x in ids.tolist()], dtype=object)


@dataclass
class Ranked:
    """All (run, topic) ranked lists joined with their judgments, ready for vectorized measures."""

    options: EvalOptions
    run_names: list[str]
    topic_names: list[str]              # judged topics, in trec_eval's (strcmp) order
    g_run: np.ndarray                   # per group: run index
    g_topic: np.ndarray                 # per group: topic index
    offsets: np.ndarray                 # per group start into the row arrays; len n_groups + 1
    rel: np.ndarray                     # per row: grade, or RELVALUE_NONPOOL / RELVALUE_UNJUDGED
    doc: np.ndarray                     # per row: document id (object array, or LazyDocs read on demand)
    score: np.ndarray                   # per row: score
    t_levels: np.ndarray                # per topic x level column: number of judged docs (columns: level_grades)
    t_grades_offsets: np.ndarray        # CSR per topic into t_grades
    t_grades: np.ndarray                # per topic: judged grades (>= 0) sorted descending
    g_missing: np.ndarray = field(default=None)  # per group: True when the run had no results (-c fill)
    t_level_grades: np.ndarray | None = None     # grade of each t_levels column; None: column j is grade j
    extra: dict | None = None           # evaluation extras: {"gains": grade -> gain} (campaign relevance scale)
    qrels: object = None                # the judgments joined (DataFrame), for measures reading judgment columns
    # named caches of values derived from this structure ("gain": graded measures, "est": estimators;
    # "judgments": values derived from the judgments alone, which a caller evaluating many runs against
    # the same judgments and options may carry from one structure to the next); not copied by
    # dataclasses.replace (a derived structure starts empty)
    caches: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ sizes and indexing
    @property
    def n_groups(self) -> int:
        return len(self.g_run)

    @property
    def n_rows(self) -> int:
        return len(self.rel)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return self.offsets[1:] - self.offsets[:-1]

    @cached_property
    def row_group(self) -> np.ndarray:
        """Per row: its group index."""
        return np.repeat(np.arange(self.n_groups), self.num_ret)

    @cached_property
    def rank(self) -> np.ndarray:
        """Per row: 1-based rank within its group."""
        return np.arange(self.n_rows) - np.repeat(self.offsets[:-1], self.num_ret) + 1

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.options.rel_level

    @cached_property
    def is_judged(self) -> np.ndarray:
        return self.rel >= 0

    @cached_property
    def is_nonrel_judged(self) -> np.ndarray:
        return (self.rel >= 0) & (self.rel < self.options.rel_level)

    @cached_property
    def level_grades(self) -> np.ndarray:
        """The grade of each t_levels column: 0..max grade, or only the grades judged when the highest
        is above DENSE_LEVELS (`topic_judgments`)."""
        if self.t_level_grades is not None:
            return self.t_level_grades
        return np.arange(self.t_levels.shape[1], dtype=np.int64)

    @cached_property
    def max_grade(self) -> int:
        lg = self.level_grades
        return int(lg[-1]) if len(lg) else 0

    # ------------------------------------------------------------------ per-topic judgment facts
    @cached_property
    def t_num_rel(self) -> np.ndarray:
        lv = max(self.options.rel_level, 0)
        return self.t_levels[:, self.level_grades >= lv].sum(axis=1)

    @cached_property
    def t_num_nonrel(self) -> np.ndarray:
        lv = max(self.options.rel_level, 0)
        return self.t_levels[:, self.level_grades < lv].sum(axis=1)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """Per group: relevant documents in the judgments of its topic."""
        return self.t_num_rel[self.g_topic]

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Per group: judged non-relevant documents of its topic."""
        return self.t_num_nonrel[self.g_topic]

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.seg_sum(self.is_rel)

    # ------------------------------------------------------------------ segment primitives
    def seg_sum(self, values: np.ndarray) -> np.ndarray:
        """Per group sum of a per-row array (0 for empty groups), accumulated in rank order."""
        v = np.asarray(values)
        if v.dtype == bool:
            return np.bincount(self.row_group[v], minlength=self.n_groups).astype(np.int64)
        if self.n_rows == 0:
            return np.zeros(self.n_groups, dtype=np.float64 if v.dtype.kind == "f" else np.int64)
        if v.dtype.kind == "f":
            return np.bincount(self.row_group, weights=v, minlength=self.n_groups)
        return np.bincount(self.row_group, weights=v.astype(np.float64), minlength=self.n_groups).astype(np.int64)

    def seg_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Per row cumulative sum restarting at every group."""
        v = np.asarray(values)
        if v.dtype == bool:
            v = v.astype(np.int64)
        if self.n_rows == 0:
            return v.copy()
        if v.dtype.kind == "f":
            # summed within the group only (as trec_eval's per-topic loop): exact whatever else is in the
            # table, so results do not depend on how runs and topics are batched
            from .measures._gains import seg_cumsum_float
            return seg_cumsum_float(v, self.offsets)
        c = np.cumsum(v)
        base = np.concatenate(([0], c))[self.offsets[:-1]]
        return c - np.repeat(base, self.num_ret)

    def seg_cumsum_at(self, mask: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Count of `mask` rows at or above each row in `idx`, within its group."""
        c = np.cumsum(mask, dtype=np.int64)
        base = np.concatenate(([0], c))[self.offsets[:-1]]
        return c[idx] - base[self.row_group[idx]]

    @cached_property
    def rel_idx(self) -> np.ndarray:
        """Row indices of the relevant retrieved documents (rank order within each group)."""
        return np.flatnonzero(self.is_rel)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Per row: relevant documents at or above this rank."""
        return self.seg_cumsum(self.is_rel)

    def at_rank(self, per_row: np.ndarray, k: np.ndarray | int, fill_before: float = 0.0,
                extend_last: bool = True) -> np.ndarray:
        """Per group value of a per-row cumulative array at rank k (clipped to the list length).

        For k beyond the list, the value at the last rank is used when `extend_last`; for k < 1 or an
        empty list, `fill_before`.
        """
        num_ret = self.num_ret
        if isinstance(k, (int, np.integer)):          # one cut-off for every group (the common case)
            eff = np.minimum(num_ret, k) if extend_last else np.full(self.n_groups, k, np.int64)
        else:
            k = np.broadcast_to(np.asarray(k, dtype=np.int64), (self.n_groups,))
            eff = np.minimum(k, num_ret) if extend_last else k
        idx = self.offsets[:-1] + eff - 1
        ok = (eff >= 1) & (eff <= num_ret)
        out = np.full(self.n_groups, fill_before, dtype=np.float64)
        if self.n_rows:
            out[ok] = per_row[idx[ok]]
        return out

    def seg_max(self, values: np.ndarray, where: np.ndarray | None = None, fill: float = 0.0) -> np.ndarray:
        """Per group maximum of a per-row array over the rows selected by `where` (`fill` if none)."""
        v = np.asarray(values, dtype=np.float64)
        if where is not None:
            v = np.where(where, v, -np.inf)
        out = np.full(self.n_groups, -np.inf)
        nonempty = self.num_ret > 0
        if self.n_rows and nonempty.any():
            out[nonempty] = np.maximum.reduceat(v, self.offsets[:-1][nonempty])
        out[out == -np.inf] = fill
        return out

    @cached_property
    def num_nonpool(self) -> np.ndarray:
        """Per group: retrieved documents absent from the judgments."""
        return self.seg_sum(self.rel == RELVALUE_NONPOOL)

    @cached_property
    def num_unjudged_in_pool(self) -> np.ndarray:
        """Per group: retrieved documents in the pool but not judged (qrels grade < 0)."""
        return self.seg_sum(self.rel == RELVALUE_UNJUDGED)

    @cached_property
    def rel_prec_suffix_max(self) -> tuple[np.ndarray, np.ndarray]:
        """Interpolated precision at each relevant retrieved document, as (starts, values).

        values[starts[g] + L - 1] is the highest precision at or below the rank of group g's L-th
        relevant document (trec_eval's interpolation), for 1 <= L <= num_rel_ret[g].
        """
        idx = np.flatnonzero(self.is_rel)
        prec = self.cum_rel[idx] / self.rank[idx]
        grp = self.row_group[idx]
        n_rel = np.bincount(grp, minlength=self.n_groups)
        starts = np.concatenate(([0], np.cumsum(n_rel)))[:-1].astype(np.int64)
        if len(idx) == 0:
            return starts, np.zeros(0)
        # running maximum from the bottom of each group, exactly: on the ranks of the values, offset per
        # group so that no group's maximum reaches into the next
        uniq, inv = np.unique(prec, return_inverse=True)
        key = (grp[::-1].max() - grp[::-1]) * len(uniq) + inv[::-1]
        rev = np.maximum.accumulate(key) - (grp[::-1].max() - grp[::-1]) * len(uniq)
        return starts, uniq[rev[::-1]]

    def interpolated_precision(self, levels: np.ndarray) -> np.ndarray:
        """Per group interpolated precision at the given number of relevant documents (0 if beyond)."""
        starts, suf = self.rel_prec_suffix_max
        n_rel = np.diff(np.append(starts, len(suf)))
        ok = (levels >= 1) & (levels <= n_rel)
        out = np.zeros(self.n_groups)
        out[ok] = suf[starts[ok] + levels[ok] - 1]
        return out

    def recall_cutoffs(self, fractions: tuple | list | np.ndarray) -> np.ndarray:
        """(n_groups, n) numbers of relevant documents at recall `fractions`, rounded as trec_eval.

        trec_eval 10.0 rounds to nearest (lround); 9.x truncated fraction * num_rel + 0.9.
        """
        x = np.asarray(fractions, dtype=np.float64)[None, :] * self.num_rel.astype(np.float64)[:, None]
        if self.options.trec_eval_version.startswith("9"):
            return np.trunc(x + 0.9).astype(np.int64)
        t = np.trunc(x)
        return (t + np.sign(x) * (np.abs(x - t) >= 0.5)).astype(np.int64)

    def interpolated_at_recall_cutoffs(self, cutoffs: np.ndarray) -> np.ndarray:
        """(n_groups, n) interpolated precision at relevant-document cutoffs, walking them as trec_eval.

        trec_eval serves cut-offs from the last one backwards while descending the ranking; a cut-off
        above the relevant retrieved count gets 0 if it leads, and any cut-off it cannot serve in
        order (or <= 0) gets the interpolated precision at the first relevant document.
        """
        n_g, n = cutoffs.shape
        nrr = self.num_rel_ret
        at_end = self.interpolated_precision(np.ones(n_g, np.int64))
        out = np.zeros((n_g, n))
        skipping = np.ones(n_g, bool)
        ended = np.zeros(n_g, bool)
        level = nrr.astype(np.int64).copy()
        for j in range(n - 1, -1, -1):
            c = cutoffs[:, j]
            skipping &= c > nrr
            served = ~skipping & ~ended & (c >= 1) & (c <= level)
            ended |= ~skipping & ~served
            level = np.where(served, c, level)
            out[:, j] = np.where(skipping, 0.0, np.where(served, self.interpolated_precision(c), at_end))
        # An empty ranking (after -J or -M 0): trec_eval's precision is 0/0, a negative NaN on x86, and
        # the cut-offs at 0 relevant documents receive it (printed "-nan"); the others stay 0.
        empty = self.num_ret == 0
        if empty.any():
            out[empty] = np.where(cutoffs[empty] <= 0, -np.nan, out[empty])
        return out

    def topic_ideal_gains(self, gains_per_grade: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per topic ideal ranking as (offsets, gains): judged grades sorted descending mapped to gains."""
        g = gains_per_grade[self.t_grades] if len(self.t_grades) else np.zeros(0)
        return self.t_grades_offsets, g


def _str_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, names): integer codes per row and the distinct names as str, without per-row hashing
    when the column is categorical."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = np.array(col.cat.codes, dtype=np.int64, copy=True)   # own it: build_ranked reorders in place
        names = np.asarray(col.cat.categories, dtype=object)
    else:
        vals = col.to_numpy(object)
        codes, names = pd.factorize(vals, sort=False)
        codes = codes.astype(np.int64)
        names = np.asarray(names, dtype=object)
    if len(names) and pd.api.types.infer_dtype(names, skipna=False) != "string":
        # e.g. integer topic ids: same text, same code
        s = np.asarray([str(x) for x in names], dtype=object)
        c2, names = pd.factorize(s, sort=False)
        codes = c2[codes].astype(np.int64)
        names = np.asarray(names, dtype=object)
    return codes, names


def byte_rank(values) -> np.ndarray:
    """Dense rank of each string in strcmp order (UTF-8 bytes, i.e. code points; equal strings share a
    rank). `values`: a numpy array of str, or an Arrow string array (ranked by Arrow, same order)."""
    if not isinstance(values, np.ndarray):
        if len(values) == 0:
            return np.zeros(0, np.int64)
        return pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(np.int64) - 1
    if len(values) == 0:
        return np.zeros(0, np.int64)
    s = values.astype(str)
    order = np.argsort(s, kind="stable")
    ss = s[order]
    rank = np.empty(len(s), np.int64)
    rank[order] = np.cumsum(np.concatenate(([0], ss[1:] != ss[:-1])))
    return rank


def vocab_tie_order(vocab: np.ndarray, codes: np.ndarray):
    """`trec_order`'s tie-breaker for documents given as codes into `vocab` (distinct ids)."""
    def order(rows: np.ndarray, seg: np.ndarray) -> np.ndarray:
        u, inv = np.unique(codes[rows], return_inverse=True)
        d_desc = len(u) - 1 - byte_rank(vocab[u])[inv]
        if float(seg[-1] + 1) * len(u) < 2.0 ** 62:
            return np.argsort(seg * len(u) + d_desc, kind="stable")
        return np.lexsort((d_desc, seg))
    return order


def rank_tie_order(d_rank: np.ndarray, codes: np.ndarray):
    """`trec_order`'s tie-breaker for documents given as codes with each code's strcmp rank known
    (`d_rank[code]`, as the plain readers compute it)."""
    def order(rows: np.ndarray, seg: np.ndarray) -> np.ndarray:
        return np.lexsort((-d_rank[codes[rows]], seg))     # stable: equal ids keep their order
    return order


def list_tie_order(docs: list[str]):
    """`trec_order`'s tie-breaker for documents in a list of Python strings (compared by code point,
    i.e. byte order): for small rankings, where numpy's string sort costs more than it saves."""
    def order(rows: np.ndarray, seg: np.ndarray) -> np.ndarray:
        d = [docs[i] for i in rows.tolist()]
        pos = list(range(len(d)))
        edges = [0, *(np.flatnonzero(seg[1:] != seg[:-1]) + 1).tolist(), len(d)]
        for a, b in zip(edges[:-1], edges[1:]):       # reverse=True is stable: equal ids keep their order
            pos[a:b] = sorted(pos[a:b], key=d.__getitem__, reverse=True)
        return np.asarray(pos, np.int64)
    return order


def arrow_tie_order(doc):
    """`trec_order`'s tie-breaker for documents in an Arrow string column (Arrow compares bytes)."""
    def order(rows: np.ndarray, seg: np.ndarray) -> np.ndarray:
        t = pa.table({"s": seg, "d": doc.take(pa.array(rows))})
        return pc.sort_indices(t, sort_keys=[("s", "ascending"), ("d", "descending")]).to_numpy()
    return order


def trec_order(run_code: np.ndarray, t_code: np.ndarray, score: np.ndarray, n_topics: int, tie_order
               ) -> np.ndarray | tuple[np.ndarray, np.ndarray] | None:
    """trec_eval's row order, the one definition every caller uses: (run, topic) groups by code, within
    a group score descending, ties by document id descending in strcmp order (trec_eval's qsort
    comparator), equal rows in input order.

    `tie_order(rows, seg)`: the stable order of positions 0..len(rows)-1 by (seg ascending, document id
    of `rows[i]` descending in byte order) (`vocab_tie_order`, `arrow_tie_order`); asked only for the
    rows tied on score. Run files are nearly always in this order already except among tied scores.
    Then the result is None (identity) or a pair (idx, src): rows idx take the values of rows src (only
    tied rows move). Otherwise a full permutation.
    """
    n = len(score)
    if n == 0:
        return None
    gid = run_code * max(n_topics, 1) + t_code
    same_g = gid[1:] == gid[:-1]
    perm = None
    if not ((gid[1:] >= gid[:-1]).all() and (~same_g | (score[1:] <= score[:-1])).all()):
        if n < 4096:                                  # small: two-key sort beats ranking the scores
            perm = np.lexsort((-score, gid))
        else:
            uniq, inv = np.unique(score, return_inverse=True)
            s_desc = (len(uniq) - 1 - inv).astype(np.int64)
            if float(gid.max() + 1) * len(uniq) < 2.0 ** 62:
                perm = np.argsort(gid * len(uniq) + s_desc, kind="stable")
            else:
                perm = np.lexsort((s_desc, gid))
        gid, score = gid[perm], score[perm]
        same_g = gid[1:] == gid[:-1]
    tie = same_g & (score[1:] == score[:-1])          # row i+1 tied with row i
    if not tie.any():
        return perm
    in_tie = np.zeros(n, bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    idx = np.flatnonzero(in_tie)
    seg = np.cumsum(~np.concatenate(([False], tie))[idx]).astype(np.int64)
    rows = idx if perm is None else perm[idx]
    src = rows[tie_order(rows, seg)]
    if perm is None:
        return None if np.array_equal(src, idx) else (idx, src)
    perm[idx] = src
    return perm


def order_rows(order, n: int) -> np.ndarray:
    """A `trec_order` result as a full permutation of `n` rows."""
    if order is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(order, tuple):
        rows = np.arange(n, dtype=np.int64)
        rows[order[0]] = order[1]
        return rows
    return np.asarray(order, np.int64)


def arrow_run_order(topic, score, doc) -> np.ndarray | None:
    """`trec_order` of one run's Arrow columns (topics in byte order): a permutation of the rows, None
    when they are in order already (the run store's part order)."""
    n = len(score)
    if n < 2:
        return None
    enc = pc.dictionary_encode(topic)
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    t_code = byte_rank(enc.dictionary)[enc.indices.to_numpy()]
    sc = score.to_numpy() if isinstance(score, pa.ChunkedArray) else score.to_numpy(zero_copy_only=False)
    order = trec_order(np.zeros(n, np.int64), t_code, np.asarray(sc, np.float64), len(enc.dictionary),
                       arrow_tie_order(doc))
    return None if order is None else order_rows(order, n)


def apply_order(order, *arrays: np.ndarray) -> list[np.ndarray]:
    """Apply a `trec_order` result to per-row arrays. A partial reorder moves only the tied rows, in
    place: pass arrays the caller owns."""
    if order is None:
        return list(arrays)
    if isinstance(order, tuple):
        idx, src = order
        for a in arrays:
            a[idx] = a[src]
        return list(arrays)
    return [a[order] for a in arrays]


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


def dict_codes(col, values: list[str]) -> np.ndarray:
    """Per row of a (chunked, possibly dictionary-encoded) string column: its index in `values`, -1 if
    absent. Dictionary chunks are looked up once per distinct value."""
    vs = pa.array(values, pa.string())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for ch in chunks:
        if pa.types.is_dictionary(ch.type):
            lut = pc.fill_null(pc.index_in(ch.dictionary, value_set=vs), -1).to_numpy()
            out.append(lut[ch.indices.to_numpy()])
        else:
            out.append(pc.fill_null(pc.index_in(ch, value_set=vs), -1).to_numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int32)


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


def build_ranked(qrels: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None,
                 run_order: list[str] | None = None, presorted: bool = False) -> tuple[Ranked, dict]:
    """Join runs with qrels into a `Ranked` structure, with integer codes throughout.

    Returns the structure and a notes dict (topics ignored because they have no judgments, etc.)
    so the caller can report what was left out. `presorted` promises the rows are already in
    trec_eval order (runs in `run_order`, topics in byte order; the run store's order).
    """
    opt = options or EvalOptions()
    _check_options(opt)
    notes: dict = {}
    topic_names, q_tcode, q_grade = _judged_topics(qrels)
    topic_index = {t: i for i, t in enumerate(topic_names)}
    n_topics = len(topic_names)

    rr_codes, rr_names = _str_codes(runs["run"])
    rt_codes, rt_names = _str_codes(runs["topic"])
    rd_codes, rd_names = _str_codes(runs["doc"])
    r_score = runs["score"].to_numpy(np.float64)

    if run_order is None:
        first = pd.unique(rr_codes) if len(rr_codes) else np.zeros(0, np.int64)
        run_names = [rr_names[i] for i in first]
    else:
        run_names = list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}
    run_lut = np.asarray([run_index.get(r, -1) for r in rr_names], np.int64)
    run_code = _lut_apply(run_lut, rr_codes)
    if (run_code < 0).any():
        raise CranfieldError(f"run {rr_names[int(rr_codes[np.argmax(run_code < 0)])]!r} is not in run_order")

    t_lut = np.asarray([topic_index.get(t, -1) for t in rt_names], np.int64)
    t_code = _lut_apply(t_lut, rt_codes)
    known = t_code >= 0
    if not known.all():
        notes["topics_without_judgments"] = sorted(set(rt_names[np.unique(rt_codes[~known])].tolist()))
        run_code, t_code, rd_codes, r_score = run_code[known], t_code[known], rd_codes[known], r_score[known]

    # documents: the runs' vocabulary plus judged documents no run retrieved
    q_doc = qrels["doc"]
    if isinstance(q_doc.dtype, pd.CategoricalDtype):
        q_doc = q_doc.astype(object)
    q_doc = q_doc.to_numpy(object)
    if not all(type(x) is str for x in q_doc):
        q_doc = np.asarray([str(x) for x in q_doc], dtype=object)
    idx = pd.Index(rd_names).get_indexer(q_doc) if len(rd_names) else np.full(len(q_doc), -1)
    extra = q_doc[idx < 0]
    ec, eu = pd.factorize(extra) if len(extra) else (np.zeros(0, np.int64), np.zeros(0, object))
    q_dcode_raw = idx.astype(np.int64)
    q_dcode_raw[idx < 0] = len(rd_names) + ec
    vocab = np.concatenate((rd_names, np.asarray(eu, dtype=object)))

    ranked = ranked_from_codes(opt, run_names, topic_names, run_code, t_code, r_score, rd_codes, vocab,
                               q_tcode, q_dcode_raw, q_grade, notes, presorted=presorted)
    return ranked, notes


def ranked_from_codes(opt: EvalOptions, run_names: list[str], topic_names: list[str], run_code: np.ndarray,
                      t_code: np.ndarray, r_score: np.ndarray, d_code: np.ndarray, vocab: np.ndarray,
                      q_tcode: np.ndarray, q_dcode: np.ndarray, q_grade: np.ndarray, notes: dict, *,
                      presorted: bool = False, d_rank: np.ndarray | None = None,
                      bogus: int | None = None) -> Ranked:
    """The `Ranked` of run rows given as codes (run, judged topic, document into `vocab`; the judgments'
    documents coded into the same `vocab`): -c's stand-in rows, trec_eval's order, the grades. `d_rank`:
    each document's rank in strcmp order (computed when None); `bogus`: BOGUS_DOCNO's code when `vocab`
    holds it (else it is appended when -c needs it). The arrays may be reordered in place."""
    n_topics = len(topic_names)
    missing = np.zeros(0, np.int64)
    if opt.complete and n_topics and run_names:
        present = np.zeros(len(run_names) * n_topics, bool)     # (np.unique would import numpy.ma)
        present[run_code * n_topics + t_code] = True
        missing = np.flatnonzero(~present).astype(np.int64)
        if len(missing):
            if bogus is None:
                vocab = np.append(vocab, BOGUS_DOCNO)
                bogus = len(vocab) - 1
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            d_code = np.concatenate((d_code, np.full(len(missing), bogus, np.int64)))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            notes["topics_filled_by_c"] = int(len(missing))
    # BOGUS_DOCNO may also be a real document: equal strings get one code
    if d_rank is None and len(vocab) != len(set(vocab.tolist())):
        vc, vu = pd.factorize(vocab)
        r_dcode = vc[d_code] if len(d_code) else d_code
        q_dcode = vc[q_dcode] if len(q_dcode) else q_dcode
    else:
        vu, r_dcode = vocab, d_code
    if vu.dtype.kind != "S":
        vu = np.asarray(vu, dtype=object)
    n_docs = max(len(vu), 1)

    # documents are ranked in strcmp order (tie-breaking) only for the rows that must move
    if presorted:
        # store order already; -c fill rows (one per missing group) are moved into place
        order = np.argsort(run_code * n_topics + t_code, kind="stable") if len(missing) else None
    else:
        order = trec_order(run_code, t_code, r_score, n_topics,
                           vocab_tie_order(vu, r_dcode) if d_rank is None else rank_tie_order(d_rank, r_dcode))
    if isinstance(order, tuple):
        # the partial reorder works in place: the code arrays are this function's own (_str_codes
        # returns fresh int64 arrays); the scores may be a view of `runs`
        r_score = r_score.copy()
    run_code, t_code, r_dcode, r_score = apply_order(order, run_code, t_code, r_dcode, r_score)
    rel = lookup_rel(q_tcode, q_dcode, q_grade, t_code, r_dcode, n_topics, n_docs)
    return _assemble(opt, run_names, topic_names, run_code, t_code, r_score, rel, LazyDocs(vu, r_dcode),
                     q_tcode, q_grade, missing)


def _assemble(opt: EvalOptions, run_names: list[str], topic_names: list[str], run_code: np.ndarray,
              t_code: np.ndarray, r_score: np.ndarray, rel: np.ndarray, r_doc, q_tcode: np.ndarray,
              q_grade: np.ndarray, missing: np.ndarray, row_qrel=None, topic_arrays=None) -> Ranked:
    """The `Ranked` of rows already in trec_eval order with their grades (-M, -J applied here).
    `topic_arrays`: `topic_judgments(...)` of these judgments, when the caller has them already."""
    n_topics = len(topic_names)
    gid = run_code.astype(np.int64) * n_topics + t_code
    starts = _seg_starts(gid)
    g_gid = gid[starts] if len(gid) else np.zeros(0, np.int64)
    lens = np.concatenate((starts[1:], [len(gid)])) - starts

    if (opt.max_depth is not None or opt.judged_only) and len(gid):
        keep = np.ones(len(gid), bool)
        if opt.max_depth is not None:
            pos_in = np.arange(len(gid)) - np.repeat(starts, lens)
            keep &= pos_in < opt.max_depth
        if opt.judged_only:
            keep &= rel >= 0
        row_g = np.repeat(np.arange(len(starts)), lens)
        rel, r_score = rel[keep], r_score[keep]
        r_doc = r_doc.subset(keep)
        if row_qrel is not None:
            row_qrel = row_qrel.subset(keep)
        lens = np.bincount(row_g[keep], minlength=len(starts)).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)

    g_run = g_gid // max(n_topics, 1)
    g_topic = g_gid % max(n_topics, 1)
    g_missing = np.isin(g_gid, missing) if len(missing) else np.zeros(len(g_gid), bool)

    t_levels, t_grades_offsets, t_grades, *lg = topic_arrays or topic_judgments(n_topics, q_tcode, q_grade)
    ranked = Ranked(options=opt, run_names=run_names, topic_names=topic_names,
                    g_run=g_run.astype(np.int64), g_topic=g_topic.astype(np.int64), offsets=offsets,
                    rel=rel, doc=r_doc, score=r_score, t_levels=t_levels, t_level_grades=lg[0] if lg else None,
                    t_grades_offsets=t_grades_offsets, t_grades=t_grades, g_missing=g_missing)
    if row_qrel is not None:
        ranked.caches.setdefault("est", {})["row_index_sparse"] = row_qrel
    return ranked


DENSE_LEVELS = 4096   # above this highest grade, t_levels has a column per grade judged, not per 0..max


def topic_judgments(n_topics: int, q_tcode: np.ndarray, q_grade: np.ndarray, max_grade: int | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Per topic the judged documents per grade (topics x 0..max grade; topics x the grades judged, in
    order, when the highest grade is above DENSE_LEVELS), the judged grades sorted descending in CSR
    form (offsets, grades), and the grade of each column (None for 0..max grade). `max_grade`: the
    dense width (default: the highest judged grade), e.g. a subset's keeping its full judgments' width."""
    judged = q_grade >= 0
    jt, jg = q_tcode[judged], q_grade[judged]
    if max_grade is None:
        max_grade = int(jg.max()) if len(jg) else 0
    if max_grade < DENSE_LEVELS:
        grades, col = None, jg
        t_levels = np.zeros((n_topics, max_grade + 1), dtype=np.int64)
    else:
        grades, col = np.unique(jg, return_inverse=True)
        grades = grades.astype(np.int64)
        t_levels = np.zeros((n_topics, len(grades)), dtype=np.int64)
    np.add.at(t_levels, (jt, col), 1)
    srt = np.lexsort((-jg, jt))
    t_counts = np.bincount(jt, minlength=n_topics)
    return t_levels, np.concatenate(([0], np.cumsum(t_counts))).astype(np.int64), jg[srt], grades


def _judged_topics(qrels: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(judged topics in byte order, per qrels row its topic index, per row its grade)."""
    qt_codes, qt_names = _str_codes(qrels["topic"])
    topic_names = sorted(set(qt_names.tolist()), key=lambda s: s.encode("utf-8"))
    index = {t: i for i, t in enumerate(topic_names)}
    q_tcode = np.asarray([index[t] for t in qt_names], np.int64)[qt_codes] if len(qt_codes) else qt_codes
    return topic_names, q_tcode, qrels["grade"].to_numpy(np.int64)


def _check_options(opt: EvalOptions) -> None:
    if opt.rel_level < 0:
        raise CranfieldError(f"-l {opt.rel_level}: the relevance level must be >= 0 (grades below 0 mark "
                             "pooled-but-unjudged documents); use -l 0 to count every judged document")
    if opt.max_depth is not None and opt.max_depth < 0:
        raise CranfieldError(f"-M {opt.max_depth}: the evaluation depth must be >= 0")


def ranked_from_arrow(qrels: pd.DataFrame, table: pa.Table, run_order: list[str],
                      options: EvalOptions | None = None) -> tuple[Ranked, dict]:
    """`build_ranked` for an Arrow table in store order (columns run (dictionary), topic, doc, score;
    runs in `run_order`, each in trec_eval order): the join with the judgments is done on Arrow
    strings, no Python string objects are made per row."""
    opt = options or EvalOptions()
    _check_options(opt)
    notes: dict = {}
    topic_names, q_tcode, q_grade = _judged_topics(qrels)
    n_topics = len(topic_names)
    run_names = list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}

    n = len(table)
    rcol = table.column("run").combine_chunks() if n else None
    run_code = np.zeros(0, np.int64)
    if n:
        rlut = np.asarray([run_index[str(x)] for x in rcol.dictionary.to_pylist()], np.int64)
        run_code = rcol.indices.to_numpy()
        if not np.array_equal(rlut, np.arange(len(rlut))):
            run_code = rlut[run_code]
    t_code = dict_codes(table.column("topic"), topic_names) if n else np.zeros(0, np.int32)
    known = t_code >= 0
    if not known.all():
        rt = pc.unique(table.column("topic").filter(pa.array(~known)).cast(pa.string())).to_pylist()
        notes["topics_without_judgments"] = sorted(rt)
        table = table.filter(pa.array(known))
        run_code, t_code = run_code[known], t_code[known]
        n = len(table)
    r_score = table.column("score").to_numpy() if n else np.zeros(0)
    doc_col = table.column("doc")

    # per row: its judgment row (topic, doc), via the distinct judged documents
    q_doc = qrels["doc"].astype(str).to_numpy(object) if len(qrels) else np.zeros(0, object)
    qd_codes, qd_uniq = pd.factorize(q_doc) if len(q_doc) else (np.zeros(0, np.int64), np.zeros(0, object))
    nu = max(len(qd_uniq), 1)
    d_idx = dict_codes(doc_col, list(qd_uniq)) if n else np.zeros(0, np.int32)
    sel = np.flatnonzero(d_idx >= 0)
    q_sel = _key_lookup(q_tcode * nu + qd_codes, t_code[sel].astype(np.int64) * nu + d_idx[sel],
                        np.ones(len(sel), bool))
    found = q_sel >= 0
    sel, q_sel = sel[found], q_sel[found]

    missing = np.zeros(0, np.int64)
    r_doc = ArrowDocs(doc_col)
    if opt.complete and n_topics and run_names:
        present = np.unique(run_code.astype(np.int64) * n_topics + t_code)
        missing = np.setdiff1d(np.arange(len(run_names) * n_topics, dtype=np.int64), present, assume_unique=True)
        if len(missing):
            b = _bogus_code(qd_uniq)
            bogus_q = _key_lookup(q_tcode * nu + qd_codes, (missing % n_topics) * nu + b,
                                  np.full(len(missing), b >= 0))
            row_qrel = np.full(n + len(missing), -1, np.int64)
            row_qrel[sel] = q_sel
            row_qrel[n:] = bogus_q
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            r_doc = ArrowDocs(pa.chunked_array(r_doc.arr.chunks + [pa.array([BOGUS_DOCNO] * len(missing), pa.string())],
                                               type=pa.string()))
            order = np.argsort(run_code.astype(np.int64) * n_topics + t_code, kind="stable")
            run_code, t_code, r_score, row_qrel = run_code[order], t_code[order], r_score[order], row_qrel[order]
            r_doc = r_doc.subset(order)
            sel = np.flatnonzero(row_qrel >= 0)
            q_sel = row_qrel[sel]
            notes["topics_filled_by_c"] = int(len(missing))
    g = np.where(q_grade < 0, RELVALUE_UNJUDGED, q_grade)
    rel = np.full(len(run_code), RELVALUE_NONPOOL, np.int64)
    rel[sel] = g[q_sel]
    row_qrel = _SparseRows(len(rel), sel, q_sel)
    ranked = _assemble(opt, run_names, topic_names, run_code, t_code, r_score, rel, r_doc, q_tcode, q_grade,
                       missing, row_qrel)
    return ranked, notes


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


def _bogus_code(uniq: np.ndarray) -> int:
    hit = np.flatnonzero(np.asarray(uniq, dtype=object) == BOGUS_DOCNO) if len(uniq) else []
    return int(hit[0]) if len(hit) else -1


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


class _SparseRows:
    """Per row: index of its judgment row, -1 for most rows; kept as the few (row, judgment) pairs."""

    __slots__ = ("n", "rows", "qrows")

    def __init__(self, n: int, rows: np.ndarray, qrows: np.ndarray):
        self.n, self.rows, self.qrows = n, rows, qrows

    def dense(self) -> np.ndarray:
        out = np.full(self.n, -1, np.int64)
        out[self.rows] = self.qrows
        return out

    def subset(self, keep: np.ndarray) -> "_SparseRows":
        newpos = np.cumsum(keep) - 1
        k = keep[self.rows]
        return _SparseRows(int(keep.sum()), newpos[self.rows[k]], self.qrows[k])


class ArrowDocs(_Docs):
    """Per-row document ids held as an Arrow string array, converted to Python strings only when read."""

    __slots__ = ("arr", "_np")

    def __init__(self, arr):
        self.arr = arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
        self._np = None

    def materialize(self) -> np.ndarray:
        if self._np is None:
            self._np = np.asarray(self.arr.to_numpy(zero_copy_only=False), dtype=object)
        return self._np

    def subset(self, key: np.ndarray) -> "ArrowDocs":
        key = np.asarray(key)
        if key.dtype == bool:
            return ArrowDocs(self.arr.filter(pa.array(key)))
        return ArrowDocs(self.arr.take(pa.array(key)))

    def __len__(self) -> int:
        return len(self.arr)


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
