"""Prediction-powered inference (PPI) for means over topics: a few topics judged by people, every topic
judged by a model.

For one column (a run's per-topic measure, or the per-topic difference of two runs): `y` the human-judged
values on the n labelled topics, `f_lab` the model-judged values on the same topics, `f_unl` the
model-judged values on the N other topics. With a weight lambda,

    estimate = mean(lambda * f_unl) + mean(y - lambda * f_lab)
    se^2     = var(lambda * f_unl) / N + var(y - lambda * f_lab) / n        (variances with ddof 0)

and the interval is estimate -+ z_{1-alpha/2} se (Angelopoulos et al., Science 2023, lambda = 1; PPI++,
Angelopoulos, Duchi & Zrnic 2023, lambda tuned). That is ppi-python's form (`small_n=False`); the default
small-sample form uses ddof 1 variances, Student's t quantile and, for PPI++, a cross-fitted lambda,
which keeps 95% intervals at 95% with 40 human-judged topics (benchmarks/ppi.py). Power tuning picks

    lambda = cov(y, f_lab) / ((1 + n / N) var(f_lab ++ f_unl))             clipped to [0, 1]

(covariance ddof 0 over the labelled topics, variance ddof 1 over all topics), which minimizes se for
large samples; lambda = 0 is the human-only interval. Stratified PPI (Fisch et al. 2024) runs this in
each stratum with its own lambda and weights the strata by their shares of the topics. Every function is
vectorized over columns: arrays are topics x columns (more trailing axes, e.g. campaigns x columns,
work alike). Formulas as ppi-python's `ppi_mean_ci` (tested
against it); see docs/llm-judges.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CranfieldError

METHODS = ("ppi++", "ppi", "human")
FOLDS = 5
"""Folds of the cross-fitted lambda (PPI++ in the small-sample form, from 2 * FOLDS human-judged topics)."""
MIN_TOPICS = 30
"""Fewer human-judged topics than this and an interval is flagged (see `small_sample`)."""


@dataclass
class Interval:
    """Intervals for several columns: estimate, bounds, standard error, lambda, sample sizes, flags."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    se: np.ndarray
    lam: np.ndarray
    n: int
    N: int
    small: np.ndarray            # True: too few human-judged topics for the normal approximation
    df: float | None = None      # Student's t degrees of freedom (None: normal quantile)

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower


def z_value(alpha: float) -> float:
    """The two-sided normal quantile z_{1 - alpha/2}."""
    if not 0 < alpha < 1:
        raise CranfieldError(f"alpha {alpha}: must be in (0, 1), e.g. 0.05 for 95% intervals")
    from scipy import special
    return float(special.ndtri(1 - alpha / 2))


def quantile(alpha: float, df=None) -> np.ndarray | float:
    """z_{1-alpha/2}, or Student's t_{1-alpha/2} with `df` degrees of freedom."""
    z = z_value(alpha)                   # checks alpha
    if df is None:
        return z
    from scipy import special
    return special.stdtrit(np.maximum(np.asarray(df, dtype=np.float64), 1.0), 1 - alpha / 2)


