"""Gains and ideal rankings for the gain-based measures, following trec_eval 10.0's gain set-up.

trec_eval builds, per topic, a list of (relevance level, gain, number of judged documents) entries:
first the valid `level=gain` parameter pairs in the order given (a name that is not an integer, such
as rbp's `p`, is skipped), then every level 0..num_rel_levels-1 of the topic not named by a pair,
with gain = level. The list is sorted by increasing gain with a comparator that truncates the gain
difference to an int, so gains closer than 1 compare equal; the sort is glibc's stable merge sort,
which we replay exactly (`sorted_entries`). A retrieved document's gain is the first entry with its
level (0 when none: unjudged documents, unless a pair names level -1 or -2). The ideal ranking walks
the entries from the top, each repeated by its count, and stops at the first gain <= 0.

Everything per row or per ideal position is computed with numpy over all groups at once; Python
loops run only over the few distinct entry lists (one per distinct num_rel_levels).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._lazy import LazyPattern

_INT_RE = LazyPattern(r"[+-]?[0-9]+")
_INT_MIN = -(2 ** 31)


def valid_level(name: str) -> bool:
    """trec_eval's valid_int: optional sign then ASCII digits only."""
    return _INT_RE.fullmatch(name) is not None


def _c_int_cmp(a: float, b: float) -> int:
    """trec_eval's comp_rel_gain: (int)(a - b), as x86-64 converts (out of range or NaN -> INT_MIN)."""
    d = a - b
    if d != d or not (-2.0 ** 31 < d < 2.0 ** 31):
        return _INT_MIN
    return int(d)


def _glibc_msort(items: list, key) -> list:
    """glibc qsort for small arrays: top-down merge sort, taking the left item when cmp <= 0."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    left, right = _glibc_msort(items[:n1], key), _glibc_msort(items[n1:], key)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if _c_int_cmp(key(left[i]), key(right[j])) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


@lru_cache(maxsize=4096)
def sorted_entries(pairs: tuple, num_rel_levels: int) -> tuple:
    """trec_eval's gain entries for a topic with `num_rel_levels` levels, in its sorted order.

    Each entry is (level, gain, count_level): count_level is the judgment level whose number of
    documents the entry carries, or -1 for an entry that carries none (a duplicate or an absent level).
    """
    entries: list[list] = []
    for name, value in pairs:
        if valid_level(str(name)):
            entries.append([int(name), float(value), -1])
    for lvl in range(num_rel_levels):
        for e in entries:
            if e[0] == lvl:
                e[2] = lvl
                break
        else:
            entries.append([lvl, float(lvl), lvl])
    return tuple(tuple(e) for e in _glibc_msort(entries, key=lambda e: e[1]))


def normalized(entries: tuple) -> tuple:
    """rbp's rescaling: when a gain lies outside [0, 1], map gains linearly from [min, max] to [0, 1]."""
    if not entries:
        return entries
    gains = [e[1] for e in entries]
    lo, hi = min(gains), max(gains)
    if lo < 0 or hi > 1:
        span = hi - lo
        return tuple((e[0], (e[1] - lo) / span if span else math.nan, e[2]) for e in entries)
    return entries


@dataclass
class GainModel:
    """Gains of retrieved rows and each topic's ideal ranking (its positive-gain prefix)."""

    row_gain: np.ndarray      # per row: gain of the retrieved document
    t_len: np.ndarray         # per topic: ideal positions before the first gain <= 0 (L)
    t_off: np.ndarray         # per topic: CSR offsets into the ideal arrays (len n_topics + 1)
    ideal_gain: np.ndarray    # per ideal position: gain (> 0)
    cum_idcg: np.ndarray      # per ideal position: ideal DCG through it
    t_idcg: np.ndarray        # per topic: ideal DCG over the whole prefix
    t_ideal_sum: np.ndarray   # per topic: sum of ideal gains over the prefix

    def ideal_at(self, t: np.ndarray, k: np.ndarray, cum: np.ndarray | None = None) -> np.ndarray:
        """Per (topic, k) the ideal cumulative value through the first min(k, L) positions (0 for k < 1)."""
        cum = self.cum_idcg if cum is None else cum
        eff = np.minimum(k, self.t_len[t])
        out = np.zeros(len(t))
        ok = eff >= 1
        out[ok] = cum[self.t_off[t[ok]] + eff[ok] - 1]
        return out


