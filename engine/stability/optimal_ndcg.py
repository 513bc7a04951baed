"""Stability-optimal nDCG (kanoulas thesis 5.1): gains per relevance grade and discounts per rank
that maximize the dependability Phi of nDCG@N (variance components of the nDCG scores, Phi for one
topic: Phi is monotone in the number of topics), found with scipy's SLSQP.

Constraints (thesis Figure 5.1): discounts form a probability distribution over ranks 1..N and do not
increase with rank; gains form a probability distribution over the relevant grades (non-relevant
gain 0) and do not decrease with grade. The optimum is compared with the Zipfian (1/r), linear
((N+1-r)/N) and log (1/log2(1+r)) discounts and with linear (g) and exponential (2^g - 1) gains by
the number of topics needed for Phi >= 0.95 (thesis Tables 5.1 and 5.3).

nDCG@N here is sum_r gain(grade_r) disc_r over the run's top N divided by the same sum over the
ideal ranking of the topic's judged grades; topics without a relevant judgment are left out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..ranking.ranked import EvalOptions
from ..ranking.build import build_ranked
from .matrix import Progress, kendall_tau, report
from .gtheory import anova, g_study, topics_needed


@dataclass
class GradeRanks:
    """One-hot grade indicators at ranks 1..N for every (run, topic) and for each topic's ideal list."""

    runs: list[str]
    topics: list[str]
    cutoff: int
    max_grade: int
    run_counts: np.ndarray     # (grades 1..K, topics * runs, N): 1 where the doc at rank r has grade k
    ideal_counts: np.ndarray   # (grades 1..K, topics, N)

    def truncate(self, cutoff: int) -> "GradeRanks":
        """The same lists cut at a smaller rank."""
        if not 1 <= cutoff <= self.cutoff:
            raise CranfieldError(f"cut-off {cutoff} is outside 1..{self.cutoff}")
        return GradeRanks(self.runs, self.topics, cutoff, self.max_grade,
                          self.run_counts[:, :, :cutoff], self.ideal_counts[:, :, :cutoff])

    def ndcg(self, gains: np.ndarray, disc: np.ndarray) -> np.ndarray:
        """topics x runs nDCG@N for gains (K values for grades 1..K) and discounts (N values)."""
        num = np.tensordot(gains, self.run_counts @ disc, axes=1)
        den = np.tensordot(gains, self.ideal_counts @ disc, axes=1)
        nt, nr = len(self.topics), len(self.runs)
        num = num.reshape(nt, nr)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den[:, None] > 0, num / den[:, None], 0.0)


def grade_ranks(qrels: pd.DataFrame, runs: pd.DataFrame, cutoff: int = 20, rel_level: int = 1) -> GradeRanks:
    """Grade indicators at ranks 1..cutoff (trec_eval order; unjudged counts as non-relevant)."""
    if cutoff < 1:
        raise CranfieldError("the nDCG cut-off must be >= 1")
    r, _ = build_ranked(qrels, runs, EvalOptions(rel_level=rel_level))
    if r.t_level_grades is not None:          # one gain per grade 1..max is optimized
        raise CranfieldError(f"optimal nDCG gains: the highest grade {r.max_grade} is too large; one gain per "
                             f"grade 1..max is optimized (use a small scale, e.g. 0-4)")
    nt_all, nr = len(r.topic_names), len(r.run_names)
    g = np.where(r.rel >= rel_level, r.rel, 0)
    K = int(max(g.max() if len(g) else 0, 0))
    tl = r.t_levels
    has_rel = tl[:, rel_level:].sum(axis=1) > 0 if tl.shape[1] > rel_level else np.zeros(nt_all, bool)
    if K < 1 or not has_rel.any():
        raise CranfieldError("no relevant judgments: nDCG is undefined")
    topics = np.flatnonzero(has_rel)
    tpos = -np.ones(nt_all, np.int64)
    tpos[topics] = np.arange(len(topics))
    nt = len(topics)
    lens = np.diff(r.offsets)
    row_g = np.repeat(np.arange(r.n_groups), lens)
    pos = np.arange(len(g)) - np.repeat(r.offsets[:-1], lens)
    ok = (pos < cutoff) & (g > 0) & (tpos[r.g_topic[row_g]] >= 0)
    cell = tpos[r.g_topic[row_g[ok]]] * nr + r.g_run[row_g[ok]]
    rc = np.zeros((K, nt * nr, cutoff))
    np.add.at(rc, (g[ok] - 1, cell, pos[ok]), 1.0)
    ic = np.zeros((K, nt, cutoff))
    for ti, t in enumerate(topics):
        gr = r.t_grades[r.t_grades_offsets[t]:r.t_grades_offsets[t + 1]]
        gr = np.where(gr >= rel_level, gr, 0)[:cutoff]
        for p, v in enumerate(gr):
            if v > 0:
                ic[min(v, K) - 1, ti, p] = 1.0
    return GradeRanks(runs=list(r.run_names), topics=[r.topic_names[t] for t in topics], cutoff=cutoff,
                      max_grade=K, run_counts=rc, ideal_counts=ic)


def phi1(x: np.ndarray) -> float:
    """Dependability of a single topic from the raw (unclipped) variance components."""
    nt, ns = x.shape
    ms_s, ms_t, ms_e, _ = anova(x)
    vs = (ms_s - ms_e) / nt
    vt = (ms_t - ms_e) / ns
    tot = vs + max(vt, 0.0) + ms_e
    return float(vs / tot) if tot > 0 else 0.0


