"""Samplers of a judgment pool with exact inclusion probabilities (for infAP, xinfAP, statAP).

Every sampler takes a pool DataFrame (columns topic, doc, and what it needs: stratum, weight) and a
numpy Generator, and returns the sampled rows as a DataFrame topic, doc, stratum, prob (the document's
inclusion probability). `sample_qrels` turns a sample plus the pool plus true grades into judgments:
sampled documents get their grade, pooled-but-unsampled ones grade -1 (sample_eval.pl convention).
"""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..ranking.join import ranked_rows

pd = lazy_module("pandas")


def srs_mask(codes: np.ndarray, n_per_group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Selection mask of a simple random sample of n_g units in every group g (codes 0..G-1)."""
    codes = np.asarray(codes, np.int64)
    if len(codes) == 0:
        return np.zeros(0, bool)
    sizes = np.bincount(codes)
    n = np.minimum(np.asarray(n_per_group, np.int64)[: len(sizes)], sizes)
    order = np.lexsort((rng.random(len(codes)), codes))
    starts = np.concatenate(([0], np.cumsum(sizes)))[:-1]
    pos = np.arange(len(codes)) - starts[codes[order]]
    sel = np.zeros(len(codes), bool)
    sel[order] = pos < n[codes[order]]
    return sel


def poisson_mask(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Selection mask of a Poisson sample: unit i is included independently with probability pi_i."""
    return rng.random(len(pi)) < pi


def srs_sizes(codes: np.ndarray, rate: np.ndarray, min_one: bool = True) -> np.ndarray:
    """Per group sample size round(rate_g * N_g) (at least 1 when min_one and rate_g > 0)."""
    codes = np.asarray(codes, np.int64)
    sizes = np.bincount(codes) if len(codes) else np.zeros(0, np.int64)
    rate = np.broadcast_to(np.asarray(rate, np.float64), sizes.shape)
    n = np.floor(rate * sizes + 0.5).astype(np.int64)
    if min_one:
        n = np.where((rate > 0) & (sizes > 0), np.maximum(n, 1), n)
    return np.minimum(n, sizes)


def _srs(pool: pd.DataFrame, keys: np.ndarray, rate: np.ndarray, rng: np.random.Generator,
         min_one: bool) -> pd.DataFrame:
    """Simple random sample without replacement of round(rate * size) rows in every `keys` group."""
    codes, _ = pd.factorize(keys)
    codes = codes.astype(np.int64)
    G = codes.max() + 1 if len(codes) else 0
    grate = np.zeros(G)
    grate[codes] = rate
    n = srs_sizes(codes, grate, min_one)
    sel = srs_mask(codes, n, rng)
    size = np.bincount(codes, minlength=G)
    out = pool.loc[sel, ["topic", "doc"]].reset_index(drop=True)
    out["prob"] = (n[codes[sel]] / size[codes[sel]]).astype(np.float64)
    return out


def uniform_sample(pool: pd.DataFrame, rate: float, rng: np.random.Generator,
                   min_one: bool = True) -> pd.DataFrame:
    """Per topic, a simple random sample of round(rate * pool size) documents (infAP's design)."""
    if not 0 <= rate <= 1:
        raise ValueError(f"sampling rate must be in [0, 1] (got {rate})")
    keys = pool["topic"].astype(str).to_numpy(object)
    out = _srs(pool, keys, np.full(len(pool), float(rate)), rng, min_one)
    out.insert(2, "stratum", np.zeros(len(out), np.int64))
    return out


def stratified_sample(pool: pd.DataFrame, rates, rng: np.random.Generator,
                      min_one: bool = True) -> pd.DataFrame:
    """Per topic and stratum (pool column `stratum`), a simple random sample at that stratum's rate.

    `rates` maps stratum -> rate (dict) or is a sequence indexed by stratum number.
    """
    st = pool["stratum"].to_numpy(np.int64)
    if isinstance(rates, dict):
        lut = rates
        rate = np.array([float(lut.get(int(s), 0.0)) for s in np.unique(st)])[np.searchsorted(np.unique(st), st)]
    else:
        rr = np.asarray(rates, dtype=np.float64)
        if len(st) and st.max() >= len(rr):
            raise ValueError(f"no rate for stratum {int(st.max())} (got {len(rr)} rates)")
        rate = rr[st]
    keys = (pool["topic"].astype(str) + "\x00" + pool["stratum"].astype(str)).to_numpy(object)
    out = _srs(pool, keys, rate, rng, min_one)
    idx = pd.MultiIndex.from_frame(pool[["topic", "doc"]].astype(str))
    pos = idx.get_indexer(pd.MultiIndex.from_frame(out[["topic", "doc"]].astype(str)))
    out.insert(2, "stratum", st[pos])
    return out


def pps_probabilities(weights: np.ndarray, topics: np.ndarray, n_per_topic: np.ndarray) -> np.ndarray:
    """Inclusion probabilities proportional to weight, capped at 1, summing to n per topic.

    `n_per_topic` is indexed by topic code in order of first appearance. The computation is
    engine.pooling.samplers.pps_probabilities (one implementation for pools and estimators); weights
    are floored at 1e-12 here so that every document keeps a positive probability (Horvitz-Thompson
    estimates need pi > 0 for every unit that can be relevant).
    """
    from .samplers import pps_probabilities as _pps
    codes, _ = pd.factorize(np.asarray(topics, dtype=object))
    w = np.maximum(np.asarray(weights, dtype=np.float64), 1e-12)
    return _pps(codes.astype(np.int64), w, np.asarray(n_per_topic, np.float64))


def pps_sample(pool: pd.DataFrame, rate: float, rng: np.random.Generator,
               weight_col: str = "weight") -> pd.DataFrame:
    """Poisson sample with inclusion probability proportional to `weight` (statAP's design).

    Expected sample size per topic is round(rate * pool size); each document is included
    independently with its probability, so the probabilities are exact.
    """
    topics = pool["topic"].astype(str).to_numpy(object)
    codes, _ = pd.factorize(topics)
    size = np.bincount(codes)
    n = np.floor(rate * size + 0.5)
    pi = pps_probabilities(pool[weight_col].to_numpy(np.float64), topics, n)
    take = poisson_mask(pi, rng)
    out = pool.loc[take, ["topic", "doc"]].reset_index(drop=True)
    out["stratum"] = np.zeros(len(out), np.int64)
    out["prob"] = pi[take]
    return out


def ap_prior_weights(ranks: np.ndarray, depth: int) -> np.ndarray:
    """The AP prior of rank k in a depth-Z list (Aslam, Pavlu and Yilmaz): (1 + H_Z - H_{k-1}) / (2 Z).

    AP = (1/R) sum over pairs j <= i of rel_j rel_i / i; giving rank k its diagonal term 1/k and half of
    each pair it belongs to yields (1/2)(1 + 1/k + 1/(k+1) + ... + 1/Z), and dividing by Z makes the
    weights sum to 1 over ranks 1..Z (sum_k (H_Z - H_{k-1}) = Z). Same function as
    engine.pooling.candidates.ap_prior, which this delegates to.
    """
    from .candidates import ap_prior
    k = np.clip(np.asarray(ranks, dtype=np.int64), 1, depth)
    return ap_prior(k, int(depth))


def depth_pool(runs: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Depth-d pool of runs (run, topic, doc, score): topic, doc, min_rank, weight (summed AP prior)."""
    r = runs[["run", "topic", "doc", "score"]].copy()
    r["topic"] = r["topic"].astype(str)
    r["doc"] = r["doc"].astype(str)
    rows, rank = ranked_rows(r, depth, by_name=True)
    r = r.iloc[rows].assign(rank=rank)
    r["weight"] = ap_prior_weights(r["rank"].to_numpy(), depth)
    pool = r.groupby(["topic", "doc"], sort=True).agg(min_rank=("rank", "min"), weight=("weight", "sum")).reset_index()
    return pool


def assign_strata(pool: pd.DataFrame, bounds) -> pd.DataFrame:
    """Stratum by the pool's best rank: bounds (10, 30) -> ranks 1-10 stratum 0, 11-30 stratum 1, rest 2."""
    out = pool.copy()
    out["stratum"] = np.searchsorted(np.asarray(bounds), out["min_rank"].to_numpy(), side="left").astype(np.int64)
    return out


def sample_qrels(pool: pd.DataFrame, sample: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Judgments for a sample: every pool document, grade from `truth` when sampled else -1.

    Columns topic, doc, grade, stratum, prob (prob = inclusion probability; 1 for unsampled rows,
    which no estimator reads). Pool documents absent from `truth` are non-relevant (grade 0).
    """
    p = pool[["topic", "doc"]].astype(str).reset_index(drop=True)
    pi = pd.MultiIndex.from_frame(p)
    si = pd.MultiIndex.from_frame(sample[["topic", "doc"]].astype(str))
    pos = si.get_indexer(pi)
    sampled = pos >= 0
    ti = pd.MultiIndex.from_frame(truth[["topic", "doc"]].astype(str))
    tpos = ti.get_indexer(pi)
    tg = truth["grade"].to_numpy(np.int64)
    grade = np.where(tpos >= 0, tg[np.maximum(tpos, 0)], 0)
    grade = np.where(sampled, np.maximum(grade, 0), -1)
    if "stratum" in pool.columns:
        stratum = pool["stratum"].to_numpy(np.int64)
    else:
        stratum = np.where(sampled, sample["stratum"].to_numpy(np.int64)[np.maximum(pos, 0)], 0)
    prob = np.where(sampled, sample["prob"].to_numpy(np.float64)[np.maximum(pos, 0)], 1.0)
    return pd.DataFrame({"topic": p["topic"], "doc": p["doc"], "grade": grade.astype(np.int64),
                         "stratum": stratum.astype(np.int64), "prob": prob})
