"""Sampling experiments against a simulated truth: bias of infAP / xinfAP / statAP and coverage of
the confidence intervals of mean infAP (thesis Figures 3.1-3.2), vectorized over runs and topics.

True AP is AP with every document of the depth-`depth` pool judged (the thesis' footnote 2: the
complete judgments are the depth-100 pool). Each trial draws, per topic, independent samples for the
three designs, all of `rate` of the pool (budget round(rate x pool size) per topic):
  infAP  : simple random sample of the pool (the design of thesis Figures 3.1-3.2);
  xinfAP : stratified random sample (thesis 3.1.5), `xinf_design`:
           "campaign" -- engine.pooling's stratified pool (docs/pooling-judging.md): stratum 1 = the
               largest depth-k pool holding at most half the budget, fully judged; the rest of the
               pool cut by best rank into three strata of about equal size sharing the other half
               3 : 1.5 : 1 (TREC practice: the top judged completely, thesis 3.1.3 and 3.1.5);
           "terabyte" -- the TREC Terabyte 2006 design of thesis 3.1.3 (two strata): the largest
               depth-k pool (k per topic) holding at most half the budget, fully judged, plus a simple
               random sample of the rest of the pool making up the budget (at least as many
               documents as the depth-k pool; the thesis' "equal number", with k per topic so that
               every topic is sampled at exactly `rate`);
           "terabyte_global" -- the same with one k for all topics (the thesis' own simulation:
               depth-k, k = the largest with 2 x depth-k pool <= the total budget; each topic's
               random part its depth-k pool size scaled so that the topics together take the budget);
           "ranks" -- strata by fixed best-rank bounds (`bounds`, default 1-5 / 6-20 / 21-50 /
               51-100), the first fully judged, the others at rates in the ratio `weights`;
  statAP : Poisson sample with inclusion probability proportional to the AP-prior weight mixed with a
           uniform share (`mix`), expected size `rate` of the pool.
The same strata / sizes are used in every trial; each trial redraws the simple random samples.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..util.lazy import lazy_module
from ..estimators import infap, statap, trials, xinfap
from ..pooling import designs as samplers

pd = lazy_module("pandas")


VAR_METHODS = {
    "appendix": lambda r: infap.infap_variance(r, dependent=False),
    "dependent": lambda r: infap.infap_variance(r, dependent=True),
    "linear": infap.infap_variance_linearized,
    "jackknife": infap.infap_variance_jackknife,
}


def infap_jackknife(r) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (variance, bias) of infAP by the delete-one jackknife over the topic's judged documents.

    The variance is infap.infap_variance_jackknife's, (1 - p)(n-1)/n sum_j (infAP_(j) - mean)^2; the
    bias estimate is Quenouille's with the same finite-population factor, (1 - p)(n - 1)(mean_j
    infAP_(j) - infAP), p = judged / pool of the topic. The bias-corrected centre infAP - bias is
    used for the "jackknife_bc" intervals of run_experiment (the reported infAP stays trec_eval's).
    """
    from ..estimators._rows import qcol, row_index, topic_codes

    var = np.zeros(r.n_groups)
    bias = np.zeros(r.n_groups)
    if r.n_groups == 0 or getattr(r, "qrels", None) is None:
        return var, bias
    ri = row_index(r)
    grade = np.asarray(qcol(r, "grade"), np.int64)
    tc = topic_codes(r)
    T = len(r.topic_names)
    pool, judged = infap._pool_counts(r)
    p = np.divide(judged, pool, out=np.ones_like(pool), where=pool > 0)
    jmask = (grade >= 0) & (tc >= 0) & (p < 1.0)[np.maximum(tc, 0)]
    idx = np.flatnonzero(jmask)
    if len(idx) == 0:
        return var, bias
    c = tc[idx]
    order = np.argsort(c, kind="stable")
    first = np.searchsorted(c[order], c[order], side="left")
    pos = np.empty(len(idx), np.int64)
    pos[order] = np.arange(len(idx)) - first
    rep_q = np.full(len(grade), -1, np.int64)
    rep_q[idx] = pos
    rep_row = np.where(ri >= 0, rep_q[np.maximum(ri, 0)], -1)
    lv = max(r.options.rel_level, 1)
    n_t = np.bincount(c, minlength=T).astype(np.float64)
    drop_rel = np.zeros((int(n_t.max()), T))
    drop_rel[pos, c] = (grade[idx] >= lv).astype(np.float64)
    R0 = r.num_rel.astype(np.float64)
    ng = n_t[r.g_topic]
    s1 = np.zeros(r.n_groups)
    s2 = np.zeros(r.n_groups)
    for j in range(int(n_t.max())):
        relv = np.where(rep_row == j, -2, r.rel)
        v = infap._infap_core(r, relv, R0 - drop_rel[j][r.g_topic])["infAP"]
        valid = j < ng
        s1 += np.where(valid, v, 0.0)
        s2 += np.where(valid, v * v, 0.0)
    mean = np.divide(s1, ng, out=np.zeros(r.n_groups), where=ng > 0)
    ss = np.maximum(s2 - ng * mean * mean, 0.0)
    f = 1.0 - p[r.g_topic]
    ok = ng > 1
    var = np.where(ok, f * (ng - 1.0) / np.maximum(ng, 1.0) * ss, 0.0)
    full = infap.infap_terms(r)["infAP"]
    bias = np.where(ok, f * (ng - 1.0) * (mean - full), 0.0)
    return var, bias