def topic_num_rel_levels(r) -> np.ndarray:
    """Per topic: 1 + the highest grade with a judged document (0 when none)."""
    lv = r.t_levels
    if lv.size == 0:
        return np.zeros(lv.shape[0], np.int64)
    nz = lv > 0
    last = lv.shape[1] - 1 - np.argmax(nz[:, ::-1], axis=1)
    return np.where(nz.any(axis=1), last + 1, 0).astype(np.int64)


_LOG2 = np.array([-np.inf, 0.0])


def log2_table(n: int) -> np.ndarray:
    """log2(k) for k = 0..n, from the C library's log2 (as trec_eval), computed once per length."""
    global _LOG2
    if len(_LOG2) <= n:
        m = max(n + 1, 2 * len(_LOG2))
        _LOG2 = np.concatenate((_LOG2, np.fromiter((math.log2(k) for k in range(len(_LOG2), m)),
                                                   np.float64, m - len(_LOG2))))
    return _LOG2


def log2_of(k: np.ndarray) -> np.ndarray:
    """log2 of positive integers, element-wise, bit-identical to C's log2."""
    k = np.asarray(k, dtype=np.int64)
    if k.size == 0:
        return np.zeros(0)
    return log2_table(int(k.max()))[k]


def powers(p: float, n: int) -> np.ndarray:
    """p^0 .. p^n by repeated multiplication, as trec_eval accumulates them."""
    return np.cumprod(np.concatenate(([1.0], np.full(n, p))))


