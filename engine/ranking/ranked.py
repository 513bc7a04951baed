"""The columnar ranked-list structure every measure is computed from.

All runs and topics are laid out in one flat array sorted by (run, topic, score desc, doc desc), exactly
trec_eval's order (ties on score broken by document id in decreasing strcmp order), with CSR-style offsets
per (run, topic) group. Measures are vectorized segment operations over it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np

from ..util.lazy import lazy_module

pa = lazy_module("pyarrow")


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
    ascending_ties: bool = False         # tied scores by document id ascending (ir_measures' judged, msmarco)


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


@dataclass(eq=False, repr=False)        # holds arrays: no comparison or repr to generate
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
    def min_ret(self) -> int:
        """The length of the shortest list (0 without groups)."""
        return int(self.num_ret.min()) if self.n_groups else 0

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
        c = self.caches.get("judgments")            # the judgments' own fact: kept across runs when shared
        if c is not None and "t_num_rel" in c:
            return c["t_num_rel"]
        lv = max(self.options.rel_level, 0)
        out = self.t_levels[:, self.level_grades >= lv].sum(axis=1)
        if c is not None:
            c["t_num_rel"] = out
        return out

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
        if self.n_rows == 0:
            return v.astype(np.int64) if v.dtype == bool else v.copy()
        if v.dtype.kind == "f":
            # summed within the group only (as trec_eval's per-topic loop): exact whatever else is in the
            # table, so results do not depend on how runs and topics are batched
            from .gains import seg_cumsum_float
            return seg_cumsum_float(v, self.offsets)
        c = np.cumsum(v, dtype=np.int64) if v.dtype == bool else np.cumsum(v)
        c -= np.repeat(np.concatenate(([0], c))[self.offsets[:-1]], self.num_ret)
        return c

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
    def rel_precision(self) -> np.ndarray:
        """Per relevant retrieved row (the rows of `rel_idx`): precision at its rank."""
        idx = self.rel_idx
        return self.cum_rel[idx] / self.rank[idx]

    @cached_property
    def rel_precision_sum(self) -> np.ndarray:
        """Per group: precision at each relevant retrieved rank, summed in rank order (AP's numerator;
        the same sum, bit for bit, as over every row with 0 for the others)."""
        return np.bincount(self.row_group[self.rel_idx], weights=self.rel_precision, minlength=self.n_groups)

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
        if isinstance(k, (int, np.integer)) and k >= 1 and extend_last and self.min_ret >= 1:
            # one cut-off, every list non-empty (the common case): the row at min(k, length) of each group
            return per_row[self.offsets[:-1] + np.minimum(num_ret, k) - 1].astype(np.float64)
        if isinstance(k, (int, np.integer)):          # one cut-off for every group
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
        idx = self.rel_idx
        prec = self.rel_precision
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
        keep = np.asarray(keep)
        if keep.dtype != bool:                 # a permutation of the rows
            newpos = np.empty(self.n, np.int64)
            newpos[keep] = np.arange(len(keep))
            return _SparseRows(self.n, newpos[self.rows], self.qrows)
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