def xinfap_oracle_prior(r, truth_rel: np.ndarray, cutoff: int = xinfap.MAX_RESULT_SIZE) -> np.ndarray:
    """Per group: xinfAP as sample_eval.pl, except that a stratum with pool documents but nothing
    sampled above a relevant document at rank k gets the TRUE proportion relevant of those documents
    (from `truth_rel`, the complete judgments per row) instead of the fixed (0 + eps)/(0 + 3 eps) = 1/3.

    A diagnostic only (it needs the truth): it separates the bias that prior causes from the rest
    (the ratio of the estimated R in the denominator, smoothing elsewhere).
    """
    from ..estimators.smoothing import EPSILON as eps
    row_code, N, n, rr, _, _ = xinfap._strata(r)
    lv = max(r.options.rel_level, 1)
    within = r.rank <= cutoff
    inp = (r.rel != -1) & within
    sampled = (r.rel >= 0) & within
    rel = (r.rel >= lv) & within
    trel = (truth_rel >= lv) & within
    k = r.rank.astype(np.float64)
    pc_sum = np.zeros(r.n_rows)
    for s in range(N.shape[1]):
        in_s = row_code == s
        Ns = r.seg_cumsum(inp & in_s) - (inp & in_s)
        ns = r.seg_cumsum(sampled & in_s) - (sampled & in_s)
        rs = r.seg_cumsum(rel & in_s) - (rel & in_s)
        ts = r.seg_cumsum(trel & in_s) - (trel & in_s)
        est = np.where(ns > 0, (rs + eps) / (ns + 3 * eps), np.divide(ts, Ns, out=np.zeros(r.n_rows), where=Ns > 0))
        pc_sum += np.where(Ns > 0, Ns * est, 0.0)
    pc = np.where(rel, 1.0 / k + pc_sum / k, 0.0)
    topic_row = r.g_topic[r.row_group]
    code = np.maximum(row_code, 0)
    Ns_row, ns_row = N[topic_row, code], n[topic_row, code]
    w_row = np.divide(Ns_row, ns_row, out=np.zeros(r.n_rows), where=ns_row > 0)
    R_hat = np.divide(rr * N, n, out=np.zeros_like(N), where=n > 0).sum(axis=1)[r.g_topic]
    num = r.seg_sum(np.where(rel, pc * w_row, 0.0))
    return np.divide(num, R_hat, out=np.zeros(r.n_groups), where=R_hat > 0)


@dataclass
class ExperimentResult:
    runs: list[str]
    true_map: np.ndarray                 # per run
    estimates: dict[str, np.ndarray]     # estimator -> trials x runs (mean over topics)
    covered: np.ndarray                  # trials x runs: CI of mean infAP (primary variance) covers true MAP
    se_est: np.ndarray                   # trials x runs: estimated standard error of mean infAP (primary)
    n_topics: int
    pool_per_topic: float
    rel_per_topic: float
    sample_fraction: dict[str, float]
    var_method: str = "appendix"
    covered_by: dict[str, np.ndarray] = field(default_factory=dict)   # variance method -> trials x runs
    se_by: dict[str, np.ndarray] = field(default_factory=dict)
    strata: pd.DataFrame | None = None   # xinfAP design: per stratum mean size, sample size, rate

    def table(self) -> pd.DataFrame:
        """Per run: true MAP, mean estimate, bias and sd of each estimator, CI coverage of mean infAP
        (`infAP_coverage` for the primary variance method, `infAP_coverage_<method>` for each)."""
        out = pd.DataFrame({"run": self.runs, "true_MAP": self.true_map})
        for k, v in self.estimates.items():
            out[f"{k}_mean"] = v.mean(axis=0)
            out[f"{k}_bias"] = v.mean(axis=0) - self.true_map
            out[f"{k}_sd"] = v.std(axis=0, ddof=1)
        out["infAP_coverage"] = self.covered.mean(axis=0)
        out["infAP_se_est"] = self.se_est.mean(axis=0)
        for m, c in self.covered_by.items():
            out[f"infAP_coverage_{m}"] = c.mean(axis=0)
            out[f"infAP_se_est_{m}"] = self.se_by[m].mean(axis=0)
        return out


