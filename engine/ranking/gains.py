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

from ..util.lazy import LazyPattern

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


# ---------------------------------------------------------------------------- sparse levels
# A topic whose highest grade is N has N + 1 automatic entries (levels 0..N, gain = level), most of
# them for grades nobody used when N is large (a grade of 1000000000). They carry no documents, but
# trec_eval sorts them with the others and its comparator is not transitive, so they can move the
# entries that matter. `sparse_entries` replays the same glibc merge sort with every run of automatic
# entries kept as one range (lo, hi): a range is already in order, two ranges compare exactly (levels
# are C ints, so their differences never reach 2^31), and an explicit gain against a range takes a
# contiguous run of it, found by bisection with the exact comparator. Work: O(pairs x log N).

def _bisect_last(lo: int, hi: int, pred) -> int:
    """The last v in [lo, hi] with pred(v) true, given pred(lo) true and pred monotone (true, then false)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _merge_segments(left: list, right: list) -> list:
    """glibc's merge step (take the left item when cmp <= 0) over segments: ("e", entry) or ("r", lo, hi)."""
    out: list = []
    left, right = list(left), list(right)
    i = j = 0
    while i < len(left) and j < len(right):
        a, b = left[i], right[j]
        if a[0] == "e" and b[0] == "e":
            if _c_int_cmp(a[1][1], b[1][1]) <= 0:
                out.append(a)
                i += 1
            else:
                out.append(b)
                j += 1
        elif a[0] == "e":                               # explicit x against the range b
            x = a[1][1]
            if _c_int_cmp(x, float(b[1])) <= 0:
                out.append(a)
                i += 1
            else:                                       # right items while x - c >= 1 (x - c < 2^31 holds)
                last = _bisect_last(b[1], b[2], lambda c: _c_int_cmp(x, float(c)) > 0)  # noqa: B023  (called here)
                out.append(("r", b[1], last))
                if last == b[2]:
                    j += 1
                else:
                    right[j] = ("r", last + 1, b[2])
        elif b[0] == "e":                               # the range a against explicit y
            y = b[1][1]
            if _c_int_cmp(float(a[1]), y) > 0:
                out.append(b)
                j += 1
            else:
                d = float(a[1]) - y
                if d != d or d >= 2.0 ** 31:            # stays <= 0 for the whole (increasing) range
                    last = a[2]
                else:
                    last = _bisect_last(a[1], a[2], lambda v: float(v) - y < 1.0)  # noqa: B023  (called here)
                out.append(("r", a[1], last))
                if last == a[2]:
                    i += 1
                else:
                    left[i] = ("r", last + 1, a[2])
        else:                                           # two ranges of levels: exact integer order
            if a[1] <= b[1]:
                last = min(a[2], b[1])
                out.append(("r", a[1], last))
                if last == a[2]:
                    i += 1
                else:
                    left[i] = ("r", last + 1, a[2])
            else:
                last = min(b[2], a[1] - 1)
                out.append(("r", b[1], last))
                if last == b[2]:
                    j += 1
                else:
                    right[j] = ("r", last + 1, b[2])
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def _take(segs: list, start: int, n: int) -> list:
    """Items start..start+n-1 of a segment list, as segments."""
    out, pos = [], 0
    for s in segs:
        size = 1 if s[0] == "e" else s[2] - s[1] + 1
        a, b = max(start, pos), min(start + n, pos + size)
        if a < b:
            out.append(s if s[0] == "e" else ("r", s[1] + a - pos, s[1] + b - 1 - pos))
        pos += size
        if pos >= start + n:
            break
    return out


def _msort_segments(segs: list, n: int, n_explicit: int, start: int = 0) -> list:
    """glibc msort of items start..start+n-1; items at or past `n_explicit` are automatic ranges in order."""
    if n <= 1 or start >= n_explicit:
        return _take(segs, start, n)
    n1 = n // 2
    return _merge_segments(_msort_segments(segs, n1, n_explicit, start),
                           _msort_segments(segs, n - n1, n_explicit, start + n1))


