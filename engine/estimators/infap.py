"""Inferred AP (Yilmaz and Aslam 2006) with its variance and confidence intervals (thesis 3.1.1, App. A).

Judgments are a uniform random sample of the pool: qrels rows with grade >= 0 are judged, rows with a
negative grade are pooled but not judged; documents outside the qrels are outside the pool.
Per judged relevant document at rank k (|d| pool documents, n judged, r judged relevant above it):

    PC(k) = 1/k + (|d| / k) * (r + eps) / (n + 2 eps)          (trec_eval's infAP, eps = 0.00001)
    infAP = sum of PC over retrieved judged relevant / (judged relevant of the topic)

Variance (law of total variance, Appendix A, precisions at different cut-offs independent):

    var = (1 - p) s^2 / R  +  sum_k var[PC(k)] / R^2
    s^2 = sum over judged relevant of (PC(k) - infAP)^2 / (R - 1)     (PC = 0 when not retrieved)
    var[PC(k)] = (|d|/k)^2 * (1 - n/|d|) q(1-q)/(n-1),   q = r/n   (hypergeometric, no smoothing;
                 the sample estimate of Appendix A's (p(1-p)/n)(1 - (n-1)/(|d|-1)) for PC above k)

with p the judged fraction of the topic's pool. The mean over T topics has variance sum var / T^2 and a
normal 95% interval mean +- 1.96 sqrt(var) (`mean_ci`). Documents outside the pool count as
non-relevant (in k, not in |d|).

Appendix A's derivation takes E[PC_hat(k) | sampled cut-offs] = PC(k), but the sampled relevant
documents are both the cut-offs and the relevant documents above them, so the two stages co-vary and
the estimate is ~30% low in simulation; `infap_variance_jackknife` (delete-one jackknife over the
judged documents) matches the observed spread (docs/incomplete-judgments.md).
"""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..ranking.ranked import Ranked
from ._rows import topic_codes
from .smoothing import EPSILON, lidstone

pd = lazy_module("pandas")


def _pool_counts(r: Ranked) -> tuple[np.ndarray, np.ndarray]:
    """Per topic: (pool size, judged count) from the qrels (grade < 0 = pooled, unjudged)."""
    q = getattr(r, "qrels", None)
    judged = r.t_levels.sum(axis=1).astype(np.float64)
    if q is None:
        return judged, judged
    tc = topic_codes(r, q)
    ok = tc >= 0
    pool = np.bincount(tc[ok], minlength=len(r.topic_names)).astype(np.float64)
    return pool, judged


def infap_terms(r: Ranked) -> dict:
    """Per-row precision estimates and per-group infAP (dict of arrays)."""
    return _infap_core(r, r.rel, r.num_rel.astype(np.float64))


def _infap_core(r: Ranked, relv: np.ndarray, R: np.ndarray) -> dict:
    """infAP of r's lists with per-row judgment values `relv` (-1 not pooled, -2 pooled unjudged,
    else the grade) and per-group judged relevant counts R."""
    in_pool = relv != -1
    judged = relv >= 0
    rel = relv >= r.options.rel_level
    d_above = r.seg_cumsum(in_pool) - in_pool
    n_above = r.seg_cumsum(judged) - judged
    r_above = r.seg_cumsum(rel) - rel
    k = r.rank.astype(np.float64)
    pc = np.where(k == 1, 1.0, 1.0 / k + (d_above / k) * lidstone(r_above, n_above, EPSILON, 2.0))
    pc = np.where(rel, pc, 0.0)
    s = r.seg_sum(pc)
    ap = np.divide(s, R, out=np.zeros(r.n_groups), where=R > 0)
    return {"pc": pc, "d_above": d_above, "n_above": n_above, "r_above": r_above, "infAP": ap, "R": R}