def prepare(sim, depth: int = 100, min_rel: int = 0):
    """Pool of all runs (with best rank and AP-prior weight), runs and topics kept (>= min_rel relevant)."""
    pool = sim.pool(depth, runs=list(sim.run_meta["run"]))
    w = samplers.depth_pool(sim.runs, depth)
    pool = pool.merge(w[["topic", "doc", "min_rank", "weight"]], on=["topic", "doc"], how="left")
    runs = sim.runs
    if min_rel:
        rc = pool[pool["grade"] > 0].groupby("topic").size()
        keep = set(rc[rc >= min_rel].index)
        pool = pool[pool["topic"].isin(keep)].reset_index(drop=True)
        runs = runs[runs["topic"].isin(keep)]
    return pool, runs


def stratum_rates(sizes: np.ndarray, total: float, weights) -> np.ndarray:
    """Rates per stratum: the first stratum fully judged (or at `total`/size if it alone exceeds the
    budget), the others in the ratio `weights`, all together `total` documents (rates capped at 1)."""
    sizes = np.asarray(sizes, np.float64)
    rates = np.zeros(len(sizes))
    rates[0] = 1.0 if total >= sizes[0] else total / max(sizes[0], 1.0)
    left = max(total - rates[0] * sizes[0], 0.0)
    w = np.asarray(weights, np.float64)[: len(sizes) - 1]
    for _ in range(len(sizes)):                          # redistribute what capping at 1 frees
        free = rates[1:] < 1.0
        denom = (w * sizes[1:] * free).sum()
        if denom <= 0:
            break
        c = (left - (rates[1:] * sizes[1:] * ~free).sum()) / denom
        new = np.where(free, np.minimum(c * w, 1.0), rates[1:])
        if np.allclose(new, rates[1:]):
            break
        rates[1:] = new
    return rates


