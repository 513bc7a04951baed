"""Fixed-size samplers with exact inclusion probabilities, vectorized over groups (topics or strata);
simple random sampling is engine.pooling.designs.srs_mask.

- `pps_probabilities` + `pps_systematic`: unequal-probability sampling of a fixed size n_g with
  inclusion probabilities pi_i = min(1, c_g * p_i) (sum pi = n_g), drawn by systematic sampling
  over a random permutation (Madow): a unit is selected with probability exactly pi_i.
"""
from __future__ import annotations

import numpy as np


def pps_probabilities(codes: np.ndarray, p: np.ndarray, n_per_group: np.ndarray) -> np.ndarray:
    """Inclusion probabilities pi = min(1, c_g p) with sum pi = n_g per group (units with p = 0 get 0)."""
    codes = np.asarray(codes, np.int64)
    p = np.asarray(p, np.float64)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    n = np.asarray(n_per_group, np.float64)
    positive = np.bincount(codes, weights=(p > 0).astype(float), minlength=n_groups)
    n = np.minimum(n, positive)
    capped = np.zeros(len(p), bool)
    pi = np.zeros(len(p))
    for _ in range(len(p) + 1):
        free = ~capped & (p > 0)
        mass = np.bincount(codes[free], weights=p[free], minlength=n_groups)
        left = n - np.bincount(codes[capped], minlength=n_groups)
        c = np.divide(left, mass, out=np.zeros(n_groups), where=mass > 0)
        pi = np.where(capped, 1.0, np.where(p > 0, c[codes] * p, 0.0))
        new = free & (pi >= 1.0)
        if not new.any():
            break
        capped |= new
    return np.minimum(pi, 1.0)


def pps_systematic(codes: np.ndarray, pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Selection mask of a systematic sample with inclusion probabilities `pi` (units with pi = 1
    are certain; the others are laid on [0, sum) in random order and hit by u, u+1, u+2, ...)."""
    codes = np.asarray(codes, np.int64)
    pi = np.asarray(pi, np.float64)
    sel = pi >= 1.0 - 1e-12
    rest = np.flatnonzero(~sel & (pi > 0))
    if len(rest) == 0:
        return sel
    n_groups = int(codes.max()) + 1
    key = rng.random(len(rest))
    order = rest[np.lexsort((key, codes[rest]))]
    c = codes[order]
    cum = np.cumsum(pi[order])
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1])))
    base = np.repeat(np.concatenate(([0.0], cum))[starts], np.diff(np.concatenate((starts, [len(c)]))))
    hi = cum - base
    lo = hi - pi[order]
    u = rng.random(n_groups)[c]
    hit = np.ceil(hi - u) - np.ceil(lo - u) >= 1
    sel[order[hit]] = True
    return sel