@lru_cache(maxsize=4096)
def sparse_entries(pairs: tuple, num_rel_levels: int, keep: tuple) -> tuple:
    """`sorted_entries` restricted to the entries that matter when only the levels in `keep` (sorted)
    have judged documents: ((level, gain, count_level) in trec_eval's sorted order, the sorted list's
    first gain, its last gain, its min and max gain in the order Python's min/max see them).

    Every entry of the explicit pairs is kept (a row's gain is its level's first entry), and of the
    automatic entries those whose level is in `keep`; the others carry no documents."""
    entries: list[list] = []
    for name, value in pairs:
        if valid_level(str(name)):
            entries.append([int(name), float(value), -1])
    named: set = set()
    for e in entries:
        if 0 <= e[0] < num_rel_levels and e[0] not in named:
            e[2] = e[0]
            named.add(e[0])
    segs: list = [("e", tuple(e)) for e in entries]
    lo = 0
    for lvl in sorted(x for x in named):
        if lvl > lo:
            segs.append(("r", lo, lvl - 1))
        lo = lvl + 1
    if lo < num_rel_levels:
        segs.append(("r", lo, num_rel_levels - 1))
    n = len(entries) + num_rel_levels - len(named)
    out = _msort_segments(segs, n, len(entries)) if n else []
    kept: list = []
    seq: list = []                                      # gains in order, ranges by their endpoints
    keep_arr = np.asarray(keep, np.int64)
    for s in out:
        if s[0] == "e":
            kept.append(s[1])
            seq.append(s[1][1])
        else:
            a, b = np.searchsorted(keep_arr, [s[1], s[2] + 1])
            kept.extend((int(v), float(v), int(v)) for v in keep_arr[a:b])
            seq += [float(s[1]), float(s[2])]
    if not seq:
        return (), None, None, None, None
    return tuple(kept), seq[0], seq[-1], min(seq), max(seq)


def normalized_sparse(kept: tuple, lo: float, hi: float) -> tuple:
    """`normalized` for the kept entries of a list whose min and max gains are `lo` and `hi`."""
    if lo < 0 or hi > 1:
        span = hi - lo
        return tuple((e[0], (e[1] - lo) / span if span else math.nan, e[2]) for e in kept)
    return kept


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


@dataclass(eq=False, repr=False)        # holds arrays: no comparison or repr to generate
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
    return np.where(nz.any(axis=1), r.level_grades[last] + 1, 0).astype(np.int64)


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
    if len(v) == 0:
        return v.copy()
    lens = np.diff(offsets)
    longest = int(lens.max(initial=0))
    if longest and offsets[0] == 0 and offsets[-1] == len(v) and (lens == longest).all():
        # segments of one length (rankings cut at one depth): an accumulate along each row of a 2-D
        # view adds in order within the row, as the loop does
        return np.add.accumulate(v.reshape(len(lens), longest), axis=1).reshape(-1)
    out = v.copy()
    if len(lens) <= 64 and len(lens) < longest:
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


def level_columns(r, levels: np.ndarray) -> np.ndarray:
    """Column of each level (-2, -1 or a judged grade) in a per-topic table with columns
    [-2, -1, *r.level_grades]; levels >= 0 must be judged grades."""
    levels = np.asarray(levels, np.int64)
    if r.t_level_grades is None:
        return levels + 2
    return np.where(levels < 0, levels + 2, 2 + np.searchsorted(r.level_grades, levels))


def gain_model(r, pairs: tuple = (), normalize: bool = False) -> GainModel:
    """The `GainModel` for gain parameters `pairs` ((name, value), ...), cached on the Ranked. Tables
    have a column per grade judged (`Ranked.level_grades`), so a grade of 1000000000 costs one column."""
    key = ("model", tuple((str(a), float(b)) for a, b in pairs), normalize)
    c = _cache(r)
    if key in c:
        return c[key]
    n_topics = len(r.topic_names)
    nrl = topic_num_rel_levels(r)
    lg = r.level_grades
    col_of = {-2: 0, -1: 1, **{int(g): i + 2 for i, g in enumerate(lg.tolist())}}
    table = np.zeros((n_topics, len(lg) + 2))           # columns: levels -2, -1, then each judged grade
    ent_topic, ent_gain, ent_count = [], [], []
    for v in sorted(set(nrl.tolist())):
        ts = np.flatnonzero(nrl == v)
        keep = tuple(int(x) for x in lg[lg < v])
        ents, _, top, lo, hi = sparse_entries(key[1], int(v), keep)
        if normalize and ents:
            ents = normalized_sparse(ents, lo, hi)
            if lo < 0 or hi > 1:
                top = (top - lo) / (hi - lo) if hi - lo else math.nan
        row = np.zeros(len(lg) + 2)
        seen: set = set()
        for lvl, g, _ in ents:
            if lvl not in seen and lvl in col_of:
                row[col_of[lvl]] = g
            seen.add(lvl)
        table[ts] = row
        if not ents:
            continue
        top_down = ents[::-1]
        gains = np.array([e[1] for e in top_down])
        src = np.array([col_of.get(e[2], -1) if e[2] >= 0 else -1 for e in top_down]) - 2
        counts = np.zeros((len(ts), len(top_down)), np.int64)
        has = src >= 0
        counts[:, has] = r.t_levels[np.ix_(ts, src[has])]
        bad = (counts > 0) & (gains <= 0.0)[None, :]
        ok = np.cumsum(bad, axis=1) == 0
        if top <= 0.0:                # the walk never starts when the top entry's gain is <= 0
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
    row_gain = table[row_topic(r), level_columns(r, r.rel)] if r.n_rows else np.zeros(0)
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