def xinf_design_strata(pool: pd.DataFrame, runs: pd.DataFrame, codes: np.ndarray, budget: np.ndarray,
                       design: str = "campaign", depth: int = 100, bounds=(5, 20, 50),
                       weights=(3.0, 1.5, 1.0), seed: int = 0,
                       first_share: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pool row its stratum, and per (topic, stratum) group the sample size, for an xinfAP design.

    Returns (stratum per row, group code per row = topic * S + stratum, sample size per group).
    "campaign" takes the strata and sizes of engine.pooling's stratified pool at the per-topic
    `budget` (its first draw is discarded; trials redraw within the same strata and sizes);
    `first_share` is the share of the budget the depth-k stratum may take ("campaign", "terabyte").
    """
    if design in ("campaign", "terabyte"):
        if design == "terabyte":
            weights = (1.0,)                  # one stratum for the whole rest of the pool
        from ..pooling.candidates import pool_candidates, ranked_runs
        from ..pooling.static import stratified
        cand = pool_candidates(ranked_runs(runs, depth), depth)
        key = pool[["topic", "doc"]].astype(str)
        pos = pd.MultiIndex.from_frame(cand[["topic", "doc"]].astype(str)).get_indexer(pd.MultiIndex.from_frame(key))
        if (pos < 0).any():
            raise ValueError("pool documents missing from the runs' depth pool")
        cb = np.zeros(len(cand), np.int64)
        cb[pos] = budget[codes]
        _, st, prob = stratified(cand, cb, rng=np.random.default_rng(seed), weights=weights,
                                 first_share=first_share)
        strata = (np.asarray(st, np.int64) - 1)[pos]
        prob = np.asarray(prob, np.float64)[pos]
        S = int(strata.max()) + 1
        g = codes * S + strata
        size = np.bincount(g, minlength=(codes.max() + 1) * S)
        n_g = np.zeros(len(size), np.int64)
        n_g[g] = np.floor(prob * size[g] + 0.5).astype(np.int64)
        return strata, g, n_g
    if design == "terabyte_global":
        # one depth k for all topics (the thesis' TREC 8 simulation): the largest k whose depth-k pool
        # is at most half the total budget; each topic's random part is its depth-k pool size scaled
        # so that all topics together take the budget ("an equal number" when it is exactly half)
        mr = pool["min_rank"].to_numpy(np.int64)
        total = float(budget.sum())
        upto = np.cumsum(np.bincount(np.clip(mr, 0, depth), minlength=depth + 1))
        ks = np.flatnonzero(2 * upto <= total)
        k = int(ks.max()) if len(ks) else 0
        strata = (mr > k).astype(np.int64)
        T = int(codes.max()) + 1
        size1 = np.bincount(codes[strata == 0], minlength=T)
        size2 = np.bincount(codes[strata == 1], minlength=T)
        S1 = size1.sum()
        n2 = budget[:T].astype(np.float64) if S1 == 0 else size1 * (total - S1) / S1
        n_g = np.zeros(2 * T, np.int64)
        n_g[0::2] = size1
        n_g[1::2] = np.minimum(np.floor(n2 + 0.5).astype(np.int64), size2)
        return strata, codes * 2 + strata, n_g
    if design != "ranks":
        raise ValueError("xinf_design must be 'campaign', 'terabyte', 'terabyte_global' or 'ranks'")
    S = len(bounds) + 1
    strata = np.searchsorted(np.asarray(bounds), pool["min_rank"].to_numpy(), side="left").astype(np.int64)
    rates = stratum_rates(np.bincount(strata, minlength=S), float(budget.sum()), weights)
    g = codes * S + strata
    return strata, g, samplers.srs_sizes(g, np.tile(rates, codes.max() + 1))


def _strata_table(strata: np.ndarray, g: np.ndarray, n_g: np.ndarray, n_topics: int) -> pd.DataFrame:
    S = int(strata.max()) + 1
    size = np.bincount(g, minlength=n_topics * S).reshape(n_topics, S)
    n = n_g[: n_topics * S].reshape(n_topics, S)
    return pd.DataFrame({"stratum": np.arange(1, S + 1), "pool_docs": size.mean(axis=0),
                         "sampled": n.mean(axis=0),
                         "rate": n.sum(axis=0) / np.maximum(size.sum(axis=0), 1)})


def run_experiment(sim, n_trials: int = 200, rate: float = 0.2, depth: int = 100,
                   bounds=(5, 20, 50), weights=(3.0, 1.5, 1.0), mix: float = 1.0, min_rel: int = 0,
                   seed: int = 0, var_method: str = "appendix", level: float = 0.95,
                   xinf_design: str = "campaign", xinf_priors=(), var_methods=None,
                   first_share: float = 0.5, xinf_oracle: bool = False) -> ExperimentResult:
    """Draw `n_trials` samples per design and evaluate every run on each (see module doc).

    Intervals of mean infAP are computed with every variance in VAR_METHODS -- "appendix" (thesis
    eq. 3.1.1 / Appendix A, independent cut-offs), "dependent" (Appendix A with its covariances) and
    "linear" (linearization, infap_variance_linearized) and "jackknife" (delete-one jackknife);
    `var_method` is the primary one.
    Var(mean infAP) = sum of per-topic variances / T^2 (thesis 3.1.1). `xinf_priors` adds xinfAP
    variants on the same samples (estimates "xinfAP_<prior>", see xinfap.xinfap_terms).
    `xinf_oracle` adds "xinfAP_oracle" (xinfap_oracle_prior: the true local precision in place of
    sample_eval.pl's 1/3 prior; a diagnostic). `var_methods` restricts the variance methods computed
    (default all; the jackknife is the slow one; () none); "jackknife_bc" adds intervals centred at
    mean infAP minus its jackknife bias estimate (`infap_jackknife`; estimates "infAP_bc"), sharing
    the jackknife pass with "jackknife".
    """
    methods = list(VAR_METHODS) if var_methods is None else list(var_methods)
    if methods and var_method not in methods:     # var_methods=() computes no intervals
        methods.insert(0, var_method)
    for m in methods:
        if m not in VAR_METHODS and m != "jackknife_bc":
            raise ValueError(f"variance method {m!r}: choose from {', '.join(VAR_METHODS)}, jackknife_bc")
    from ..measures.m_map import map_
    pool, runs = prepare(sim, depth, min_rel)
    base = trials.base_ranked(pool[["topic", "doc", "grade"]], runs)
    nr = len(base.run_names)
    cnt = np.bincount(base.g_run, minlength=nr).astype(float)

    def per_run(v):
        return np.bincount(base.g_run, weights=v, minlength=nr) / cnt

    true_map = per_run(map_(base, ()))
    codes = pd.factorize(pool["topic"])[0].astype(np.int64)
    grade = pool["grade"].to_numpy(np.int64)
    size = np.bincount(codes)
    # infAP design: the per-topic budget round(rate x pool size)
    n_u = samplers.srs_sizes(codes, rate)
    strata, scode, n_s = xinf_design_strata(pool, runs, codes, n_u, xinf_design, depth, bounds, weights, seed,
                                         first_share)
    # statAP design
    wt = pool["weight"].to_numpy(np.float64)
    wt = wt / np.bincount(codes, weights=wt)[codes] + mix / size[codes]
    pi = samplers.pps_probabilities(wt, codes, np.floor(rate * size + 0.5))
    from scipy.stats import norm
    z = float(norm.ppf(0.5 + level / 2))
    rng = np.random.default_rng(seed)
    extra = [p for p in xinf_priors if p != "sample_eval"]
    names = ["infAP", "xinfAP", "statAP"] + [f"xinfAP_{p}" for p in extra]
    if "jackknife_bc" in methods:
        names.append("infAP_bc")
    if xinf_oracle:
        names.append("xinfAP_oracle")
    est = {k: np.zeros((n_trials, nr)) for k in names}
    cov_by = {m: np.zeros((n_trials, nr), bool) for m in methods}
    se_by = {m: np.zeros((n_trials, nr)) for m in methods}
    frac = {"infAP": 0.0, "xinfAP": 0.0, "statAP": 0.0}
    for t in range(n_trials):
        sel = samplers.srs_mask(codes, n_u, rng)
        r1 = trials.with_judgments(base, np.where(sel, grade, -1))
        m = per_run(infap.infap_terms(r1)["infAP"])
        est["infAP"][t] = m
        jk = infap_jackknife(r1) if {"jackknife", "jackknife_bc"} & set(methods) else None
        for name in methods:
            pv = jk[0] if name in ("jackknife", "jackknife_bc") else VAR_METHODS[name](r1)
            v = np.bincount(base.g_run, weights=pv, minlength=nr) / cnt ** 2
            se_by[name][t] = np.sqrt(v)
            centre = m
            if name == "jackknife_bc":         # Quenouille bias-corrected centre
                centre = m - per_run(jk[1])
                est["infAP_bc"][t] = centre
            cov_by[name][t] = np.abs(centre - true_map) <= z * se_by[name][t]
        frac["infAP"] += sel.mean() / n_trials
        sel = samplers.srs_mask(scode, n_s, rng)
        r2 = trials.with_judgments(base, np.where(sel, grade, -1), stratum=strata)
        est["xinfAP"][t] = per_run(xinfap.xinfap_terms(r2)["xinfAP"])
        for p in extra:
            est[f"xinfAP_{p}"][t] = per_run(xinfap.xinfap_terms(r2, prior=p)["xinfAP"])
        if xinf_oracle:
            est["xinfAP_oracle"][t] = per_run(xinfap_oracle_prior(r2, base.rel))
        frac["xinfAP"] += sel.mean() / n_trials
        sel = samplers.poisson_mask(pi, rng)
        r3 = trials.with_judgments(base, np.where(sel, grade, -1), prob=np.where(sel, pi, 1.0))
        est["statAP"][t] = per_run(statap.statap_terms(r3)["statAP"])
        frac["statAP"] += sel.mean() / n_trials
    none = np.zeros((n_trials, nr))
    return ExperimentResult(list(base.run_names), true_map, est, cov_by.get(var_method, none.astype(bool)),
                            se_by.get(var_method, none),
                            len(base.topic_names), len(pool) / max(len(base.topic_names), 1),
                            float((grade > 0).sum()) / max(len(base.topic_names), 1), frac,
                            var_method, cov_by, se_by, _strata_table(strata, scode, n_s, len(size)))
