"""Pool builders that need no judgments: depth-k, take-n, uniform, stratified and statAP sampling.

Each takes the candidate table (one row per topic and document of the depth-d pool, in canonical
order: best rank, round-robin over runs, doc id) and per-row budgets, and returns per-row
`selected`, `stratum` and `prob` arrays. Sampling designs keep their unselected candidates as the
sampling frame (estimators need the stratum sizes).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .candidates import group_codes, rank_within
from .designs import srs_mask
from .samplers import pps_probabilities, pps_systematic


def _srs(codes, n_per_group, rng) -> tuple[np.ndarray, np.ndarray]:
    """Simple random sampling within groups (engine.pooling.designs.srs_mask): selection mask and
    inclusion probabilities n_g / N_g. Fixed-size PPS comes from this package's samplers (statAP
    pools need an exact budget; the estimators' pps_sample is a Poisson design of random size)."""
    codes = np.asarray(codes, np.int64)
    sizes = np.bincount(codes, minlength=len(n_per_group))
    n = np.minimum(np.asarray(n_per_group, np.int64), sizes)
    sel = srs_mask(codes, n, rng)
    prob = np.divide(n[codes], sizes[codes], out=np.zeros(len(codes)), where=sizes[codes] > 0)
    return sel, prob


def depth(cand: pd.DataFrame, budget: np.ndarray | None, k: int | None = None, **_):
    """Documents at best rank <= k; with a budget, the first `budget` of them in canonical order."""
    sel = np.ones(len(cand), bool) if k is None else cand["best_rank"].to_numpy() <= int(k)
    if budget is not None:
        codes, _ = group_codes(cand["topic"])
        pos = rank_within(np.where(sel, codes, -1 - codes))  # positions among selected rows only
        sel &= pos < budget
    return sel, np.ones(len(cand), np.int64), np.ones(len(cand))


def take_n(cand: pd.DataFrame, budget: np.ndarray | None, **_):
    """Round-robin over the pooled runs, rank by rank, until each topic's budget is reached."""
    if budget is None:
        raise CranfieldError("strategy take_n needs a budget (--budget N per topic)")
    codes, _ = group_codes(cand["topic"])
    sel = rank_within(codes) < budget
    return sel, np.ones(len(cand), np.int64), np.ones(len(cand))


def uniform(cand: pd.DataFrame, budget: np.ndarray | None, rng=None, rate: float | None = None, **_):
    """Simple random sample of the depth pool (infAP design): n = budget (or rate x pool size)."""
    codes, _ = group_codes(cand["topic"])
    sizes = np.bincount(codes)
    n = _per_group_n(codes, sizes, budget, rate)
    sel, prob = _srs(codes, n, rng)
    return sel, np.ones(len(cand), np.int64), prob


def _per_group_n(codes, sizes, budget, rate):
    if rate is not None:
        return np.minimum(np.ceil(float(rate) * sizes - 1e-9).astype(np.int64), sizes)
    if budget is None:
        raise CranfieldError("sampling strategies need a budget (--budget) or a rate")
    first = np.zeros(len(sizes), np.int64)
    first[codes[::-1]] = np.asarray(budget)[::-1]
    return np.minimum(first, sizes)


