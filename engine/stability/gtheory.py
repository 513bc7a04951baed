"""Generalizability theory for a crossed systems x topics design (kanoulas thesis Appendix B).

G-study: two-way ANOVA without replication gives the variance components of system, topic and
system:topic (the residual). D-study: the generalizability coefficient E rho^2 (stability of the
ranking) and the dependability coefficient Phi (stability of the scores) for any number of topics,
with Feldt's F-based interval for E rho^2 and the Arteaga-Jeyaratnam-Graybill interval for Phi,
and the number of topics needed for a target coefficient.

`alpha` is the two-sided error level: the interval covers 1 - alpha (alpha/2 in each tail).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings
from .matrix import as_matrix


@dataclass
class GStudy:
    """Variance components and mean squares of a topics x systems score matrix."""

    n_systems: int
    n_topics: int
    var_system: float
    var_topic: float
    var_residual: float
    ms_system: float
    ms_topic: float
    ms_residual: float
    grand_mean: float
    systems: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    system_means: np.ndarray = field(default=None, repr=False)
    raw_var_system: float = 0.0      # before negative estimates were set to 0
    raw_var_topic: float = 0.0
    dropped: list[str] = field(default_factory=list)   # systems removed by drop_lowest
    warnings: Warnings = field(default_factory=Warnings, repr=False)

    @property
    def df_system(self) -> int:
        return self.n_systems - 1

    @property
    def df_topic(self) -> int:
        return self.n_topics - 1

    @property
    def df_residual(self) -> int:
        return (self.n_systems - 1) * (self.n_topics - 1)


@dataclass
class DStudy:
    """Stability coefficients for `n_topics` topics with their 1 - alpha intervals."""

    n_topics: float | np.ndarray
    alpha: float
    erho2: float | np.ndarray
    erho2_lower: float | np.ndarray
    erho2_upper: float | np.ndarray
    phi: float | np.ndarray
    phi_lower: float | np.ndarray
    phi_upper: float | np.ndarray


def anova(x: np.ndarray) -> tuple[float, float, float, float]:
    """(MS system, MS topic, MS residual, grand mean) of a topics x systems matrix."""
    nt, ns = x.shape
    g = x.mean()
    ms_ = x.mean(axis=0)
    mt_ = x.mean(axis=1)
    ms_s = nt * ((ms_ - g) ** 2).sum() / (ns - 1)
    ms_t = ns * ((mt_ - g) ** 2).sum() / (nt - 1)
    res = x - mt_[:, None] - ms_[None, :] + g
    ms_e = (res ** 2).sum() / ((ns - 1) * (nt - 1))
    return float(ms_s), float(ms_t), float(ms_e), float(g)


def g_study(scores, *, drop_lowest: float = 0.0) -> GStudy:
    """Variance components of `scores` (topics x systems ndarray or DataFrame).

    `drop_lowest` removes that fraction of the systems with the lowest mean score first.
    Negative component estimates are set to 0 and reported in `.warnings`.
    """
    x, topics, systems = as_matrix(scores)
    if not 0.0 <= drop_lowest < 1.0:
        raise CranfieldError(f"--drop-lowest must be in [0, 1), got {drop_lowest}")
    dropped: list[str] = []
    if drop_lowest > 0:
        k = int(math.floor(drop_lowest * x.shape[1]))
        if k:
            order = np.argsort(x.mean(axis=0), kind="stable")
            drop = np.sort(order[:k])
            dropped = [systems[j] for j in drop]
            keep = np.setdiff1d(np.arange(x.shape[1]), drop)
            x = x[:, keep]
            systems = [systems[j] for j in keep]
    nt, ns = x.shape
    if nt < 2 or ns < 2:
        raise CranfieldError(f"a G-study needs at least 2 topics and 2 systems (got {nt} topics, {ns} systems)")
    ms_s, ms_t, ms_e, g = anova(x)
    vs = (ms_s - ms_e) / nt
    vt = (ms_t - ms_e) / ns
    w = Warnings()
    if vs < 0:
        w.add("g-study", None, f"negative system variance estimate {vs:.6g} set to 0 "
                               "(systems are indistinguishable on these topics)")
    if vt < 0:
        w.add("g-study", None, f"negative topic variance estimate {vt:.6g} set to 0")
    return GStudy(n_systems=ns, n_topics=nt, var_system=max(vs, 0.0), var_topic=max(vt, 0.0),
                  var_residual=ms_e, ms_system=ms_s, ms_topic=ms_t, ms_residual=ms_e, grand_mean=g,
                  systems=systems, topics=topics, system_means=x.mean(axis=0), raw_var_system=vs,
                  raw_var_topic=vt, dropped=dropped, warnings=w)


def _ratio(num: float, den: float) -> float:
    if den <= 0:
        return math.inf if num > 0 else 0.0
    return num / den


def _fq(q: float, d1: float, d2: float) -> float:
    """F quantile, with d2 = inf meaning chi2(d1)/d1: the kernels scipy.stats's f.ppf and chi2.ppf call
    (same values), without importing scipy.stats (about a second of a G-study's whole process)."""
    from scipy import special
    if math.isinf(d2):
        return float(2.0 * special.gammaincinv(d1 / 2.0, q) / d1)
    return float(special.fdtri(d1, d2, q))


def _erho_ratio(g: GStudy, q: float) -> float:
    """Feldt bound on var_system / var_residual at F quantile q (lower bound for q = 1 - alpha/2)."""
    if g.ms_residual <= 0:
        return math.inf
    f_obs = g.ms_system / g.ms_residual
    return max((f_obs / _fq(q, g.df_system, g.df_residual) - 1.0) / g.n_topics, 0.0)


def _phi1(g: GStudy, q: float) -> float:
    """Arteaga-Jeyaratnam-Graybill bound on Phi for a single topic at quantile level q."""
    s, e, t = g.ms_system, g.ms_residual, g.ms_topic
    f1 = _fq(q, g.df_system, math.inf)
    f2 = _fq(q, g.df_system, g.df_residual)
    f3 = _fq(q, g.df_system, g.df_topic)
    num = s * s - f1 * s * e + (f1 - f2) * f2 * e * e
    den = (g.n_systems - 1) * f1 * s * e + f3 * s * t
    if den <= 0:
        return 1.0 if num > 0 else 0.0
    r = num / den
    if r <= 0:
        return 0.0
    return g.n_systems * r / (g.n_systems * r + g.n_topics)


def _spearman_brown(p1, n):
    """Coefficient for n topics from the single-topic coefficient p1."""
    p1 = np.asarray(p1, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(p1 >= 1.0, 1.0, n * p1 / (1.0 + (n - 1.0) * p1))
    return out


def _from_ratio(r: float, n):
    """var_s/(var_s + var_err/n) from the ratio r = var_s/var_err."""
    n = np.asarray(n, float)
    if math.isinf(r):
        return np.ones_like(n)
    return n * r / (1.0 + n * r)


def d_study(g: GStudy, n_topics=None, alpha: float = 0.05) -> DStudy:
    """E rho^2 and Phi for `n_topics` topics (int or array; default: the G-study's) with 1 - alpha intervals."""
    if not 0 < alpha < 1:
        raise CranfieldError(f"alpha must be in (0, 1), got {alpha}")
    scalar = n_topics is None or np.ndim(n_topics) == 0
    n = np.asarray(g.n_topics if n_topics is None else n_topics, dtype=float)
    if (n <= 0).any():
        raise CranfieldError("the number of topics of a D-study must be positive")
    vs, vt, ve = g.var_system, g.var_topic, g.var_residual
    with np.errstate(invalid="ignore", divide="ignore"):
        erho = np.where(vs > 0, vs / (vs + ve / n), 0.0)
        phi = np.where(vs > 0, vs / (vs + (vt + ve) / n), 0.0)
    lo_q, hi_q = 1 - alpha / 2, alpha / 2
    e_lo = _from_ratio(_erho_ratio(g, lo_q), n)
    e_hi = _from_ratio(_erho_ratio(g, hi_q), n)
    p_lo = _spearman_brown(_phi1(g, lo_q), n)
    p_hi = _spearman_brown(_phi1(g, hi_q), n)

    def out(a):
        a = np.asarray(a, float)
        return float(a) if scalar else a
    return DStudy(n_topics=out(n), alpha=alpha, erho2=out(erho), erho2_lower=out(e_lo),
                  erho2_upper=out(e_hi), phi=out(phi), phi_lower=out(p_lo), phi_upper=out(p_hi))


def _n_for(target: float, p1: float) -> float:
    """Topics needed to reach `target` given the single-topic coefficient p1 (inf when p1 = 0)."""
    if p1 >= 1.0:
        return 1.0
    if p1 <= 0.0:
        return math.inf
    n = target * (1 - p1) / (p1 * (1 - target))
    return float(max(1, math.ceil(n - 1e-9)))


def topics_needed(g: GStudy, target: float = 0.95, coef: str = "phi", alpha: float = 0.05
                  ) -> tuple[float, float, float]:
    """(n, lower, upper): topics needed for E rho^2 or Phi >= target, with the 1 - alpha interval
    (lower comes from the upper coefficient bound). math.inf when the target is out of reach."""
    if not 0 < target < 1:
        raise CranfieldError(f"the target stability must be in (0, 1), got {target}")
    vs, vt, ve = g.var_system, g.var_topic, g.var_residual
    lo_q, hi_q = 1 - alpha / 2, alpha / 2
    if coef == "erho2":
        p1 = float(_from_ratio(_ratio(vs, ve), 1.0)) if vs > 0 else 0.0
        b_hi = float(_from_ratio(_erho_ratio(g, hi_q), 1.0))
        b_lo = float(_from_ratio(_erho_ratio(g, lo_q), 1.0))
    elif coef == "phi":
        p1 = float(_from_ratio(_ratio(vs, vt + ve), 1.0)) if vs > 0 else 0.0
        b_hi = _phi1(g, hi_q)
        b_lo = _phi1(g, lo_q)
    else:
        raise CranfieldError(f"coef must be 'phi' or 'erho2', got {coef!r}")
    return _n_for(target, p1), _n_for(target, b_hi), _n_for(target, b_lo)


def _num(v):
    """JSON-safe number: inf/nan become None."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def gstudy_report(g: GStudy, n_topics=None, alpha: float = 0.05, target: float = 0.95) -> dict:
    """The G- and D-study as a flat dict (the `--json` output keys)."""
    d = d_study(g, n_topics, alpha)
    ne, ne_lo, ne_hi = topics_needed(g, target, "erho2", alpha)
    np_, np_lo, np_hi = topics_needed(g, target, "phi", alpha)
    out = {
        "n_systems": g.n_systems, "n_topics": g.n_topics,
        "var_system": g.var_system, "var_topic": g.var_topic, "var_residual": g.var_residual,
        "ms_system": g.ms_system, "ms_topic": g.ms_topic, "ms_residual": g.ms_residual,
        "erho2": d.erho2, "erho2_lower": d.erho2_lower, "erho2_upper": d.erho2_upper,
        "phi": d.phi, "phi_lower": d.phi_lower, "phi_upper": d.phi_upper,
        "topics_for_erho2": ne, "topics_for_erho2_lower": ne_lo, "topics_for_erho2_upper": ne_hi,
        "topics_for_phi": np_, "topics_for_phi_lower": np_lo, "topics_for_phi_upper": np_hi,
        "d_study_topics": float(d.n_topics), "alpha": alpha, "target": target,
        "dropped_systems": list(g.dropped), "warnings": [p.message for p in g.warnings],
    }
    res = {k: (_num(v) if isinstance(v, float) else v) for k, v in out.items()}
    for k in res:
        if k.startswith("topics_for") and res[k] is not None:
            res[k] = int(res[k])
    return res


def components_table(g: GStudy) -> pd.DataFrame:
    """ANOVA table: source, df, mean square, variance component, share of total variance."""
    comps = [g.var_system, g.var_topic, g.var_residual]
    tot = sum(comps) or 1.0
    return pd.DataFrame({
        "source": ["system", "topic", "system:topic"],
        "df": [g.df_system, g.df_topic, g.df_residual],
        "ms": [g.ms_system, g.ms_topic, g.ms_residual],
        "variance": comps,
        "share": [c / tot for c in comps],
    })