def seg_cumsum_float(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at each segment of a CSR layout, summed in order within the segment
    only: bit-identical to a sequential C loop, with no cancellation against other segments.

    Vectorized over segments, one step per position (rank): step j adds the j-th value of every
    segment longer than j.
    """
    v = np.asarray(values, dtype=np.float64)
    out = v.copy()
    if len(v) == 0:
        return out
    lens = np.diff(offsets)
    if len(lens) <= 64 and len(lens) < int(lens.max(initial=0)):
        # few segments (a small call): one sequential accumulate per segment, the same additions in order
        for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
            if b > a:
                out[a:b] = np.add.accumulate(v[a:b])
        return out
    order = np.argsort(-lens, kind="stable")           # longest first: active segments are a prefix
    starts, lens_sorted = offsets[:-1][order], lens[order]
    n_active = np.searchsorted(-lens_sorted, -np.arange(int(lens_sorted[0])), side="left")
    for j in range(1, int(lens_sorted[0])):
        idx = starts[: n_active[j]] + j                 # n_active[j]: segments longer than j
        out[idx] += out[idx - 1]
    return out


def _cache(r) -> dict:
    return r.caches.setdefault("gain", {})


def row_topic(r) -> np.ndarray:
    """Per row: topic index."""
    c = _cache(r)
    if "row_topic" not in c:
        c["row_topic"] = r.g_topic[r.row_group] if r.n_rows else np.zeros(0, np.int64)
    return c["row_topic"]


def rank_log2(r) -> np.ndarray:
    """Per row: log2(rank + 1), trec_eval's divisor (the multiplicative `discount` is graded.discount)."""
    c = _cache(r)
    if "discount" not in c:
        c["discount"] = log2_of(r.rank + 1)
    return c["discount"]


def seg_cumsum_rows(r, values: np.ndarray) -> np.ndarray:
    """Per row: in-order cumulative sum of `values` within its (run, topic) group."""
    return seg_cumsum_float(values, r.offsets)


def gain_model(r, pairs: tuple = (), normalize: bool = False) -> GainModel:
    """The `GainModel` for gain parameters `pairs` ((name, value), ...), cached on the Ranked."""
    key = ("model", tuple((str(a), float(b)) for a, b in pairs), normalize)
    c = _cache(r)
    if key in c:
        return c[key]
    n_topics = len(r.topic_names)
    nrl = topic_num_rel_levels(r)
    width = r.t_levels.shape[1]
    table = np.zeros((n_topics, width + 2))           # column = level + 2 (levels -2 .. max grade)
    ent_topic, ent_gain, ent_count = [], [], []
    for v in sorted(set(nrl.tolist())):
        ts = np.flatnonzero(nrl == v)
        ents = sorted_entries(key[1], int(v))
        if normalize:
            ents = normalized(ents)
        row = np.zeros(width + 2)
        seen: set = set()
        for lvl, g, _ in ents:
            if lvl not in seen and -2 <= lvl < width:
                row[lvl + 2] = g
            seen.add(lvl)
        table[ts] = row
        if not ents:
            continue
        top_down = ents[::-1]
        gains = np.array([e[1] for e in top_down])
        src = np.array([e[2] for e in top_down])
        counts = np.zeros((len(ts), len(top_down)), np.int64)
        has = (src >= 0) & (src < width)
        counts[:, has] = r.t_levels[np.ix_(ts, src[has])]
        bad = (counts > 0) & (gains <= 0.0)[None, :]
        ok = np.cumsum(bad, axis=1) == 0
        if gains[0] <= 0.0:           # the walk never starts when the top entry's gain is <= 0
            ok[:] = False
        eff = counts * ok
        ent_topic.append(np.repeat(ts, len(top_down)))
        ent_gain.append(np.tile(gains, len(ts)))
        ent_count.append(eff.ravel())
    if ent_topic:
        et, eg, ec = (np.concatenate(a) for a in (ent_topic, ent_gain, ent_count))
        srt = np.argsort(et, kind="stable")
        et, eg, ec = et[srt], eg[srt], ec[srt]
        ideal_gain = np.repeat(eg, ec)
        t_len = np.bincount(et, weights=ec, minlength=n_topics).astype(np.int64)
    else:
        ideal_gain = np.zeros(0)
        t_len = np.zeros(n_topics, np.int64)
    t_off = np.concatenate(([0], np.cumsum(t_len))).astype(np.int64)
    pos = np.arange(len(ideal_gain)) - np.repeat(t_off[:-1], t_len)
    cum_idcg = seg_cumsum_float(ideal_gain / log2_of(pos + 2), t_off)
    cum_sum = seg_cumsum_float(ideal_gain, t_off)
    last = t_off[1:] - 1
    has = t_len > 0
    t_idcg = np.zeros(n_topics)
    t_sum = np.zeros(n_topics)
    t_idcg[has] = cum_idcg[last[has]]
    t_sum[has] = cum_sum[last[has]]
    row_gain = table[row_topic(r), r.rel + 2] if r.n_rows else np.zeros(0)
    model = GainModel(row_gain, t_len, t_off, ideal_gain, cum_idcg, t_idcg, t_sum)
    c[key] = model
    return model


def results_dcg(r, model: GainModel) -> np.ndarray:
    """Per row: the run's DCG through this rank (gain / log2(rank + 1), summed in rank order)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return seg_cumsum_rows(r, model.row_gain / rank_log2(r))


def group_value_at(r, per_row: np.ndarray, g: np.ndarray, k: np.ndarray, before: float = 0.0) -> np.ndarray:
    """Per (group, k) pair: per-row cumulative value at rank min(k, num_ret); `before` when that is < 1."""
    eff = np.minimum(k, r.num_ret[g])
    out = np.full(len(g), before, dtype=np.float64)
    ok = eff >= 1
    if ok.any():
        out[ok] = per_row[r.offsets[g[ok]] + eff[ok] - 1]
    return out


def pair_param(params: tuple, name: str, default: float) -> float:
    """The value of the last `name=value` pair (trec_eval keeps the last one), else `default`."""
    val = default
    for k, v in params:
        if str(k) == name:
            val = float(v)
    return val