def infap_variance(r: Ranked, dependent: bool = False) -> np.ndarray:
    """Per group: estimated variance of infAP (Appendix A).

    dependent=False treats precisions at different cut-offs as independent (thesis eq. 3.1.1);
    dependent=True adds Appendix A's covariances cov[PC(k), PC(m)] = (k/m) var[PC(k)], k < m.
    """
    t = infap_terms(r)
    pc, ap, R = t["pc"], t["infAP"], t["R"]
    rel = r.is_rel
    gi = r.row_group
    # first stage: sampling cut-off levels (relevant documents)
    dev = np.where(rel, (pc - ap[gi]) ** 2, 0.0)
    ss = r.seg_sum(dev) + (R - r.num_rel_ret) * ap ** 2   # unretrieved relevant: PC = 0
    s2 = np.divide(ss, R - 1.0, out=np.zeros(r.n_groups), where=R > 1)
    pool, judged = _pool_counts(r)
    p = np.divide(judged, pool, out=np.ones_like(pool), where=pool > 0)[r.g_topic]
    v1 = (1.0 - p) * np.divide(s2, R, out=np.zeros(r.n_groups), where=R > 0)
    # second stage: sampling documents above each cut-off
    d, n, ra = t["d_above"].astype(np.float64), t["n_above"].astype(np.float64), t["r_above"].astype(np.float64)
    q = np.divide(ra, n, out=np.zeros_like(ra), where=n > 0)
    # var of the sample proportion q of n of the |d| pool documents above k (hypergeometric): Q(1-Q)/n *
    # (|d|-n)/(|d|-1) with the population Q; its unbiased estimate from the sample is
    # (1 - n/|d|) q(1-q)/(n-1) (plugging q into Q(1-Q)/n would be low by (n-1)/n x (|d|-1)/|d|)
    fpc = np.clip(1.0 - np.divide(n, d, out=np.ones_like(d), where=d > 0), 0.0, 1.0)
    k = r.rank.astype(np.float64)
    vpc = (d / k) ** 2 * np.divide(q * (1.0 - q), n - 1.0, out=np.zeros_like(q), where=n > 1) * fpc
    vpc = np.where(rel & (k > 1), vpc, 0.0)
    tot = r.seg_sum(vpc)
    if dependent:
        kv = r.seg_cumsum(k * vpc) - k * vpc             # sum over relevant k above m of k var[PC(k)]
        tot = tot + 2.0 * r.seg_sum(np.where(rel, kv / k, 0.0))
    v2 = np.divide(tot, R ** 2, out=np.zeros(r.n_groups), where=R > 0)
    return v1 + v2


def mean_ci(df: pd.DataFrame, measure: str = "infAP", var_measure: str | None = None,
            level: float = 0.95) -> pd.DataFrame:
    """Per run: mean of `measure` over topics with its variance and normal confidence interval.

    `df` is engine.evaluation.evaluate's long table holding `measure` and `<measure>_var` per topic
    (e.g. `-m infAP -m infAP_var`). Var(mean) = sum of per-topic variances / T^2.
    Returns columns run, n_topics, mean, var, se, lo, hi.
    """
    var_measure = var_measure or f"{measure}_var"
    sub = df[df["measure"].isin([measure, var_measure])]
    if len(sub) == 0:
        raise KeyError(f"no {measure!r} / {var_measure!r} values in the table (evaluate with -m {measure} -m {var_measure})")
    wide = sub.pivot_table(index=["run", "topic"], columns="measure", values="value", observed=True)
    if measure not in wide.columns or var_measure not in wide.columns:
        raise KeyError(f"the table needs both {measure!r} and {var_measure!r}")
    g = wide.groupby(level="run", observed=True, sort=False)
    n = g[measure].count()
    mean = g[measure].mean()
    var = g[var_measure].sum() / n.astype(float) ** 2
    from scipy.stats import norm
    z = float(norm.ppf(0.5 + level / 2.0))
    se = np.sqrt(var)
    out = pd.DataFrame({"n_topics": n, "mean": mean, "var": var, "se": se,
                        "lo": mean - z * se, "hi": mean + z * se})
    out.index.name = "run"
    return out.reset_index()


def infap_variance_linearized(r: Ranked) -> np.ndarray:
    """Per group: linearization (delta-method) variance of infAP under Bernoulli sampling at rate p.

    infAP is a smooth function of the sample indicators of the pool documents; its influence value
    for a judged document j of the list is
        z_j = rel_j (PC(j) - infAP) + sum over judged relevant d ranked below j of
              (|d|_d / k_d) (rel_j - q_d) / n_d              (q_d = r/n above d)
    (a judged relevant document the run did not retrieve has z = -infAP), and
        var = (1 - p) / R^2 * sum_j z_j^2.
    Unlike Appendix A it keeps the covariances between the precision estimates and the choice of
    cut-offs (both depend on the same sampled documents); smoothing is ignored.
    """
    t = infap_terms(r)
    pc, ap, R = t["pc"], t["infAP"], t["R"]
    rel = r.is_rel
    judged = r.rel >= 0
    d, n, ra = t["d_above"].astype(np.float64), t["n_above"].astype(np.float64), t["r_above"].astype(np.float64)
    q = np.divide(ra, n, out=np.zeros_like(ra), where=n > 0)
    k = r.rank.astype(np.float64)
    c = np.where(rel & (n > 0), d / (k * np.maximum(n, 1.0)), 0.0)
    cq = c * q
    # sums over rows strictly below each row
    A = r.seg_sum(c)[r.row_group] - r.seg_cumsum(c)
    B = r.seg_sum(cq)[r.row_group] - r.seg_cumsum(cq)
    gi = r.row_group
    z = np.where(rel, pc - ap[gi] + A, 0.0) - B
    z = np.where(judged, z, 0.0)
    ss = r.seg_sum(z ** 2) + (R - r.num_rel_ret) * ap ** 2
    pool, jcount = _pool_counts(r)
    p = np.divide(jcount, pool, out=np.ones_like(pool), where=pool > 0)[r.g_topic]
    return np.divide((1.0 - p) * ss, R ** 2, out=np.zeros(r.n_groups), where=R > 0)


def infap_variance_jackknife(r: Ranked) -> np.ndarray:
    """Per group: delete-one jackknife variance of infAP over the topic's judged documents.

    The judged documents of a topic are a simple random sample of its pool (rate p = judged / pool).
    Replicate j re-computes infAP with the topic's j-th judged document turned into a pooled,
    unjudged one (all topics at once: topics are independent); with n judged documents,

        var = (1 - p) (n - 1)/n * sum_j (infAP_(j) - mean_j infAP_(j))^2.

    Unlike Appendix A it needs no model of how the precision estimates and the sampled cut-offs
    depend on each other (they share the sampled relevant documents) and it sees the smoothing's
    jumps (a relevant document with nothing judged above it gets the prior 1/2). Cost: one infAP
    pass per replicate, i.e. max judged documents per topic (topics fully judged are skipped).
    """
    from ._rows import qcol, row_index

    out = np.zeros(r.n_groups)
    if r.n_groups == 0 or getattr(r, "qrels", None) is None:
        return out
    ri = row_index(r)
    grade = np.asarray(qcol(r, "grade"), np.int64)
    tc = topic_codes(r)
    T = len(r.topic_names)
    pool, judged = _pool_counts(r)
    p = np.divide(judged, pool, out=np.ones_like(pool), where=pool > 0)
    jmask = (grade >= 0) & (tc >= 0)
    jmask &= (p < 1.0)[np.maximum(tc, 0)]
    idx = np.flatnonzero(jmask)
    if len(idx) == 0:
        return out
    c = tc[idx]
    order = np.argsort(c, kind="stable")
    first = np.searchsorted(c[order], c[order], side="left")
    pos = np.empty(len(idx), np.int64)
    pos[order] = np.arange(len(idx)) - first
    rep_q = np.full(len(grade), -1, np.int64)            # replicate that drops each judgment row
    rep_q[idx] = pos
    rep_row = np.where(ri >= 0, rep_q[np.maximum(ri, 0)], -1)
    lv = max(r.options.rel_level, 1)
    # per topic and replicate: is the dropped document relevant (R falls by one)
    n_t = np.bincount(c, minlength=T).astype(np.float64)
    n_rep = int(n_t.max())
    drop_rel = np.zeros((n_rep, T))
    drop_rel[pos, c] = (grade[idx] >= lv).astype(np.float64)
    R0 = r.num_rel.astype(np.float64)
    ng = n_t[r.g_topic]
    s1 = np.zeros(r.n_groups)
    s2 = np.zeros(r.n_groups)
    for j in range(n_rep):
        relv = np.where(rep_row == j, -2, r.rel)          # pooled, not judged
        v = _infap_core(r, relv, R0 - drop_rel[j][r.g_topic])["infAP"]
        valid = j < ng
        s1 += np.where(valid, v, 0.0)
        s2 += np.where(valid, v * v, 0.0)
    mean = np.divide(s1, ng, out=np.zeros(r.n_groups), where=ng > 0)
    ss = np.maximum(s2 - ng * mean * mean, 0.0)
    pg = p[r.g_topic]
    return np.where(ng > 1, (1.0 - pg) * (ng - 1.0) / np.maximum(ng, 1.0) * ss, 0.0)