def _allocate(total: np.ndarray, sizes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Split each row of `total` over strata in proportion to `weights`, capped by stratum sizes
    (the excess goes to the strata with room, again by weight); integer counts summing to the total."""
    n_t, n_s = sizes.shape
    alloc = np.zeros((n_t, n_s))
    left = np.minimum(total.astype(float), sizes.sum(axis=1))
    for _ in range(n_s + 1):
        room = sizes - alloc
        w = np.where(room > 0, weights[None, :], 0.0)
        ws = w.sum(axis=1, keepdims=True)
        share = np.divide(w * left[:, None], ws, out=np.zeros_like(w), where=ws > 0)
        add = np.minimum(share, room)
        alloc += add
        left = left - add.sum(axis=1)
        if (left < 1e-9).all():
            break
    # integer counts by largest remainder
    base = np.floor(alloc + 1e-9)
    need = np.round(alloc.sum(axis=1) - base.sum(axis=1)).astype(np.int64)
    frac = np.where(base < sizes, alloc - base, -1.0)
    order = np.argsort(-frac, axis=1, kind="stable")
    bump = np.zeros_like(base)
    for j in range(n_s):
        col = order[:, j]
        give = (need > j) & (frac[np.arange(n_t), col] > -1)
        bump[np.arange(n_t)[give], col[give]] += 1
    return np.minimum(base + bump, sizes).astype(np.int64)


def stratified(cand: pd.DataFrame, budget: np.ndarray | None, rng=None, bounds=None, rates=None,
               weights=(3.0, 1.5, 1.0), first_share: float = 0.5, **_):
    """Stratified random sampling with strata by rank depth (the xinfAP / infNDCG design).

    Strata: with `bounds` [b1, b2, ...], stratum s holds the documents whose best rank is in
    (b_{s-1}, b_s] (the last stratum also holds any deeper documents of the pool). Without bounds, stratum 1 is the largest depth-k pool (k chosen per topic) of
    at most `first_share` x budget documents, fully judged, and the rest of the pool is cut by rank
    into len(weights) strata of about equal size (thesis 3.1.5: 4 strata). Sample sizes: `rates`
    per stratum, or the budget left after stratum 1 split over the other strata by `weights`
    (default 3 : 1.5 : 1). Within a stratum, a simple random sample: probability n_s / N_s.
    """
    codes, _ = group_codes(cand["topic"])
    n_t = int(codes.max()) + 1 if len(codes) else 0
    best = cand["best_rank"].to_numpy(np.int64)
    sizes_t = np.bincount(codes, minlength=n_t)
    if bounds is not None:
        b = np.asarray(sorted(int(x) for x in bounds))
        stratum = np.searchsorted(b, best, side="left") + 1
        if (stratum > len(b)).any():
            stratum = np.minimum(stratum, len(b))
        n_strata = len(b)
        full_first = False
    else:
        if budget is None:
            raise CranfieldError("stratified sampling needs --budget, or explicit strata bounds and rates")
        bud = np.zeros(n_t, np.int64)
        bud[codes] = np.asarray(budget)
        # rows sharing (topic, best rank) go together; prefix count up to each rank
        key = pd.DataFrame({"t": codes, "r": best})
        upto = key.groupby(["t", "r"], sort=True).size().groupby(level=0).cumsum()
        upto_row = upto.reindex(pd.MultiIndex.from_arrays([codes, best])).to_numpy()
        first = upto_row <= np.floor(first_share * bud[codes])
        n1 = np.bincount(codes[first], minlength=n_t)
        n_rest = len(weights)
        # the rest cut by rank into n_rest strata of about equal size (ties at a rank stay together)
        pos_first_of_rank = upto_row - key.groupby(["t", "r"])["t"].transform("size").to_numpy() - n1[codes]
        m = (sizes_t - n1)[codes]
        band = np.minimum((n_rest * pos_first_of_rank) // np.maximum(m, 1), n_rest - 1)
        stratum = np.where(first, 1, 2 + band).astype(np.int64)
        n_strata = n_rest + 1
        full_first = True
    sizes = np.zeros((n_t, n_strata), np.int64)
    np.add.at(sizes, (codes, stratum - 1), 1)
    if rates is not None:
        r = np.asarray([float(x) for x in rates])
        if len(r) != n_strata:
            raise CranfieldError(f"stratified sampling: {len(r)} rates for {n_strata} strata")
        n_s = np.minimum(np.ceil(r[None, :] * sizes - 1e-9), sizes).astype(np.int64)
    else:
        if budget is None:
            raise CranfieldError("stratified sampling needs rates per stratum or a budget")
        bud = np.zeros(n_t, np.int64)
        bud[codes] = np.asarray(budget)
        w = np.asarray([float(x) for x in weights])
        if full_first:
            n_s = np.zeros((n_t, n_strata), np.int64)
            n_s[:, 0] = sizes[:, 0]
            n_s[:, 1:] = _allocate(bud - sizes[:, 0], sizes[:, 1:], w)
        else:
            if len(w) != n_strata:
                w = np.ones(n_strata)
            n_s = _allocate(bud, sizes, w)
    scode = codes * n_strata + (stratum - 1)
    sel, prob = _srs(scode, n_s.ravel(), rng)
    return sel, stratum, prob


def statap(cand: pd.DataFrame, budget: np.ndarray | None, rng=None, rate: float | None = None, **_):
    """statAP sampling: inclusion probability proportional to the AP prior (capped at 1), fixed size."""
    codes, _ = group_codes(cand["topic"])
    sizes = np.bincount(codes)
    n = _per_group_n(codes, sizes, budget, rate)
    pi = pps_probabilities(codes, cand["prior"].to_numpy(np.float64), n)
    sel = pps_systematic(codes, pi, rng)
    return sel, np.ones(len(cand), np.int64), pi


STATIC = {"depth": depth, "take_n": take_n, "uniform": uniform, "stratified": stratified, "statap": statap}
SAMPLING = {"uniform", "stratified", "statap"}
READS = {"depth": ("best_rank",), "stratified": ("best_rank",), "statap": ("prior",)}   # candidate columns
#   each builder reads besides topic and doc (the others only set the canonical order)
