"""Pairwise significance tests for a leaderboard: paired t-test, Wilcoxon signed-rank and a paired
randomization (sign-flip) test over every pair of systems, Holm and Tukey HSD corrections for
multiple comparisons, and effect sizes. Vectorized over pairs (and permutations)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .matrix import Progress, as_matrix, report
from .gtheory import anova

TESTS = ("t", "wilcoxon", "randomization")


def pair_indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (i < j) of n systems."""
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family = all values given)."""
    p = np.asarray(p, float)
    nan = np.isnan(p)
    if nan.any():                           # no test (identical systems): NaN, outside the family
        out = np.full(len(p), np.nan)
        out[~nan] = holm(p[~nan])
        return out
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def paired_t(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(t, two-sided p) of paired differences d (topics x pairs)."""
    n = d.shape[0]
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
        # no variance: +-inf for a constant non-zero difference, NaN for identical values (as scipy's
        # ttest_rel and so pt.Experiment report them)
        t = np.where(sd > 0, t, np.where(mean == 0, np.nan, np.copysign(np.inf, mean)))
    from scipy import special          # scipy.stats's t.sf is special.stdtr(df, -t); stats costs a second to import
    p = 2 * special.stdtr(n - 1, -np.abs(t))
    return t, p


def _present_mean_sd(x: np.ndarray, ok: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of x: mean and sample standard deviation (ddof 1) over the rows where `ok` (n of them)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(ok, x, 0.0).sum(axis=0) / np.maximum(n, 1)
        dev = np.where(ok, x - mean, 0.0)
        return mean, np.sqrt((dev * dev).sum(axis=0) / np.maximum(n - 1, 1))


def paired_p(d: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p-value per column of d (topics x pairs of differences), over the topics
    present in that column (NaN rows left out). The one rule of every face: identical runs (all
    differences zero) give NaN, as scipy's ttest_rel and pt.Experiment; a constant non-zero difference
    gives 0; fewer than two topics give NaN."""
    d = np.asarray(d, float)
    if d.ndim == 1:
        d = d[:, None]
    ok = ~np.isnan(d)
    n = ok.sum(axis=0)
    if ok.all():
        _, p = paired_t(d) if d.shape[0] > 1 else (None, np.full(d.shape[1], np.nan))
        return np.where(n > 1, p, np.nan)
    mean, sd = _present_mean_sd(d, ok, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / (sd / np.sqrt(np.maximum(n, 1))),
                     np.where(mean == 0, np.nan, np.copysign(np.inf, mean)))
    from scipy import special
    p = 2 * special.stdtr(np.maximum(n - 1, 1), -np.abs(t))
    return np.where(n > 1, p, np.nan)


def adjacent_paired_p(m: np.ndarray) -> np.ndarray:
    """Paired t-test p-value of each row (run) of a runs x topics matrix against the row before it
    (len(m) - 1 values; `paired_p`'s rule for identical runs)."""
    m = np.asarray(m, float)
    if len(m) < 2:
        return np.empty(0)
    return paired_p((m[1:] - m[:-1]).T)


def t_interval(m: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a runs x topics matrix: the mean over the topics present and the half-width of its
    Student-t interval at `level` (NaN with fewer than two topics)."""
    m = np.atleast_2d(np.asarray(m, float)).T            # topics x runs, as _present_mean_sd takes it
    ok = ~np.isnan(m)
    n = ok.sum(axis=0)
    mean, sd = _present_mean_sd(m, ok, n)
    from scipy import special
    tq = special.stdtrit(np.maximum(n - 1, 1), 0.5 + level / 2)
    half = np.where(n > 1, tq * sd / np.sqrt(np.maximum(n, 1)), np.nan)
    return np.where(n > 0, mean, np.nan), half


def wilcoxon_p(d: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-values (normal approximation with tie correction, zero
    differences dropped as Wilcoxon's method) per column of d; one sort per column."""
    d = np.ascontiguousarray(np.asarray(d, float).T)      # pairs x topics: sort along contiguous rows
    n_all = d.shape[1]
    big = np.where(d != 0, np.abs(d), np.inf)
    order = np.argsort(big, axis=1)
    srt = np.take_along_axis(big, order, axis=1)
    pos = np.take_along_axis(d > 0, order, axis=1)
    start = np.ones(srt.shape, bool)
    start[:, 1:] = srt[:, 1:] != srt[:, :-1]
    end = np.ones(srt.shape, bool)
    end[:, :-1] = start[:, 1:]
    idx = np.arange(n_all, dtype=np.int32)[None, :]
    first = np.maximum.accumulate(np.where(start, idx, 0), axis=1)
    last = np.minimum.accumulate(np.where(end, idx, n_all)[:, ::-1], axis=1)[:, ::-1]
    fin = np.isfinite(srt)
    avg_rank = (first + last) / 2.0 + 1.0                 # average rank of each tie group
    w_plus = (avg_rank * pos).sum(axis=1)
    size = (last - first + 1).astype(float)
    tie_term = (np.where(fin, size * size - 1.0, 0.0)).sum(axis=1) / 48.0   # sum_groups (t^3 - t) / 48
    n = fin.sum(axis=1).astype(float)
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - tie_term
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (w_plus - mean) / np.sqrt(var)
    from scipy import stats
    p = 2 * stats.norm.sf(np.abs(z))
    return np.where((n > 0) & (var > 0), np.minimum(p, 1.0), 1.0)


def randomization_p(d: np.ndarray, n_perm: int = 10000, seed: int = 0, chunk: int = 2000) -> np.ndarray:
    """Two-sided paired randomization test: random sign flips of the per-topic differences,
    p = (1 + #|perm mean| >= |observed mean|) / (1 + n_perm). One sign matrix serves every pair."""
    rng = np.random.default_rng(seed)
    n, m = d.shape
    obs = np.abs(d.mean(axis=0)) - 1e-12
    count = np.zeros(m)
    done = 0
    while done < n_perm:
        b = min(chunk, n_perm - done)
        signs = rng.integers(0, 2, size=(b, n), dtype=np.int8).astype(np.float64) * 2 - 1
        perm = np.abs(signs @ d) / n
        count += (perm >= obs).sum(axis=0)
        done += b
    return (count + 1) / (n_perm + 1)


def _tukey_p(q: np.ndarray, k: int, df: int) -> np.ndarray:
    """Studentized-range tail probabilities, interpolated on a grid (the exact integral is slow)."""
    df = min(df, 100000)
    from scipy import stats
    if len(q) <= 40:
        return np.asarray(stats.studentized_range.sf(q, k, df), float)
    qmax = float(np.max(q)) if len(q) else 0.0
    grid = np.unique(np.concatenate((np.linspace(0, max(qmax, 1e-9), 48),
                                     np.linspace(0, min(max(qmax, 1e-9), 8.0), 32))))
    vals = np.clip(stats.studentized_range.sf(grid, k, df), 1e-300, 1.0)
    return np.exp(np.interp(q, grid, np.log(vals)))


def pairwise(scores, tests=TESTS, *, n_perm: int = 10000, alpha: float = 0.05, seed: int = 0,
             progress: Progress = None) -> pd.DataFrame:
    """Every pair of systems: means, difference, effect sizes and p-values of the requested tests,
    Holm-adjusted within each test, plus Tukey HSD (two-way ANOVA residual) p-values.

    Columns: a, b, mean_a, mean_b, diff, effect_dz (mean diff / sd of diffs), effect_e (mean diff /
    sqrt(residual MS)), p_t, p_t_holm, p_wilcoxon, p_wilcoxon_holm, p_randomization,
    p_randomization_holm, p_tukey, and sig_* flags at alpha.
    """
    x, _, systems = as_matrix(scores)
    n, k = x.shape
    if n < 2 or k < 2:
        raise CranfieldError("significance tests need at least 2 topics and 2 systems")
    unknown = set(tests) - set(TESTS)
    if unknown:
        raise CranfieldError(f"unknown test(s) {sorted(unknown)}; choose from {', '.join(TESTS)}")
    ia, ib = pair_indices(k)
    m = len(ia)
    out = {"a": np.asarray(systems, object)[ia], "b": np.asarray(systems, object)[ib]}
    means = x.mean(axis=0)
    out["mean_a"], out["mean_b"] = means[ia], means[ib]
    out["diff"] = means[ia] - means[ib]
    _, _, ms_e, _ = anova(x)
    cols: dict[str, list] = {c: [] for c in ("t", "p_t", "sd", "p_wilcoxon", "p_randomization")}
    chunk = max(1, int(4_000_000 // max(n, 1)))
    for s in range(0, m, chunk):
        e = min(m, s + chunk)
        d = x[:, ia[s:e]] - x[:, ib[s:e]]
        t, p = paired_t(d)
        cols["t"].append(t)
        cols["p_t"].append(p)
        cols["sd"].append(d.std(axis=0, ddof=1))
        if "wilcoxon" in tests:
            cols["p_wilcoxon"].append(wilcoxon_p(d))
        if "randomization" in tests:
            cols["p_randomization"].append(randomization_p(d, n_perm, seed + s))
        report(progress, e / m, f"tested {e}/{m} pairs")
    sd = np.concatenate(cols["sd"])
    with np.errstate(divide="ignore", invalid="ignore"):
        out["effect_dz"] = np.where(sd > 0, out["diff"] / sd, 0.0)
        out["effect_e"] = out["diff"] / np.sqrt(ms_e) if ms_e > 0 else np.zeros(m)
    for test in TESTS:
        if test not in tests:
            continue
        key = "p_t" if test == "t" else f"p_{test}"
        p = np.concatenate(cols[key])
        if test == "t":
            out["t"] = np.concatenate(cols["t"])
        out[key] = p
        out[f"{key}_holm"] = holm(p)
        out[f"sig_{test}"] = out[f"{key}_holm"] < alpha
    # Tukey HSD on the two-way ANOVA (systems x topics) residual mean square
    df_e = (k - 1) * (n - 1)
    q = np.abs(out["diff"]) / np.sqrt(ms_e / n) if ms_e > 0 else np.full(m, np.inf)
    out["p_tukey"] = _tukey_p(q, k, df_e) if ms_e > 0 else np.zeros(m)
    out["sig_tukey"] = out["p_tukey"] < alpha
    return pd.DataFrame(out)


def tukey_hsd_threshold(scores, alpha: float = 0.05) -> float:
    """The smallest mean difference Tukey HSD calls significant at alpha."""
    x, _, _ = as_matrix(scores)
    n, k = x.shape
    _, _, ms_e, _ = anova(x)
    from scipy import stats
    qcrit = float(stats.studentized_range.ppf(1 - alpha, k, min((k - 1) * (n - 1), 100000)))
    return qcrit * float(np.sqrt(ms_e / n))


def interval_p(estimate, se, df=None) -> np.ndarray:
    """Two-sided p-value of `estimate` = 0 from the estimate and its standard error: Student's t with `df`
    degrees of freedom (None: the normal). It is the p of the interval estimate -+ q_{1-alpha/2} se, which
    excludes 0 exactly when p < alpha. se 0: NaN for a zero estimate (no test), else 0."""
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, est / se, np.where(est == 0, np.nan, np.copysign(np.inf, est)))
    from scipy import special
    if df is None:
        return 2 * special.ndtr(-np.abs(t))
    return 2 * special.stdtr(np.maximum(np.asarray(df, dtype=np.float64), 1.0), -np.abs(t))
