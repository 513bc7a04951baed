"""Discriminative power (sakai-2007 section 7): Sakai's paired bootstrap test for every system pair,
achieved significance levels (ASL), the share of pairs significant at alpha and the estimated
performance difference required for significance. Vectorized: one matrix of bootstrap topic counts
serves all pairs, so bootstrap statistics are matrix products (no Python loop per sample).

For a pair with per-topic differences z (n topics): t(z) = mean(z) / (sd(z) / sqrt(n)); the null
sample w = z - mean(z) is resampled B times; ASL = #{|t(w*)| >= |t(z)|} / B. The difference required
for a pair is |mean(w*_b)| of the bootstrap sample whose |t(w*_b)| is the (B*alpha)-th largest; the
reported estimate is the largest of these over all pairs (Sakai's conservative choice).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .matrix import Progress, as_matrix, report
from .significance import pair_indices


@dataclass
class Discrimination:
    """Result of `discriminative_power`."""

    pairs: pd.DataFrame          # a, b, diff, t, asl, significant, diff_required
    alpha: float
    n_bootstrap: int
    power: float                 # share of pairs with ASL < alpha
    n_significant: int
    n_pairs: int
    diff_required: float         # max over pairs of the per-pair required difference

    def asl_curve(self) -> np.ndarray:
        """ASLs sorted increasingly (Sakai's ASL curve: x = pair rank, y = ASL)."""
        return np.sort(self.pairs["asl"].to_numpy())

    def summary(self) -> dict:
        return {"n_pairs": self.n_pairs, "n_significant": self.n_significant, "power": self.power,
                "alpha": self.alpha, "n_bootstrap": self.n_bootstrap, "diff_required": self.diff_required}


def bootstrap_counts(n: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """B x n matrix: how often each topic is drawn in each bootstrap sample of size n."""
    idx = rng.integers(0, n, size=(b, n))
    rows = np.repeat(np.arange(b), n)
    c = np.zeros((b, n), np.float64)
    np.add.at(c, (rows, idx.ravel()), 1.0)
    return c


def discriminative_power(scores, *, n_bootstrap: int = 1000, alpha: float = 0.05, seed: int = 0,
                         top: int | None = None, progress: Progress = None) -> Discrimination:
    """Sakai's paired bootstrap test on every pair of systems (optionally only the `top` systems
    by mean score, as Sakai's top-30 runs)."""
    x, _, systems = as_matrix(scores)
    if top is not None and top < x.shape[1]:
        keep = np.sort(np.argsort(-x.mean(axis=0), kind="stable")[:top])
        x = x[:, keep]
        systems = [systems[j] for j in keep]
    n, k = x.shape
    if n < 2 or k < 2:
        raise CranfieldError("discriminative power needs at least 2 topics and 2 systems")
    if not 0 < alpha < 1:
        raise CranfieldError(f"alpha must be in (0, 1), got {alpha}")
    B = int(n_bootstrap)
    if B < 10:
        raise CranfieldError("use at least 10 bootstrap samples")
    rng = np.random.default_rng(seed)
    counts = bootstrap_counts(n, B, rng)
    ia, ib = pair_indices(k)
    m = len(ia)
    asl = np.empty(m)
    tobs = np.empty(m)
    need = np.empty(m)
    kth = max(1, int(round(B * alpha)))
    chunk = max(1, int(1_000_000 // max(B, n)))
    for s in range(0, m, chunk):
        e = min(m, s + chunk)
        z = x[:, ia[s:e]] - x[:, ib[s:e]]
        mz = z.mean(axis=0)
        sd = z.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(sd > 0, mz / (sd / np.sqrt(n)), np.where(mz == 0, 0.0, np.inf))
        w = z - mz
        msq = counts @ w                                      # bootstrap sums, B x pairs
        msq *= 1.0 / n
        msq *= msq                                            # squared bootstrap means
        t2 = counts @ (w * w)                                 # bootstrap sums of squares
        t2 -= n * msq
        t2 *= 1.0 / ((n - 1) * n)                             # variance of the mean
        np.divide(msq, t2, out=t2, where=t2 > 1e-300)         # squared bootstrap t statistics
        t2[~(t2 > 0)] = 0.0
        asl[s:e] = (t2 >= (t * t)[None, :] * (1 - 1e-12)).sum(axis=0) / B
        tobs[s:e] = t
        pos = np.argpartition(t2, B - kth, axis=0)[B - kth]   # the (B*alpha)-th largest |t*|
        need[s:e] = np.sqrt(msq[pos, np.arange(e - s)])
        report(progress, e / m, f"bootstrap: {e}/{m} pairs")
    diff = x.mean(axis=0)[ia] - x.mean(axis=0)[ib]
    sig = asl < alpha
    pairs = pd.DataFrame({"a": np.asarray(systems, object)[ia], "b": np.asarray(systems, object)[ib],
                          "diff": diff, "t": tobs, "asl": asl, "significant": sig, "diff_required": need})
    return Discrimination(pairs=pairs, alpha=alpha, n_bootstrap=B, power=float(sig.mean()),
                          n_significant=int(sig.sum()), n_pairs=m,
                          diff_required=float(need[sig].max()) if sig.any() else float(need.max()))


def power_table(matrices: dict[str, pd.DataFrame], **kw) -> pd.DataFrame:
    """Sakai's Table 3 layout: one row per measure (disc. power, significant pairs, diff. required),
    sorted by decreasing power."""
    rows = []
    for name, mat in matrices.items():
        d = discriminative_power(mat, **kw)
        rows.append({"measure": name, "significant": d.n_significant, "pairs": d.n_pairs,
                     "power": d.power, "diff_required": d.diff_required})
    return pd.DataFrame(rows).sort_values("power", ascending=False, kind="stable").reset_index(drop=True)
