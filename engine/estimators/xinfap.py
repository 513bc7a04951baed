"""xinfAP and infNDCG on stratified samples (thesis 3.1.2-3.1.4), following NIST's sample_eval.pl.

Input judgments: `topic iter doc stratum grade`, grade -1 = pooled, not sampled (in r.qrels: columns
stratum and grade). Choices of sample_eval.pl that are reproduced here:
  * ranking: score descending, ties by document id descending (`$b cmp $a`), i.e. trec_eval's order
    (build_ranked already sorts so);
  * only the first 1000 documents of each list are used ($maxResultSize; parameter cutoff=N);
  * a document is relevant when its grade > 0 (here grade >= the relevance level, default 1);
  * precision above a relevant document at rank k, per stratum s with N_s pool documents, n_s sampled
    and r_s sampled relevant above it, uses Lidstone smoothing (r_s + 0.00001) / (n_s + 0.00003)
    (note 3 eps, not the 2 eps of trec_eval's infAP), for strata with N_s > 0:
        PC(k) = 1/k + (1/k) * sum_s N_s * (r_s + eps) / (n_s + 3 eps);
  * xinfAP = sum_s (R_s / R) * (sum of PC at retrieved sampled relevant in s) / r_s, with
    R_s = r_s N_s / n_s from the topic's whole sample (strata with n_s = 0 are skipped; r_s = 0 gives 0);
  * DCG is estimated per stratum from the retrieved sampled documents, gain = grade (or the mapped gain),
    discount 1/log2(rank + 1): DCG = sum_s (retrieved pool docs in s / retrieved sampled in s) *
    (sum of discounted gains of retrieved sampled relevant in s);
  * optimal DCG: per grade the estimated count sum_s r_s(G) N_s / n_s is rounded to the nearest
    integer (int(x + 0.5), NIST change of 10 Oct 2011); grades are laid out from the highest down and
    the ranks stop at 1000 -- with the script's quirk that every further grade block starting past rank
    1000 still adds its first document (its inner loop tests the cut-off after adding);
  * topics without judgments are not evaluated (as trec_eval); a run's missing topics are not averaged.
"""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..ranking.ranked import Ranked
from ._rows import qcol, row_column, topic_codes
from .smoothing import EPSILON

pd = lazy_module("pandas")

MAX_RESULT_SIZE = 1000


def _strata(r: Ranked):
    """Per topic x stratum pool counts: (stratum codes per row, N_ts, n_ts, r_ts, r_tsG, strata values)."""
    tc = topic_codes(r)
    ok = tc >= 0
    st_all = qcol(r, "stratum")
    has_strata = st_all is not None
    if has_strata:   # documents without a stratum (missing values) form one stratum of their own
        st_all = pd.to_numeric(pd.Series(st_all), errors="coerce").fillna(-1).to_numpy(np.int64)
        r.caches.setdefault("est", {}).setdefault("qrels_arrays", {})["stratum"] = st_all
    st = np.asarray(st_all if has_strata else np.zeros(len(tc), np.int64))[ok]
    grade = np.asarray(qcol(r, "grade"), np.int64)[ok]
    tc = tc[ok]
    values, scode = np.unique(st, return_inverse=True) if len(st) else (np.zeros(0), np.zeros(0, np.int64))
    T, S = len(r.topic_names), max(len(values), 1)
    lv = max(r.options.rel_level, 1)
    N = np.zeros((T, S)); n = np.zeros((T, S)); rr = np.zeros((T, S))
    np.add.at(N, (tc, scode), 1.0)
    np.add.at(n, (tc, scode), (grade >= 0).astype(float))
    np.add.at(rr, (tc, scode), (grade >= lv).astype(float))
    G = max(int(grade.max()) + 1 if len(grade) else 1, 1)
    rG = np.zeros((T, S, G))
    relm = grade >= lv
    np.add.at(rG, (tc[relm], scode[relm], grade[relm]), 1.0)
    # per row stratum code (-1 outside the pool)
    row_st = row_column(r, "stratum", -1) if has_strata else np.where(r.rel != -1, values[0] if len(values) else 0, -1)
    row_code = np.full(r.n_rows, -1, np.int64)
    inp = r.rel != -1
    if len(values):
        pos = np.searchsorted(values, np.asarray(row_st)[inp].astype(values.dtype))
        row_code[inp] = np.clip(pos, 0, len(values) - 1)
    return row_code, N, n, rr, rG, values


PRIORS = ("sample_eval", "thesis", "stratum")