def discounts(kind: str, n: int) -> np.ndarray:
    """Standard discount per rank 1..n, normalized to sum 1: zipf, linear, log."""
    r = np.arange(1, n + 1, dtype=float)
    d = {"zipf": 1.0 / r, "linear": (n + 1 - r) / n, "log": 1.0 / np.log2(1.0 + r)}.get(kind)
    if d is None:
        raise CranfieldError(f"unknown discount {kind!r} (zipf, linear, log)")
    return d / d.sum()


def gains(kind: str, k: int) -> np.ndarray:
    """Standard gain per grade 1..k, normalized to sum 1: linear (g), exp (2^g - 1)."""
    g = np.arange(1, k + 1, dtype=float)
    v = {"linear": g, "exp": 2.0 ** g - 1.0}.get(kind)
    if v is None:
        raise CranfieldError(f"unknown gain {kind!r} (linear, exp)")
    return v / v.sum()


def _slsqp(f, x0: np.ndarray, increasing: bool, maxiter: int, progress: Progress, what: str,
           monotone: bool = True) -> np.ndarray:
    n = len(x0)
    cons = [{"type": "eq", "fun": lambda x: np.sum(x) - 1.0, "jac": lambda x: np.ones_like(x)}]
    if n > 1 and monotone:
        D = np.zeros((n - 1, n))
        D[np.arange(n - 1), np.arange(n - 1)] = -1.0 if increasing else 1.0
        D[np.arange(n - 1), np.arange(1, n)] = 1.0 if increasing else -1.0
        cons.append({"type": "ineq", "fun": lambda x: D @ x, "jac": lambda x: D})
    it = [0]

    def cb(_x):
        it[0] += 1
        report(progress, it[0] / maxiter, f"optimizing {what}: iteration {it[0]}")
    from scipy.optimize import minimize
    res = minimize(lambda x: -f(x), x0, method="SLSQP", bounds=[(0.0, 1.0)] * n, constraints=cons,
                   callback=cb, options={"maxiter": maxiter, "ftol": 1e-10})
    x = np.clip(res.x, 0.0, None)
    x = x / x.sum() if x.sum() > 0 else x0
    return x if f(x) >= f(x0) else x0


def optimal_discount(gr: GradeRanks, gain: np.ndarray | None = None, maxiter: int = 200,
                     progress: Progress = None, monotone: bool = True) -> np.ndarray:
    """Phi-optimal discounts (sum 1; non-increasing unless monotone=False, thesis Fig. 5.3) for the
    given gains (default linear)."""
    gain = gains("linear", gr.max_grade) if gain is None else np.asarray(gain, float)
    return _slsqp(lambda d: phi1(gr.ndcg(gain, d)), discounts("log", gr.cutoff), False, maxiter, progress,
                  "discounts", monotone)


def optimal_gain(gr: GradeRanks, disc: np.ndarray | None = None, maxiter: int = 200,
                 progress: Progress = None, monotone: bool = True) -> np.ndarray:
    """Phi-optimal gains (sum 1; non-decreasing with the grade unless monotone=False, thesis Table 5.2)
    for grades 1..K given discounts (default log)."""
    disc = discounts("log", gr.cutoff) if disc is None else np.asarray(disc, float)
    if gr.max_grade == 1:
        return np.ones(1)
    return _slsqp(lambda g: phi1(gr.ndcg(g, disc)), gains("linear", gr.max_grade), True, maxiter, progress,
                  "gains", monotone)


def _row(name: str, x: np.ndarray, target: float, ref: np.ndarray | None) -> dict:
    g = g_study(x)
    n, lo, hi = (v if np.isinf(v) else int(v) for v in topics_needed(g, target, "phi"))
    return {"function": name, "phi_1": phi1(x), "topics_needed": n, "topics_lower": lo, "topics_upper": hi,
            "tau_vs_optimal": kendall_tau(ref.mean(axis=0), x.mean(axis=0)) if ref is not None else 1.0}


def compare(gr: GradeRanks, target: float = 0.95, maxiter: int = 200, progress: Progress = None) -> dict:
    """Thesis Tables 5.1 / 5.3: topics needed for Phi >= target with standard and optimal discounts
    (linear gains) and gains (log discount); also the optimal functions themselves."""
    report(progress, 0.0, "optimal discounts")
    lin = gains("linear", gr.max_grade)
    d_opt = optimal_discount(gr, lin, maxiter, None)
    report(progress, 0.5, "optimal gains")
    logd = discounts("log", gr.cutoff)
    g_opt = optimal_gain(gr, logd, maxiter, None)
    ref_d = gr.ndcg(lin, d_opt)
    disc_rows = [_row(k, gr.ndcg(lin, discounts(k, gr.cutoff)), target, ref_d) for k in ("zipf", "linear", "log")]
    disc_rows.append(_row("optimal", ref_d, target, ref_d))
    ref_g = gr.ndcg(g_opt, logd)
    gain_rows = [_row(k, gr.ndcg(gains(k, gr.max_grade), logd), target, ref_g) for k in ("exp", "linear")]
    gain_rows.append(_row("optimal", ref_g, target, ref_g))
    report(progress, 1.0, "done")
    return {"discount_table": pd.DataFrame(disc_rows), "gain_table": pd.DataFrame(gain_rows),
            "optimal_discount": d_opt, "optimal_gain": g_opt,
            "gain_ratios": (g_opt[1:] / g_opt[:-1]).tolist() if len(g_opt) > 1 and (g_opt[:-1] > 0).all() else []}
