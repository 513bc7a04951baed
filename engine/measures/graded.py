"""Gains per grade and rank discounts for graded measures (nDCG variants, Q-measure, rpref, GAP).

Gains come, in order of precedence, from the measure parameters (`gains=0:1:3`: gain of grade 0, 1, 2),
from the campaign (compute(..., extra={"gains": {grade: gain}}), as campaign.yaml relevance.scale), or
default to the grade itself for grades at or above the relevance level and 0 below it.
"""
from __future__ import annotations

import numpy as np

from .registry import MeasureError
from ..ranking.ranked import Ranked


class GradeGains:
    """g[grade] for grades 0..len-1 without an array of that length (the judgments' highest grade is
    large, `Ranked.t_level_grades`): gains named per grade (others 0), or by default the grade itself
    at or above the relevance level. Indexing and len() behave as the dense array would."""

    def __init__(self, length: int, keys: np.ndarray | None = None, values: np.ndarray | None = None,
                 rel_level: int = 0):
        self.length, self.keys, self.values, self.rel_level = int(length), keys, values, rel_level

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, idx):
        i = np.asarray(idx, np.int64)
        if self.keys is None:
            out = np.where(i >= self.rel_level, i, 0).astype(np.float64)
        else:
            pos = np.minimum(np.searchsorted(self.keys, i), max(len(self.keys) - 1, 0))
            hit = (self.keys[pos] == i) if len(self.keys) else np.zeros(i.shape, bool)
            out = np.where(hit, self.values[pos] if len(self.keys) else 0.0, 0.0)
        return out if np.ndim(idx) else float(out)

    def max(self) -> float:
        if self.keys is None:
            return float(self.length - 1) if self.length - 1 >= self.rel_level else 0.0
        m = float(self.values.max()) if len(self.values) else 0.0
        return max(m, 0.0) if self.length > len(self.keys) else m


def gains_per_grade(r: Ranked, explicit: np.ndarray | None = None) -> np.ndarray | GradeGains:
    """Array g[grade] for grades 0..max grade of the judgments (length >= 1); a `GradeGains` with the
    same values when the highest grade is large (no array over every grade)."""
    n = max(r.max_grade + 1, 1)
    lv = max(r.options.rel_level, 0)
    if r.t_level_grades is not None:
        return _sparse_gains(r, explicit, n, lv)
    if explicit is not None:
        g = np.zeros(max(n, len(explicit)))
        g[: len(explicit)] = explicit
        return g
    extra = getattr(r, "extra", None) or {}
    table = extra.get("gains") if isinstance(extra, dict) else None
    if table:
        g = np.zeros(max(n, max(int(k) for k in table) + 1))
        for k, v in table.items():
            if int(k) >= 0:
                g[int(k)] = float(v)
        return g
    g = np.arange(n, dtype=np.float64)
    g[:lv] = 0.0
    return g


def _sparse_gains(r: Ranked, explicit, n: int, lv: int) -> GradeGains:
    if explicit is not None:
        e = np.asarray(explicit, np.float64)
        return GradeGains(max(n, len(e)), np.arange(len(e), dtype=np.int64), e)
    extra = getattr(r, "extra", None) or {}
    table = extra.get("gains") if isinstance(extra, dict) else None
    if table:
        items = sorted((int(k), float(v)) for k, v in table.items() if int(k) >= 0)
        keys = np.array([k for k, _ in items], np.int64)
        return GradeGains(max(n, max(int(k) for k in table) + 1), keys, np.array([v for _, v in items]))
    return GradeGains(n, rel_level=lv)


def row_gains(r: Ranked, gains: np.ndarray, rel: np.ndarray | None = None) -> np.ndarray:
    """Per row gain (0 for unjudged or non-pool rows)."""
    rel = r.rel if rel is None else rel
    out = np.zeros(len(rel))
    ok = rel >= 0
    gi = np.minimum(rel[ok], len(gains) - 1)
    out[ok] = np.where(rel[ok] < len(gains), gains[gi], 0.0)
    return out


DISCOUNTS = ("log", "sakai", "zipf", "linear", "vec")


def discount(ranks: np.ndarray, kind: str = "log", b: float = 2.0, a: float = 2.0,
             k: int | None = None, vec: np.ndarray | None = None) -> np.ndarray:
    """Multiplicative discount per rank (1-based).

    log    : 1 / log_b(r + b - 1)           (thesis 3.1.4; b = 2 is 1/log2(r + 1))
    sakai  : 1 for r <= a, 1 / log_a(r) after (Sakai 2007 eq. 22, Jarvelin-Kekalainen)
    zipf   : 1 / r
    linear : (k + 1 - r) / k for r <= k, 0 after (needs a cut-off k)
    vec    : explicit discounts for ranks 1..len(vec), 0 after
    """
    r = np.asarray(ranks, dtype=np.float64)
    if kind == "log":
        if b <= 1:
            raise MeasureError(f"log discount base must be > 1 (got {b})")
        return np.log(b) / np.log(r + b - 1.0)
    if kind == "sakai":
        if a <= 1:
            raise MeasureError(f"sakai discount base must be > 1 (got {a})")
        out = np.ones_like(r)
        big = r > a
        out[big] = np.log(a) / np.log(r[big])
        return out
    if kind == "zipf":
        return 1.0 / r
    if kind == "linear":
        if k is None:
            raise MeasureError("linear discount needs a cut-off (k=N)")
        return np.clip((k + 1.0 - r) / k, 0.0, None)
    if kind == "vec":
        if vec is None or len(vec) == 0:
            raise MeasureError("vec discount needs values (dvec=1:0.5:0.3)")
        out = np.zeros_like(r)
        ok = (r >= 1) & (r <= len(vec))
        out[ok] = vec[r[ok].astype(np.int64) - 1]
        return out
    raise MeasureError(f"unknown discount {kind!r} (known: {', '.join(DISCOUNTS)})")


def ideal_gains(r: Ranked, gains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per topic ideal list as CSR (offsets, gains sorted descending), judged documents only."""
    off = r.t_grades_offsets
    gr = r.t_grades
    if len(gr) == 0:
        return off, np.zeros(0)
    g = np.where(gr < len(gains), gains[np.minimum(gr, len(gains) - 1)], 0.0)
    # sort gains descending within each topic (gains need not be monotone in the grade)
    t = np.repeat(np.arange(len(off) - 1), np.diff(off))
    order = np.lexsort((-g, t))
    return off, g[order]


def ideal_cumulative_at(r: Ranked, gains: np.ndarray, per_row_rank: np.ndarray,
                        row_topic: np.ndarray) -> np.ndarray:
    """cg_I(rank) of the ideal list of each row's topic, at each row's rank (rank beyond -> total)."""
    off, ig = ideal_gains(r, gains)
    c = np.concatenate(([0.0], np.cumsum(ig)))
    n_t = np.diff(off)
    k = np.minimum(per_row_rank, n_t[row_topic])
    return c[off[row_topic] + k] - c[off[row_topic]]