def _cols(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return a[:, None] if a.ndim == 1 else a


def tuned_lambda(y, f_lab, f_unl) -> np.ndarray:
    """PPI++'s power-tuning lambda per column, clipped to [0, 1] (0 where the model's values do not vary)."""
    y, f_lab, f_unl = _cols(y), _cols(f_lab), _cols(f_unl)
    n, N = len(y), len(f_unl)
    cov = ((y - y.mean(0)) * (f_lab - f_lab.mean(0))).mean(0)
    var = np.var(np.concatenate([f_lab, f_unl]), axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 0, cov / ((1 + n / N) * var), 0.0)
    return np.clip(lam, 0.0, 1.0)


def skewness(x) -> np.ndarray:
    """Sample skewness g1 per column (0 where a column is constant)."""
    x = _cols(x)
    d = x - x.mean(0)
    m2, m3 = (d ** 2).mean(0), (d ** 3).mean(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(m2 > 0, m3 / m2 ** 1.5, 0.0)


def small_sample(rectifier) -> np.ndarray:
    """The rule that flags an interval as not to be trusted, per column of the rectifier y - lambda f on the
    labelled topics: n < MIN_TOPICS, or n <= 25 g1^2 (Cochran's rule for the normal approximation of a
    mean from a skewed population, g1 = skewness)."""
    r = _cols(rectifier)
    n = len(r)
    g1 = skewness(r) if n > 2 else np.zeros(r.shape[1:])
    return (n < MIN_TOPICS) | (n <= 25 * g1 ** 2)


def ppi_mean(y, f_lab, f_unl, alpha: float = 0.05, lam=None, small_n: bool = True) -> Interval:
    """PPI interval of the mean per column; `lam` None: power-tuned (PPI++); 1: classical PPI; 0: human only.
    `y`, `f_lab`: n x k (labelled topics), `f_unl`: N x k (the other topics). `small_n` (default): the
    small-sample form -- variances with ddof 1, Student's t quantile with n - 1 degrees of freedom, and a
    tuned lambda cross-fitted (`_cross_fitted`; with fewer than 2 * FOLDS topics tuned on all of them, the
    rectifier's variance then with ddof 2); False: ppi-python's `ppi_mean_ci` exactly (ddof 0, normal
    quantile, lambda tuned on the same topics)."""
    y, f_lab, f_unl = _cols(y), _cols(f_lab), _cols(f_unl)
    n, N = len(y), len(f_unl)
    if y.shape != f_lab.shape or f_unl.shape[1:] != y.shape[1:]:
        raise CranfieldError(f"PPI: labelled values {y.shape}, their model values {f_lab.shape} and the other "
                             f"topics' model values {f_unl.shape} do not line up")
    if n < 2:
        raise CranfieldError(f"PPI needs at least 2 human-judged topics (has {n})")
    if N < 1 and (lam is None or np.any(np.asarray(lam) != 0)):
        raise CranfieldError("PPI needs at least one topic judged by the model only (every topic is human-judged: "
                             "the human-only interval is the one to use)")
    tuned = lam is None
    if tuned and small_n and n >= FOLDS * 2 and N:
        return _cross_fitted(y, f_lab, f_unl, alpha)
    if tuned:
        lam = tuned_lambda(y, f_lab, f_unl)
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), y.shape[1:]).copy()
    rect = y - lam * f_lab
    dr = (2 if tuned and n > 3 else 1) if small_n else 0
    du = 1 if small_n and N > 1 else 0
    var = np.var(rect, axis=0, ddof=dr) / n
    est = rect.mean(0)
    if N:
        est = est + (lam * f_unl).mean(0)
        var = var + np.var(lam * f_unl, axis=0, ddof=du) / N
    se = np.sqrt(var)
    df = n - dr if small_n else None
    q = quantile(alpha, df)
    return Interval(est, est - q * se, est + q * se, se, lam, n, N, small_sample(rect), df)


