"""Preference measures on condensed lists (Sakai 2007 eqs. 9-20; Buttcher et al. 2007 sec. 2).

All are computed from the condensed list (judged documents only) of each run and topic:
r' is the rank in the condensed list, count(r') the relevant documents in the top r', so
r' - count(r') judged non-relevant documents are ranked above a relevant document at r'.
Relevant documents the run did not retrieve contribute nothing (Sakai's sums run over r').
"""
from __future__ import annotations

import numpy as np

from ..ranking.ranked import Ranked
from .condensed import condense
from .graded import gains_per_grade, row_gains


def binary_terms(r: Ranked):
    """(condensed Ranked, per-row is_rel, per-row nonrel_above, R, N) for binary preference measures."""
    c = condense(r)
    rel = c.is_rel
    nonrel_above = c.rank - c.cum_rel          # for relevant rows: judged non-relevant above
    R = c.num_rel.astype(np.float64)
    N = c.num_nonrel.astype(np.float64)
    return c, rel, nonrel_above.astype(np.float64), R, N


def _div(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def bpref_capped(r: Ranked, extra_nonrel: float) -> np.ndarray:
    """bpref with the first R + extra judged non-relevant documents (extra=0: bpref, 10: bpref-10).

    Per relevant document: 1 - min(nonrel_above, R + extra) / min(N, R + extra); 1 when nothing above.
    """
    c, rel, na, R, N = binary_terms(r)
    cap = R + extra_nonrel
    capr = cap[c.row_group]
    den = np.minimum(N, cap)[c.row_group]
    term = np.where(na > 0, 1.0 - _div(np.minimum(na, capr), den), 1.0)
    s = c.seg_sum(np.where(rel, term, 0.0))
    return _div(s, R)


def bpref_allnonrel(r: Ranked) -> np.ndarray:
    """bpref_N (bpref_allnonrel): 1/R sum over relevant r' of 1 - (r' - count(r')) / N (eq. 11)."""
    c, rel, na, R, N = binary_terms(r)
    term = np.where(na > 0, 1.0 - _div(na, N[c.row_group]), 1.0)
    return _div(c.seg_sum(np.where(rel, term, 0.0)), R)


def bpref_relative(r: Ranked) -> np.ndarray:
    """bpref_relative: 1/R sum over relevant r' != 1 of 1 - (r' - count(r')) / (r' - 1) (eq. 18)."""
    c, rel, na, R, N = binary_terms(r)
    term = 1.0 - _div(na, c.rank - 1.0)
    return _div(c.seg_sum(np.where(rel & (c.rank > 1), term, 0.0)), R)


def rankeff(r: Ranked) -> np.ndarray:
    """RankEff (Gronqvist; Buttcher et al. 2007 sec. 2).

    1/(R N) * sum over retrieved relevant documents of the judged non-relevant documents ranked below
    them (unretrieved non-relevant documents count as below every retrieved one; unretrieved
    relevant documents rank below everything and contribute 0). Topics with N = 0: recall.
    """
    c, rel, na, R, N = binary_terms(r)
    below = N[c.row_group] - na
    s = c.seg_sum(np.where(rel, below, 0.0))
    out = _div(s, R * N)
    noN = (N == 0) & (R > 0)
    out[noN] = _div(c.num_rel_ret[noN], R[noN])
    return out


def graded_terms(r: Ranked, gains: np.ndarray | None = None):
    """(condensed, per-row gain, per-row penalty, cg_I(R), R, N, gain_H) for the rpref family (eq. 15)."""
    c = condense(r)
    g_tab = gains_per_grade(r, gains)
    g = row_gains(c, g_tab)
    # penalty(r') = sum over documents above with smaller gain of (g(r') - g(i')) / g(r')
    levels = np.unique(g)                               # gain values present in the condensed lists
    pen = np.zeros(c.n_rows)
    for lv in levels:
        is_l = g == lv
        cnt_above = c.seg_cumsum(is_l) - is_l
        pen += np.where(lv < g, cnt_above * (g - lv), 0.0)
    pen = _div(pen, g)
    # R' scaled: cg_I(R) is the total gain of the topic's judged documents
    tg = np.zeros(len(c.topic_names))
    if len(c.t_grades):
        gg = np.where(c.t_grades < len(g_tab), g_tab[np.minimum(c.t_grades, len(g_tab) - 1)], 0.0)
        tg = np.add.reduceat(gg, c.t_grades_offsets[:-1]) if len(gg) else tg
        tg = np.where(np.diff(c.t_grades_offsets) > 0, tg, 0.0)
    cgI = tg[c.g_topic]
    gain_H = float(g_tab.max()) if len(g_tab) else 0.0
    R = c.num_rel.astype(np.float64)
    N = c.num_nonrel.astype(np.float64)
    return c, g, pen, cgI, R, N, gain_H


def rpref_N(r: Ranked, gains=None) -> np.ndarray:
    """rpref_N (eq. 16): 1/cg_I(R) sum g(r') (1 - penalty(r') / (R + N - cg_I(R)/gain(H)))."""
    c, g, pen, cgI, R, N, gH = graded_terms(r, gains)
    Np = R + N - _div(cgI, np.full_like(cgI, gH))
    term = g * (1.0 - _div(pen, Np[c.row_group]))
    term = np.where(pen > 0, term, g)
    return _div(c.seg_sum(np.where(g > 0, term, 0.0)), cgI)


def rpref_relative(r: Ranked, gains=None) -> np.ndarray:
    """rpref_relative (eq. 17): 1/cg_I(R) sum over r' != 1 of g(r') (1 - penalty(r') / (r' - 1))."""
    c, g, pen, cgI, R, N, gH = graded_terms(r, gains)
    term = g * (1.0 - _div(pen, c.rank - 1.0))
    return _div(c.seg_sum(np.where((g > 0) & (c.rank > 1), term, 0.0)), cgI)


def rpref_relative2(r: Ranked, gains=None) -> np.ndarray:
    """rpref_relative2 (eq. 19): 1/cg_I(R) sum g(r') (1 - penalty(r') / r')."""
    c, g, pen, cgI, R, N, gH = graded_terms(r, gains)
    term = g * (1.0 - pen / np.maximum(c.rank, 1))
    return _div(c.seg_sum(np.where(g > 0, term, 0.0)), cgI)


def bpref_relative2(r: Ranked) -> np.ndarray:
    """bpref_relative2 (eq. 20): 1/R sum over relevant r' of 1 - (r' - count(r')) / r'  (= AP')."""
    c, rel, na, R, N = binary_terms(r)
    term = 1.0 - na / np.maximum(c.rank, 1)
    return _div(c.seg_sum(np.where(rel, term, 0.0)), R)
