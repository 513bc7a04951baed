"""Multiple-testing corrections with statsmodels' `multipletests` names and results (reject, corrected
p-values), implemented here: statsmodels is not a dependency (it is a test-only oracle).

Methods (and the aliases statsmodels accepts): bonferroni (b, bonf), sidak (s), holm-sidak (hs),
holm (h), simes-hochberg (sh), hommel (ho), fdr_bh (fdr_i, fdr_p, fdri, fdrp, bh), fdr_by (fdr_n, fdr_c,
fdrn, fdrcorr), fdr_tsbh (fdr_2sbh), fdr_tsbky (fdr_2sbky, fdr_twostage), fdr_gbs. NaN p-values (no test
possible) are left out of the family: their reject is False and their corrected value NaN.

>>> reject, corrected = multipletests([0.01, 0.04, 0.03], 0.05, "holm")
>>> reject.tolist(), [round(float(x), 4) for x in corrected]
([True, False, False], [0.03, 0.06, 0.06])
"""
from __future__ import annotations

import numpy as np

_ALIASES = {
    "bonferroni": ("b", "bonf"), "sidak": ("s",), "holm-sidak": ("hs",), "holm": ("h",),
    "simes-hochberg": ("sh",), "hommel": ("ho",), "fdr_bh": ("fdr_i", "fdr_p", "fdri", "fdrp", "bh"),
    "fdr_by": ("fdr_n", "fdr_c", "fdrn", "fdrcorr"), "fdr_tsbh": ("fdr_2sbh",),
    "fdr_tsbky": ("fdr_2sbky", "fdr_twostage"), "fdr_gbs": (),
}
METHODS = {a: m for m, al in _ALIASES.items() for a in (m,) + al}


def method_name(method: str) -> str:
    """The canonical name of a correction method (statsmodels' aliases accepted, any case)."""
    from ..errors import CranfieldError
    m = METHODS.get(str(method).lower())
    if m is None:
        raise CranfieldError(f"unknown correction {method!r}; choose from {', '.join(_ALIASES)} (or none)")
    return m


def _step_down(p: np.ndarray, crit: np.ndarray) -> np.ndarray:
    """Sorted p-values rejected until the first that exceeds its critical value."""
    over = np.flatnonzero(p > crit)
    stop = over[0] if len(over) else len(p)
    return np.arange(len(p)) < stop


def _bh(p: np.ndarray, alpha: float, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg on sorted p (factor: Benjamini-Yekutieli's sum of 1/i)."""
    m = len(p)
    ecdf = np.arange(1, m + 1) / m / factor
    below = np.flatnonzero(p <= ecdf * alpha)
    reject = np.arange(m) <= below[-1] if len(below) else np.zeros(m, bool)
    corrected = np.minimum.accumulate((p / ecdf)[::-1])[::-1]
    return reject, np.minimum(corrected, 1.0)


def _two_stage(p: np.ndarray, alpha: float, bky: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two-stage adaptive FDR (Benjamini, Krieger and Yekutieli; or with BH's first stage), one iteration
    as statsmodels' default."""
    m = len(p)
    fact = 1.0 + alpha if bky else 1.0
    a1 = alpha / fact
    reject, corr = _bh(p, a1)
    r1 = int(reject.sum())
    if r1 in (0, m):
        return reject, np.minimum(corr * fact, 1.0)
    m0 = m - r1
    reject, corr = _bh(p, a1 * m / m0)
    corr = corr * m0 / m * fact
    return reject, np.minimum(corr, 1.0)


def _sorted(p: np.ndarray, alpha: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    m = len(p)
    k = np.arange(m, 0, -1)                 # m, m-1, ..., 1
    if method == "bonferroni":
        return p <= alpha / m, np.minimum(p * m, 1.0)
    if method == "sidak":
        return p <= 1 - (1 - alpha) ** (1 / m), np.minimum(-np.expm1(m * np.log1p(-p)), 1.0)
    if method == "holm-sidak":
        reject = _step_down(p, 1 - (1 - alpha) ** (1 / k))
        return reject, np.minimum(np.maximum.accumulate(-np.expm1(k * np.log1p(-p))), 1.0)
    if method == "holm":
        return _step_down(p, alpha / k), np.minimum(np.maximum.accumulate(p * k), 1.0)
    if method == "simes-hochberg":
        below = np.flatnonzero(p <= alpha / k)
        reject = np.arange(m) <= below[-1] if len(below) else np.zeros(m, bool)
        return reject, np.minimum(np.minimum.accumulate((k * p)[::-1])[::-1], 1.0)
    if method == "hommel":
        a = p.copy()
        for j in range(m, 1, -1):
            cim = np.min(j * p[-j:] / np.arange(1, j + 1))
            a[-j:] = np.maximum(a[-j:], cim)
            a[:-j] = np.maximum(a[:-j], np.minimum(j * p[:-j], cim))
        return a <= alpha, np.minimum(a, 1.0)
    if method == "fdr_bh":
        return _bh(p, alpha)
    if method == "fdr_by":
        return _bh(p, alpha, float(np.sum(1.0 / np.arange(1, m + 1))))
    if method in ("fdr_tsbh", "fdr_tsbky"):
        return _two_stage(p, alpha, method == "fdr_tsbky")
    if method == "fdr_gbs":
        i = np.arange(1, m + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (m + 1.0 - i) / i * p / (1.0 - p)
        corr = np.minimum.accumulate(np.maximum.accumulate(q)[::-1])[::-1]
        return corr <= alpha, np.minimum(corr, 1.0)
    raise AssertionError(method)


def multipletests(pvals, alpha: float = 0.05, method: str = "holm") -> tuple[np.ndarray, np.ndarray]:
    """(reject, corrected p-values) of one family of p-values, as statsmodels' `multipletests` gives them."""
    method = method_name(method)
    p = np.asarray(pvals, np.float64)
    reject = np.zeros(len(p), bool)
    corrected = np.full(len(p), np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if not len(ok):
        return reject, corrected
    order = ok[np.argsort(p[ok], kind="mergesort")]
    r, c = _sorted(p[order], float(alpha), method)
    reject[order] = r
    corrected[order] = c
    return reject, corrected
