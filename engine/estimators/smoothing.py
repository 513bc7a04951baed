"""Lidstone smoothing of sampled proportions, as used by infAP and xinfAP.

trec_eval's infAP uses (r + eps) / (n + 2 eps); NIST's sample_eval.pl (xinfAP, infNDCG) uses
(r + eps) / (n + 3 eps), both with eps = 0.00001. Both are kept so each measure matches its reference.
"""
from __future__ import annotations

import numpy as np

EPSILON = 0.00001


def lidstone(rel: np.ndarray, n: np.ndarray, eps: float = EPSILON, denom_mult: float = 2.0) -> np.ndarray:
    """Smoothed proportion (rel + eps) / (n + denom_mult * eps)."""
    return (np.asarray(rel, dtype=np.float64) + eps) / (np.asarray(n, dtype=np.float64) + denom_mult * eps)
