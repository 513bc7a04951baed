"""Stratified topic designs (kanoulas thesis 3.2.4-3.2.5).

- `weighted_mean`: the Million Query wMAP, the mean over query classes of the per-class mean scores.
- `multivariate_g_study`: a multivariate G-study over disjoint query classes: within each class the
  usual system / topic / system:topic components; between classes the covariance of the class mean
  scores over systems is attributed to the system effect (classes share systems, not topics).
  The composite (weighted class means) has universe-score variance sum_c sum_c' w_c w_c' S_cc'
  (S_cc = the class's system variance), relative error sum_c w_c^2 var_res_c / n_c and absolute error
  sum_c w_c^2 (var_topic_c + var_res_c) / n_c, which give E rho^2 and Phi for any topics per class.
- `stability_by_share`: E rho^2 and Phi as the share of one class in a fixed-size sample varies
  (thesis Figure 3.13).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .matrix import as_matrix
from .gtheory import GStudy, g_study


def _classes(scores: pd.DataFrame, classes) -> pd.Series:
    if isinstance(classes, dict):
        cl = pd.Series({str(k): v for k, v in classes.items()})
    else:
        cl = pd.Series(list(classes), index=scores.index)
    cl.index = cl.index.astype(str)
    idx = scores.index.astype(str)
    missing = [t for t in idx if t not in cl.index or pd.isna(cl.get(t))]
    if missing:
        raise CranfieldError(f"{len(missing)} topic(s) have no query class (e.g. {missing[0]!r}); "
                             "set topics: categories: in campaign.yaml")
    return cl.reindex(idx).astype(str)


def weighted_mean(scores: pd.DataFrame, classes, weights: dict | None = None) -> pd.Series:
    """Per system: the weighted mean over classes of its mean score in each class (equal weights =
    the Million Query wMAP)."""
    cl = _classes(scores, classes)
    means = scores.groupby(cl.to_numpy()).mean()
    w = pd.Series(1.0, index=means.index) if weights is None else pd.Series(weights, dtype=float).reindex(means.index)
    if w.isna().any():
        raise CranfieldError("a weight is needed for every query class")
    return (means.mul(w / w.sum(), axis=0)).sum(axis=0)


@dataclass
class MultiGStudy:
    """Per-class G-studies plus the between-class system covariance matrix."""

    classes: list[str]
    studies: list[GStudy]
    n_topics: np.ndarray          # topics per class in the data
    sys_cov: np.ndarray           # class x class universe-score (system) covariance

    def coefficients(self, n_topics, weights=None) -> tuple[float, float]:
        """(E rho^2, Phi) of the weighted composite with `n_topics` topics per class
        (weights default to the topic shares)."""
        n = np.asarray(n_topics, float)
        if n.shape != (len(self.classes),):
            raise CranfieldError(f"give one topic count per class ({len(self.classes)})")
        w = n / n.sum() if weights is None else np.asarray(weights, float) / np.sum(weights)
        use = n > 0
        s = float(w[use] @ self.sys_cov[np.ix_(use, use)] @ w[use])
        res = np.array([g.var_residual for g in self.studies])
        top = np.array([g.var_topic for g in self.studies])
        rel = float(np.sum(w[use] ** 2 * res[use] / n[use]))
        ab = float(np.sum(w[use] ** 2 * (res[use] + top[use]) / n[use]))
        if s <= 0:
            return 0.0, 0.0
        return s / (s + rel), s / (s + ab)


def multivariate_g_study(scores: pd.DataFrame, classes) -> MultiGStudy:
    """Multivariate G-study of a topics x systems DataFrame with one class per topic."""
    x, _, _ = as_matrix(scores)
    cl = _classes(scores, classes)
    names = sorted(set(cl.tolist()))
    studies, n, means = [], [], []
    for c in names:
        sub = scores[cl.to_numpy() == c]
        if len(sub) < 2:
            raise CranfieldError(f"query class {c!r} has {len(sub)} topic(s); a G-study needs at least 2")
        studies.append(g_study(sub))
        n.append(len(sub))
        means.append(sub.to_numpy(float).mean(axis=0))
    means = np.asarray(means)
    cov = np.cov(means) if len(names) > 1 else np.zeros((1, 1))
    cov = np.atleast_2d(cov)
    for i, g in enumerate(studies):
        cov[i, i] = g.var_system
    return MultiGStudy(classes=names, studies=studies, n_topics=np.asarray(n), sys_cov=cov)


def stability_by_share(m: MultiGStudy, cls: str, total: int = 64, shares=None, weights=None) -> pd.DataFrame:
    """E rho^2 and Phi of a `total`-topic sample as the share of class `cls` varies (the rest of the
    sample is split over the other classes in proportion to their sizes in the data)."""
    if cls not in m.classes:
        raise CranfieldError(f"unknown query class {cls!r} (have {', '.join(m.classes)})")
    shares = np.linspace(0.05, 0.95, 19) if shares is None else np.asarray(shares, float)
    i = m.classes.index(cls)
    other = np.delete(m.n_topics.astype(float), i)
    rows = []
    for sh in shares:
        n = np.zeros(len(m.classes))
        n[i] = sh * total
        if len(other):
            rest = np.delete(np.arange(len(m.classes)), i)
            n[rest] = (1 - sh) * total * other / other.sum()
        e, p = m.coefficients(n, weights)
        rows.append({"share": float(sh), "erho2": e, "phi": p})
    return pd.DataFrame(rows)


def topics_needed_stratified(m: MultiGStudy, target: float = 0.95, coef: str = "phi",
                             shares=None, max_topics: int = 100000) -> int | None:
    """Smallest total number of topics (split by `shares`, default the data's) reaching `target`."""
    sh = m.n_topics / m.n_topics.sum() if shares is None else np.asarray(shares, float) / np.sum(shares)
    k = 0 if coef == "erho2" else 1

    def ok(n):
        return m.coefficients(sh * n)[k] >= target
    if not ok(max_topics):
        return None
    lo, hi = 1, max_topics
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo
