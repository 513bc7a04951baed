"""statAP (Pavlu and Aslam; thesis 3.2.1.2): estimates from judgments with inclusion probabilities.

Judgments (prels) carry each sampled document's inclusion probability pi (qrels column `prob`; 1 when
absent). Documents are assumed sampled independently (Poisson sampling, as `samplers.pps_sample`), so
Horvitz-Thompson sums are unbiased:

    R_hat        = sum over sampled relevant d of 1/pi_d
    P_hat@k      = (1/k) sum over sampled relevant d ranked <= k of 1/pi_d
    PC_hat(k)    = (1 + sum over sampled relevant d ranked above k of 1/pi_d) / k   (at a sampled relevant k)
    statAP_ratio = (sum over sampled relevant retrieved d of PC_hat(rank d) / pi_d) / R_hat
    statAP       = statAP_ratio minus its estimated second-order ratio bias (see statap_terms)
    statRprec    = P_hat@round(R_hat) (the script's rule, statap_terms: the whole list over R_hat when the
                   list is shorter than round(R_hat))
    statNDCG     = (sum over sampled retrieved d of gain_d / log2(rank_d + 1) / pi_d) / ideal DCG of the
                   rounded HT counts per grade (sum over sampled d of that grade of 1/pi_d; stat_ndcg)

statAP is a generalized ratio estimator (numerator and R_hat both estimated). Its variance is estimated
by linearization under Poisson sampling, plus the variance of the precision estimates:

    var = [ sum_d (1 - pi_d)/pi_d^2 (y_d - statAP x_d)^2 + sum_d var(PC_hat_d)/pi_d ] / R_hat^2
    y_d = PC_hat(rank d) (0 when not retrieved), x_d = 1,  var(PC_hat(k)) = sum_above (1 - pi)/pi^2 / k^2

With every probability 1 all estimates equal the exact values (AP, P@k, R-prec, R) and variance 0.
"""
from __future__ import annotations

import numpy as np

from ..ranking.ranked import Ranked
from ..formats.mq import reference_probabilities, statap_sampled
from ._rows import qcol, row_column, topic_codes


def _prob_rows(r: Ranked, reference: bool = False) -> np.ndarray:
    p = row_column(r, "prob", 1.0).astype(np.float64)
    if reference and qcol(r, "method") is not None:
        p = reference_probabilities(row_column(r, "method", ""), p)
    p = np.where((p > 0) & np.isfinite(p), p, 1.0)
    return p


def valid_topics(r: Ranked) -> np.ndarray:
    """Per topic: evaluated by the reference script (R_hat > 0 and some statAP-sampled judgment)."""
    tc = topic_codes(r)
    T = len(r.topic_names)
    m = qcol(r, "method")
    sampled = statap_sampled(m, len(tc)) & (tc >= 0)
    has = np.bincount(tc[sampled], minlength=T) > 0
    return has & (_topic_R(r, True)[0] > 0)