def xinfap_terms(r: Ranked, cutoff: int = MAX_RESULT_SIZE, gains: np.ndarray | None = None,
                 prior: str = "sample_eval") -> dict:
    """Per group xinfAP, infNDCG, estimated R and DCG parts (sample_eval.pl semantics).

    `prior` is the estimate of a stratum's precision above rank k (experiments only; the measures use
    the default): "sample_eval" (r + eps) / (n + 3 eps), as NIST's script -- 1/3 when no document of
    the stratum above k was sampled; "thesis" (r + eps) / (n + 2 eps), thesis 3.1.2 and trec_eval's
    infAP -- 1/2 then; "stratum" as sample_eval when n > 0, else the stratum's sampled proportion
    relevant over the whole topic (r_s + eps) / (n_s + 3 eps) instead of the fixed 1/3.
    """
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {', '.join(PRIORS)}")
    mult = 2.0 if prior == "thesis" else 3.0
    row_code, N, n, rr, rG, values = _strata(r)
    S = N.shape[1]
    lv = max(r.options.rel_level, 1)
    within = r.rank <= cutoff
    inp = (r.rel != -1) & within
    sampled = (r.rel >= 0) & within
    rel = (r.rel >= lv) & within
    k = r.rank.astype(np.float64)
    gi = r.row_group
    topic_row = r.g_topic[gi]
    pc_sum = np.zeros(r.n_rows)
    # DCG pieces per group and stratum
    dcg_parts = np.zeros((r.n_groups, S))
    ret_pool = np.zeros((r.n_groups, S))
    ret_samp = np.zeros((r.n_groups, S))
    gtab = np.arange(rG.shape[2], dtype=np.float64) if gains is None else gains
    grow = np.zeros(r.n_rows)
    okg = rel & (r.rel < len(gtab))
    grow[okg] = gtab[r.rel[okg]]
    disc = np.log(2.0) / np.log(k + 1.0)
    for s in range(S):
        in_s = row_code == s
        Ns = r.seg_cumsum(inp & in_s) - (inp & in_s)
        ns = r.seg_cumsum(sampled & in_s) - (sampled & in_s)
        rs = r.seg_cumsum(rel & in_s) - (rel & in_s)
        est = (rs + EPSILON) / (ns + mult * EPSILON)
        if prior == "stratum":             # no sampled document of s above k: the stratum's proportion
            whole = (rr[topic_row, s] + EPSILON) / (n[topic_row, s] + mult * EPSILON)
            est = np.where(ns > 0, est, whole)
        pc_sum += np.where(Ns > 0, Ns * est, 0.0)
        dcg_parts[:, s] = r.seg_sum(np.where(rel & in_s, grow * disc, 0.0))
        ret_pool[:, s] = r.seg_sum(inp & in_s)
        ret_samp[:, s] = r.seg_sum(sampled & in_s)
    pc = np.where(rel, 1.0 / k + pc_sum / k, 0.0)
    # xinfAP: weight each relevant row by N_s / n_s of its stratum (topic level), divide by R_hat
    Nt, nt = N[topic_row], n[topic_row]
    code = np.maximum(row_code, 0)
    idx = np.arange(r.n_rows)
    w_row = np.divide(Nt[idx, code], nt[idx, code], out=np.zeros(r.n_rows), where=nt[idx, code] > 0)
    Rs = np.divide(rr * N, n, out=np.zeros_like(N), where=n > 0)
    R_hat = Rs.sum(axis=1)
    Rg = R_hat[r.g_topic]
    num = r.seg_sum(np.where(rel, pc * w_row, 0.0))
    xap = np.divide(num, Rg, out=np.zeros(r.n_groups), where=Rg > 0)
    # infNDCG
    dcg = (np.divide(ret_pool, ret_samp, out=np.zeros_like(ret_pool), where=ret_samp > 0) * dcg_parts).sum(axis=1)
    opt = optimal_dcg(N, n, rG, gtab, cutoff)[r.g_topic]
    ndcg = np.divide(dcg, opt, out=np.zeros(r.n_groups), where=opt != 0)
    return {"xinfAP": xap, "infNDCG": ndcg, "R_hat": Rg, "pc": pc, "dcg": dcg, "opt_dcg": opt}


def optimal_dcg(N: np.ndarray, n: np.ndarray, rG: np.ndarray, gains: np.ndarray, cutoff: int) -> np.ndarray:
    """Per topic optimal DCG from estimated per-grade counts (rounded), sample_eval.pl's layout."""
    T, S, G = rG.shape
    scale = np.divide(N, n, out=np.zeros_like(N), where=n > 0)
    est = (rG * scale[:, :, None]).sum(axis=1)          # T x G
    cnt = np.floor(est + 0.5).astype(np.int64)
    g = np.zeros(G)
    g[: min(G, len(gains))] = gains[: min(G, len(gains))]
    order = np.argsort(-g, kind="stable")                 # highest gain first
    out = np.zeros(T)
    start = np.zeros(T, np.int64)
    maxpos = int(min(cnt.sum(axis=1).max() if T else 0, cutoff)) + 1
    # prefix sums of the discount 1/log2(r+1) for ranks up to the cut-off
    ranks = np.arange(1, maxpos + 1, dtype=np.float64)
    cdisc = np.concatenate(([0.0], np.cumsum(np.log(2.0) / np.log(ranks + 1.0))))
    for gi in order:
        if g[gi] <= 0:
            continue
        c = cnt[:, gi]
        has = c > 0
        lo = start                                         # block covers ranks lo+1 .. lo+c
        hi = np.minimum(start + c, cutoff)
        inside = has & (lo < cutoff)
        part = np.zeros(T)
        part[inside] = cdisc[np.minimum(hi[inside], maxpos)] - cdisc[lo[inside]]
        # sample_eval.pl quirk: a block starting past the cut-off still adds its first rank
        past = has & (lo >= cutoff)
        part[past] = np.log(2.0) / np.log(lo[past] + 2.0)
        out += g[gi] * part
        start = start + c
    return out
