"""Rank correlations between system scorings, vectorized over many trials."""
from __future__ import annotations

import numpy as np


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """Kendall's tau-b between score vectors; x may be (trials, n) against y (n,) or (trials, n).

    Pairs tied in either vector are handled as tau-b does (they leave the numerator and shrink the
    normalizer of the vector in which they tie).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    single = x.ndim == 1
    x2 = np.atleast_2d(x)
    y2 = np.broadcast_to(np.atleast_2d(y), x2.shape)
    n = x2.shape[1]
    if n < 2:
        return np.nan if single else np.full(len(x2), np.nan)
    iu, ju = np.triu_indices(n, 1)
    sx = np.sign(x2[:, iu] - x2[:, ju])
    sy = np.sign(y2[:, iu] - y2[:, ju])
    num = (sx * sy).sum(axis=1)
    den = np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(den > 0, num / den, np.nan)
    return float(tau[0]) if single else tau


def _tau_ap_b_half(ref: np.ndarray, est: np.ndarray) -> float:
    """One direction of tau_AP_b: for every item below the top tie group of `est`, the share of the items
    `est` ranks strictly above it that `ref` scores strictly higher, divided by their number; NaN when
    `est` ties every item."""
    above = est[None, :] > est[:, None]                    # [i, j]: j strictly above i in est
    p = above.sum(axis=1)
    keep = p > 0
    if not keep.any():
        return float("nan")
    c = (above & (ref[None, :] > ref[:, None])).sum(axis=1)
    return float(2.0 / keep.sum() * (c[keep] / p[keep]).sum() - 1.0)


def tau_ap_b(x, y) -> float:
    """Symmetric tau_AP with ties (tau_AP_b of Urbano and Marrero 2017): the mean of the two directions,
    larger scores ranking first. NaN when either vector ties every item (one direction is then undefined)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) != len(y):
        raise ValueError(f"tau_ap_b needs two vectors of the same length, got {len(x)} and {len(y)}")
    return (_tau_ap_b_half(x, y) + _tau_ap_b_half(y, x)) / 2.0


def tau_gap(truth, predicted) -> float:
    """tau_GAP (Gao and Oard, SIGIR 2015) of a predicted ordering against truth scores: over the positions
    i >= 2 of the predicted order (decreasing score, ties by position), the share of the truth-gap mass
    |t_j - t_i| of the items above that the prediction orders as the truth does; 2 / (positions used) *
    sum - 1. Positions whose items above are all truth-tied are left out; NaN when none is left."""
    t, e = np.asarray(truth, float), np.asarray(predicted, float)
    if len(t) != len(e):
        raise ValueError(f"tau_gap needs two vectors of the same length, got {len(t)} and {len(e)}")
    n = len(t)
    if n < 2:
        return float("nan")
    order = np.lexsort((np.arange(n), -e))
    ts = t[order]
    g = np.abs(ts[None, :] - ts[:, None])                  # [i, j]
    low = np.tril(np.ones((n, n), bool), k=-1)             # j above i
    gaps = (g * low).sum(axis=1)[1:]
    good = (g * (low & (ts[None, :] > ts[:, None]))).sum(axis=1)[1:]
    use = gaps > 0
    if not use.any():
        return float("nan")
    return float(2.0 / use.sum() * (good[use] / gaps[use]).sum() - 1.0)