def _topic_R(r: Ranked, reference: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per topic: (R_hat, sum over sampled relevant of (1-pi)/pi^2 * statAP-independent part)."""
    tc = topic_codes(r)
    lv = max(r.options.rel_level, 1)
    rel = (np.asarray(qcol(r, "grade"), np.int64) >= lv) & (tc >= 0)
    pq = qcol(r, "prob")
    p = np.asarray(pq, np.float64) if pq is not None else np.ones(len(tc))
    if reference:
        p = reference_probabilities(qcol(r, "method"), p)
    p = np.where((p > 0) & np.isfinite(p), p, 1.0)
    T = len(r.topic_names)
    R = np.bincount(tc[rel], weights=1.0 / p[rel], minlength=T)
    # sum over all sampled relevant of (1-pi)/pi^2 (x_d = 1 part of the linearized variance)
    v = np.bincount(tc[rel], weights=(1.0 - p[rel]) / p[rel] ** 2, minlength=T)
    return R, v


def statap_terms(r: Ranked, cutoffs=(), reference: bool = False) -> dict:
    """Per group statAP, its variance, R_hat, P_hat at cut-offs, R-prec estimate.

    `reference`: the Million Query script's probabilities (engine.formats.mq): 1 for methods 0 and 2."""
    lv = max(r.options.rel_level, 1)
    rel = r.rel >= lv
    p = _prob_rows(r, reference)
    w = np.where(rel, 1.0 / p, 0.0)
    cw = r.seg_cumsum(w)
    k = r.rank.astype(np.float64)
    above = cw - w
    pc = np.where(rel, (1.0 + above) / k, 0.0)
    Rt, vx = _topic_R(r, reference)
    R = Rt[r.g_topic]
    num = r.seg_sum(pc * w)
    ap = np.divide(num, R, out=np.zeros(r.n_groups), where=R > 0)
    # linearized variance: sum over sampled relevant d of (1-pi)/pi^2 (y_d - ap)^2, split into the
    # retrieved part (y = pc) and the rest (y = 0), whose sum is vx minus the retrieved share
    c = np.where(rel, (1.0 - p) / p ** 2, 0.0)
    apr = ap[r.row_group]
    ret_part = r.seg_sum(c * (pc - apr) ** 2)
    rest = vx[r.g_topic] - r.seg_sum(c)
    lin = ret_part + np.maximum(rest, 0.0) * ap ** 2
    vpc = np.where(rel, r.seg_cumsum(c) - c, 0.0) / k ** 2
    second = r.seg_sum(np.where(rel, vpc / p, 0.0))
    var = np.divide(lin + second, R ** 2, out=np.zeros(r.n_groups), where=R > 0)
    # second-order correction of the ratio-estimator bias (Taylor expansion of N_hat / R_hat under
    # Poisson sampling): bias ~ (N V - R C) / R^3 with V = Var(R_hat) and C = Cov(N_hat, R_hat), where
    # C = sum over relevant e of (1 - pi_e)/pi_e * (PC(e) + sum over relevant d ranked below e of 1/rank(d)),
    # both estimated from the sample; statAP = N_hat/R_hat - (N_hat V_hat/R_hat^3 - C_hat/R_hat^2).
    wk = np.where(rel, w / k, 0.0)
    below = r.seg_sum(wk)[r.row_group] - r.seg_cumsum(wk)
    C = r.seg_sum(c * (pc + below))
    V = vx[r.g_topic]
    corr = np.divide(num * V, R ** 3, out=np.zeros(r.n_groups), where=R > 0) - \
        np.divide(C, R ** 2, out=np.zeros(r.n_groups), where=R > 0)
    ap_c = ap - corr
    out = {"statAP": ap_c, "statAP_ratio": ap, "statAP_var": var, "R_hat": R, "pc": pc}
    if cutoffs:
        P = np.empty((r.n_groups, len(cutoffs)))
        for j, kk in enumerate(cutoffs):
            P[:, j] = r.at_rank(cw, kk) / kk
        out["P"] = P
    kR = np.floor(R + 0.5).astype(np.int64)
    rp = r.at_rank(cw, np.maximum(kR, 1))
    out["Rprec"] = np.divide(rp, kR, out=np.zeros(r.n_groups), where=kR > 0)
    # the Million Query script (statAP_MQ_eval v3): the weight in the top round(R_hat) over round(R_hat)
    # when the list reaches that rank; otherwise (shorter list, or round(R_hat) = 0) the list's whole
    # weight over the unrounded R_hat
    reach = (kR >= 1) & (np.diff(np.asarray(r.offsets)) >= kR)
    short = np.divide(r.seg_sum(w), R, out=np.zeros(r.n_groups), where=R > 0)
    out["Rprec_script"] = np.where(reach, out["Rprec"], short)
    return out


def stat_ndcg(r: Ranked) -> np.ndarray:
    """Per group: statNDCG, the HT estimate of the run's DCG (gain = grade, trec_eval's ndcg default) over the
    ideal DCG of the topic's HT-estimated documents per grade, rounded (infNDCG's `optimal_dcg`). A ratio
    estimator like statAP; with every probability 1 it is ndcg exactly."""
    from ..ranking.gains import gain_model, rank_log2
    from .xinfap import optimal_dcg
    p = _prob_rows(r)
    dcg = r.seg_sum(gain_model(r).row_gain / p / rank_log2(r))
    tc = topic_codes(r)
    g = np.asarray(qcol(r, "grade"), np.int64)
    pq = qcol(r, "prob")
    pj = np.asarray(pq, np.float64) if pq is not None else np.ones(len(tc))
    pj = np.where((pj > 0) & np.isfinite(pj), pj, 1.0)
    T = len(r.topic_names)
    ok = (g > 0) & (tc >= 0)
    G = int(g[ok].max()) + 1 if ok.any() else 1
    counts = np.zeros((T, 1, G))
    np.add.at(counts, (tc[ok], 0, g[ok]), 1.0 / pj[ok])
    ones = np.ones((T, 1))
    ideal = optimal_dcg(ones, ones, counts, np.arange(G, dtype=np.float64), int(counts.sum()) + 1)[r.g_topic]
    return np.divide(dcg, ideal, out=np.zeros(r.n_groups), where=ideal > 0)
