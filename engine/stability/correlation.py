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