def _cross_fitted(y, f_lab, f_unl, alpha: float) -> Interval:
    """PPI++ with a cross-fitted lambda: the labelled topics fall into FOLDS folds (topic i into fold
    i mod FOLDS); each fold's rectifier y - lambda_k f uses the lambda tuned on the other folds, so no
    topic's own values choose its weight (a lambda tuned on the same topics biases the estimate by O(1/n)
    and makes the interval too short: 93.6% for 95% at 40 topics in benchmarks/ppi.py).

        z_i      = y_i - lambda_k (f_i - mean(f_unl))        for topic i of fold k
        estimate = mean(z) = sum_k (n_k / n) lambda_k mean(f_unl) + mean(y - lambda_k f)
        se^2     = var(z, ddof 1) / n + var(lambda_bar f_unl, ddof 1) / N,  Student t, n - 1 df"""
    n, N = len(y), len(f_unl)
    fold = np.arange(n) % FOLDS
    rect = np.empty_like(y)
    lam_bar = np.zeros(y.shape[1:])
    fu_mean = f_unl.mean(0)
    fu_dev2 = ((f_unl - fu_mean) ** 2).sum(0)
    for k in range(FOLDS):
        out, inn = fold != k, fold == k
        yo, fo = y[out], f_lab[out]
        m = len(yo)
        cov = ((yo - yo.mean(0)) * (fo - fo.mean(0))).mean(0)
        fo_mean = fo.mean(0)
        # var(fo ++ f_unl, ddof 1) from the two parts (as tuned_lambda, without concatenating f_unl again)
        grand = (m * fo_mean + N * fu_mean) / (m + N)
        ss = ((fo - fo_mean) ** 2).sum(0) + fu_dev2 + m * (fo_mean - grand) ** 2 + N * (fu_mean - grand) ** 2
        var = ss / (m + N - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.clip(np.where(var > 0, cov / ((1 + m / N) * var), 0.0), 0.0, 1.0)
        rect[inn] = y[inn] - lam * (f_lab[inn] - fu_mean)   # centred: folds' lambdas shift no mean
        lam_bar = lam_bar + lam / FOLDS
    est = rect.mean(0)
    se = np.sqrt(np.var(rect, axis=0, ddof=1) / n + np.var(lam_bar * f_unl, axis=0, ddof=1 if N > 1 else 0) / N)
    q = quantile(alpha, n - 1)
    return Interval(est, est - q * se, est + q * se, se, lam_bar, n, N, small_sample(rect), n - 1)


def stratified_ppi_mean(y, f_lab, f_unl, strata_lab, strata_unl, alpha: float = 0.05, lam=None,
                        small_n: bool = True) -> Interval:
    """Stratified PPI: PPI in every stratum (its own tuned lambda unless `lam` is given), strata weighted by
    their shares of all topics. `strata_lab` / `strata_unl`: the stratum of each labelled / other topic.
    `lam` in the result is the share-weighted mean of the strata's lambdas (for display)."""
    y, f_lab, f_unl = _cols(y), _cols(f_lab), _cols(f_unl)
    sl, su = np.asarray(strata_lab, dtype=object), np.asarray(strata_unl, dtype=object)
    total = len(sl) + len(su)
    est = np.zeros(y.shape[1])
    var = np.zeros(y.shape[1])
    lam_mean = np.zeros(y.shape[1])
    small = np.zeros(y.shape[1], dtype=bool)
    df = 0.0
    for h in sorted(set(sl.tolist()) | set(su.tolist()), key=str):
        a, b = sl == h, su == h
        if a.sum() < 2:
            raise CranfieldError(f"stratum {h!r}: {int(a.sum())} human-judged topic(s); stratified PPI needs "
                                 f"at least 2 in every stratum (judge more there, or drop --strata)")
        w = (a.sum() + b.sum()) / total
        iv = ppi_mean(y[a], f_lab[a], f_unl[b], alpha, lam if b.any() else 0.0, small_n)
        df += iv.df or 0.0
        est += w * iv.estimate
        var += w ** 2 * iv.se ** 2
        lam_mean += w * iv.lam
        g1 = skewness(y[a] - iv.lam * f_lab[a]) if a.sum() > 2 else np.zeros(y.shape[1:])
        small |= a.sum() <= 25 * g1 ** 2          # Cochran's rule in the stratum; n < 30 overall below
    se = np.sqrt(var)
    q = quantile(alpha, df if small_n else None)
    small |= len(sl) < MIN_TOPICS
    return Interval(est, est - q * se, est + q * se, se, lam_mean, len(sl), len(su), small, df if small_n else None)


def pair_columns(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, m[:, i] - m[:, j]) for every pair i < j of the columns of a topics x runs matrix."""
    from .significance import pair_indices
    i, j = pair_indices(m.shape[1])
    return i, j, m[:, i] - m[:, j]


# ---------------------------------------------------------------------------- planning

@dataclass
class Pilot:
    """What a pilot says about each column: variances of the human and the model values, their covariance,
    and the number of topics the model judges (all of them)."""

    var_y: np.ndarray            # human values, labelled topics
    var_f: np.ndarray            # model values, all topics
    cov: np.ndarray              # human x model, labelled topics
    topics: int                  # topics the model judges (labelled or not)
    var_f_lab: np.ndarray | None = None   # model values, labelled topics (with var_y, cov: a PSD matrix)

    @property
    def corr(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((self.var_y > 0) & (self.var_f > 0), self.cov / np.sqrt(self.var_y * self.var_f), 0.0)


def pilot_stats(y, f_lab, f_unl) -> Pilot:
    """Pilot variances (ddof 1) from the labelled topics (human and model) and all topics (model)."""
    y, f_lab, f_unl = _cols(y), _cols(f_lab), _cols(f_unl)
    f_all = np.concatenate([f_lab, f_unl])
    cov = ((y - y.mean(0)) * (f_lab - f_lab.mean(0))).sum(0) / max(len(y) - 1, 1)
    return Pilot(np.var(y, axis=0, ddof=1), np.var(f_all, axis=0, ddof=1), cov, len(f_all),
                 np.var(f_lab, axis=0, ddof=1))


def predicted_se(p: Pilot, n, tuned: bool = True, expected: bool = False, small_n: bool = True) -> np.ndarray:
    """The standard error PPI (tuned lambda, or lambda 1) would have with n human-judged topics of the
    pilot's `topics`: (var_y - 2 lambda cov + lambda^2 var_f) / n + lambda^2 var_f / (topics - n) (the
    rectifier's part with the labelled topics' model variance, so it is never negative). `expected`: the
    standard error an interval will report on average (each part scaled by E[sd]/sd of its sample with the
    ddof `ppi_mean` uses, `_shrink`; with a cross-fitted lambda, the rectifier's variance grows by
    var(lambda_k) var(f), `lambda_variance`, for a lambda tuned on m = 4n/5 topics). Shape: len(n) x columns."""
    n = np.asarray(n, dtype=np.float64)[:, None]
    N = np.maximum(p.topics - n, 1e-12)
    if tuned:
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(p.var_f > 0, p.cov / ((1 + n / N) * p.var_f), 0.0)
        lam = np.clip(lam, 0.0, 1.0)
    else:
        lam = np.ones_like(n) * np.ones_like(p.var_f)
    fl = p.var_f if p.var_f_lab is None else p.var_f_lab
    rect = np.maximum(p.var_y - 2 * lam * p.cov + lam ** 2 * fl, 0.0)
    if expected and tuned and small_n:
        rect = rect + np.where(n >= 2 * FOLDS, lambda_variance(p, n, N) * fl, 0.0)
    if expected:
        dr = 1 if small_n else 0
        var = _shrink(n, dr) ** 2 * rect / n + _shrink(N, 1 if small_n else 0) ** 2 * lam ** 2 * p.var_f / N
    else:
        var = rect / n + lam ** 2 * p.var_f / N
    return np.sqrt(np.maximum(var, 0.0))


def lambda_variance(p: Pilot, n, N) -> np.ndarray:
    """Var(lambda_k) of a fold's tuned lambda = cov_m / ((1 + n/N) var_{m+N}): covariance from m = (FOLDS-1)/FOLDS
    n labelled topics, variance from those and the N others. Delta method for the ratio with normal-theory
    moments, the denominator's noise and its covariance with the numerator included (they share m topics):

        Var(cov_m) = (var_y var_f + cov^2) / m,  Cov(cov_m, var_{m+N}) = 2 cov var_f / (m + N),
        Var(var_{m+N}) = 2 var_f^2 / (m + N)
        Var(lambda_k) = [(var_y var_f + cov^2) / m - 2 cov^2 / (m + N)] / ((1 + n/N)^2 var_f^2)

    (a pilot's fourth moments would replace the normal ones, but from 30 topics they are too noisy to plan on)."""
    m = n * (FOLDS - 1) / FOLDS
    vy, vf, c = p.var_y, p.var_f, p.cov
    with np.errstate(divide="ignore", invalid="ignore"):
        num = (vy * vf + c ** 2) / m - 2 * c ** 2 / (m + N)
        out = np.where(vf > 0, num / ((1 + n / N) ** 2 * vf ** 2), 0.0)
    return np.maximum(out, 0.0)


def _shrink(k, ddof: int = 0) -> np.ndarray:
    """E[sd] / sd for the sd (with `ddof`) of k normal values: c4(k) sqrt((k - 1) / (k - ddof))."""
    from scipy import special
    k = np.asarray(k, dtype=np.float64)
    kk = np.maximum(k, ddof + 2.0)
    c4 = np.sqrt(2.0 / (kk - 1)) * np.exp(special.gammaln(kk / 2) - special.gammaln((kk - 1) / 2))
    return np.where(k >= ddof + 2, c4 * np.sqrt((kk - 1) / (kk - ddof)), 1.0)


def expected_width(p: Pilot, n, alpha: float = 0.05, tuned: bool = True, small_n: bool = True) -> np.ndarray:
    """The mean width of the interval `ppi_mean` reports with n human-judged topics (len(n) x columns)."""
    n_ = np.asarray(n, dtype=np.float64)
    q = quantile(alpha, n_ - 1) if small_n else quantile(alpha)
    return 2 * np.asarray(q, dtype=np.float64).reshape(-1, 1) * predicted_se(p, n_, tuned, True, small_n)


def topics_for_width(p: Pilot, width, alpha: float = 0.05, tuned: bool = True, small_n: bool = True) -> np.ndarray:
    """Per column: the fewest human-judged topics (4 .. topics - 1) whose PPI interval is expected to be at
    most `width` wide (one width, or one per column); NaN when even topics - 1 are not enough."""
    width = np.asarray(width, dtype=np.float64)
    if np.any(width <= 0):
        raise CranfieldError(f"interval width {width.min()}: must be > 0")
    grid = np.arange(4, max(p.topics, 5))
    ok = expected_width(p, grid, alpha, tuned, small_n) <= width     # a width per column, or one for all
    first = np.argmax(ok, axis=0)
    return np.where(ok.any(axis=0), grid[first].astype(float), np.nan)


def human_topics_for_width(p: Pilot, width, alpha: float = 0.05, small_n: bool = True) -> np.ndarray:
    """Per column: the fewest human-judged topics whose human-only interval is expected to be at most
    `width` wide (no cap: people could judge more topics than the pilot has)."""
    width = np.asarray(width, dtype=np.float64)
    sd = np.sqrt(p.var_y)
    z = quantile(alpha)
    guess = int(np.nanmax(np.ceil((2 * z * sd / np.min(width)) ** 2))) if np.all(np.isfinite(sd)) else 4
    grid = np.arange(3, max(guess * 2 + 20, 10)).astype(np.float64)
    q = quantile(alpha, grid - 1) if small_n else np.full(len(grid), z)
    shrink = _shrink(grid, 1 if small_n else 0)
    w = 2 * (q * shrink / np.sqrt(grid))[:, None] * sd
    ok = w <= width
    return np.where(ok.any(axis=0), grid[np.argmax(ok, axis=0)], np.nan)
