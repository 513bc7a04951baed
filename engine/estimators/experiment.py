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
           "ranks" -- strata by fixed best-rank bounds (`bounds`, default 1-5 / 6-20 / 21-50 /
               51-100), the first fully judged, the others at rates in the ratio `weights`;
  statAP : Poisson sample with inclusion probability proportional to the AP-prior weight mixed with a
           uniform share (`mix`), expected size `rate` of the pool.
The same strata / sizes are used in every trial; each trial redraws the simple random samples.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from . import infap, samplers, statap, trials, xinfap


VAR_METHODS = {
    "appendix": lambda r: infap.infap_variance(r, dependent=False),
    "dependent": lambda r: infap.infap_variance(r, dependent=True),
    "linear": infap.infap_variance_linearized,
    "jackknife": infap.infap_variance_jackknife,
}


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
                       weights=(3.0, 1.5, 1.0), seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pool row its stratum, and per (topic, stratum) group the sample size, for an xinfAP design.

    Returns (stratum per row, group code per row = topic * S + stratum, sample size per group).
    "campaign" takes the strata and sizes of engine.pooling's stratified pool at the per-topic
    `budget` (its first draw is discarded; trials redraw within the same strata and sizes).
    """
    if design == "campaign":
        from ..pooling.candidates import pool_candidates, ranked_runs
        from ..pooling.static import stratified
        cand = pool_candidates(ranked_runs(runs, depth), depth)
        key = pool[["topic", "doc"]].astype(str)
        pos = pd.MultiIndex.from_frame(cand[["topic", "doc"]].astype(str)).get_indexer(pd.MultiIndex.from_frame(key))
        if (pos < 0).any():
            raise ValueError("pool documents missing from the runs' depth pool")
        cb = np.zeros(len(cand), np.int64)
        cb[pos] = budget[codes]
        _, st, prob = stratified(cand, cb, rng=np.random.default_rng(seed), weights=weights)
        strata = (np.asarray(st, np.int64) - 1)[pos]
        prob = np.asarray(prob, np.float64)[pos]
        S = int(strata.max()) + 1
        g = codes * S + strata
        size = np.bincount(g, minlength=(codes.max() + 1) * S)
        n_g = np.zeros(len(size), np.int64)
        n_g[g] = np.floor(prob * size[g] + 0.5).astype(np.int64)
        return strata, g, n_g
    if design != "ranks":
        raise ValueError("xinf_design must be 'campaign' or 'ranks'")
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
                   xinf_design: str = "campaign", xinf_priors=(), var_methods=None) -> ExperimentResult:
    """Draw `n_trials` samples per design and evaluate every run on each (see module doc).

    Intervals of mean infAP are computed with every variance in VAR_METHODS -- "appendix" (thesis
    eq. 3.1.1 / Appendix A, independent cut-offs), "dependent" (Appendix A with its covariances) and
    "linear" (linearization, infap_variance_linearized); `var_method` is the primary one.
    Var(mean infAP) = sum of per-topic variances / T^2 (thesis 3.1.1). `xinf_priors` adds xinfAP
    variants on the same samples (estimates "xinfAP_<prior>", see xinfap.xinfap_terms).
    `var_methods` restricts the variance methods computed (default all; the jackknife is the slow one).
    """
    methods = list(VAR_METHODS) if var_methods is None else list(var_methods)
    if var_method not in methods:
        methods.insert(0, var_method)
    for m in methods:
        if m not in VAR_METHODS:
            raise ValueError(f"variance method {m!r}: choose from {', '.join(VAR_METHODS)}")
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
    strata, scode, n_s = xinf_design_strata(pool, runs, codes, n_u, xinf_design, depth, bounds, weights, seed)
    # statAP design
    wt = pool["weight"].to_numpy(np.float64)
    wt = wt / np.bincount(codes, weights=wt)[codes] + mix / size[codes]
    pi = samplers.pps_probabilities(wt, codes, np.floor(rate * size + 0.5))
    z = float(norm.ppf(0.5 + level / 2))
    rng = np.random.default_rng(seed)
    extra = [p for p in xinf_priors if p != "sample_eval"]
    est = {k: np.zeros((n_trials, nr)) for k in ["infAP", "xinfAP", "statAP"] + [f"xinfAP_{p}" for p in extra]}
    cov_by = {m: np.zeros((n_trials, nr), bool) for m in methods}
    se_by = {m: np.zeros((n_trials, nr)) for m in methods}
    frac = {"infAP": 0.0, "xinfAP": 0.0, "statAP": 0.0}
    for t in range(n_trials):
        sel = samplers.srs_mask(codes, n_u, rng)
        r1 = trials.with_judgments(base, np.where(sel, grade, -1))
        m = per_run(infap.infap_terms(r1)["infAP"])
        est["infAP"][t] = m
        for name in methods:
            v = np.bincount(base.g_run, weights=VAR_METHODS[name](r1), minlength=nr) / cnt ** 2
            se_by[name][t] = np.sqrt(v)
            cov_by[name][t] = np.abs(m - true_map) <= z * se_by[name][t]
        frac["infAP"] += sel.mean() / n_trials
        sel = samplers.srs_mask(scode, n_s, rng)
        r2 = trials.with_judgments(base, np.where(sel, grade, -1), stratum=strata)
        est["xinfAP"][t] = per_run(xinfap.xinfap_terms(r2)["xinfAP"])
        for p in extra:
            est[f"xinfAP_{p}"][t] = per_run(xinfap.xinfap_terms(r2, prior=p)["xinfAP"])
        frac["xinfAP"] += sel.mean() / n_trials
        sel = samplers.poisson_mask(pi, rng)
        r3 = trials.with_judgments(base, np.where(sel, grade, -1), prob=np.where(sel, pi, 1.0))
        est["statAP"][t] = per_run(statap.statap_terms(r3)["statAP"])
        frac["statAP"] += sel.mean() / n_trials
    return ExperimentResult(list(base.run_names), true_map, est, cov_by[var_method], se_by[var_method],
                            len(base.topic_names), len(pool) / max(len(base.topic_names), 1),
                            float((grade > 0).sum()) / max(len(base.topic_names), 1), frac,
                            var_method, cov_by, se_by, _strata_table(strata, scode, n_s, len(size)))
