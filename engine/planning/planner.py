"""Cost-benefit planner: assessor hours versus expected stability for designs of Q queries x j judgments.

Method (kanoulas thesis 3.2.5.2, Figure 3.14): from an existing campaign, keep j judgments per topic,
evaluate every run, draw many Q-topic subsets, and measure Kendall's tau of each subset's ranking
against the baseline ranking (all topics, all judgments). Expected tau and its spread come from the
draws; beyond the available topics tau is extrapolated from its fitted logarithmic growth with cost.
Phi and E rho^2 for any Q come from a D-study on each j's score matrix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..stability.correlation import kendall_tau
from .cost import CostModel
from ..errors import CranfieldError
from ..ranking.join import judgment_keys, ranked_rows

Progress = Callable[[float, str], None] | None


def reduce_judgments(qrels: pd.DataFrame, runs: pd.DataFrame, j: int, selection: str = "depth",
                     seed: int = 0) -> pd.DataFrame:
    """Keep at most j judged documents per topic.

    selection 'depth': documents in pool order (best rank any run gives them, then how many runs
    retrieve them in their top ranks, then doc id), as a depth pool of budget j judges them;
    'random': a uniform random sample of the judged documents.
    """
    judged = qrels[qrels["grade"] >= 0]
    if selection == "random":
        rng = np.random.default_rng(seed)
        key = rng.random(len(judged))
        order = pd.DataFrame({"topic": judged["topic"].to_numpy(), "k": key}).sort_values(["topic", "k"], kind="mergesort")
        pos = order.groupby("topic", sort=False).cumcount()
        keep_idx = order.index[pos.to_numpy() < j]
        return judged.iloc[np.sort(keep_idx)] if len(keep_idx) else judged.iloc[0:0]
    if selection != "depth":
        raise CranfieldError(f"unknown judgment selection {selection!r} (use depth or random)")
    rows, pos = ranked_rows(runs, by_name=True)
    rk, qk, n = judgment_keys(runs.iloc[rows], judged)
    best = np.full(n, np.inf)
    np.minimum.at(best, rk, pos)
    m = judged.assign(min=best[qk], size=np.bincount(rk, minlength=n)[qk].astype(np.float64))
    m = m.sort_values(["topic", "min", "size", "doc"], ascending=[True, True, False, True], kind="mergesort")
    m = m[m.groupby("topic", sort=False).cumcount() < j]
    return m[qrels.columns.intersection(m.columns)].reset_index(drop=True)


def score_matrix(qrels: pd.DataFrame, runs: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Topic x run matrix of one measure (0 where a run retrieved nothing for a judged topic)."""
    from ..evaluation.evaluate import evaluate
    from ..stability import score_matrix as matrix_of
    df = evaluate(qrels, runs, [measure])
    name = str(df["measure"].cat.categories[0]) if len(df) else measure
    return matrix_of(df, name, fill=0.0)


@dataclass
class DesignCurve:
    """Tau draws for one j over a grid of Q (number of topics)."""

    j: int
    qs: np.ndarray                    # numbers of topics drawn
    taus: np.ndarray                  # (len(qs), trials)
    hours: np.ndarray                 # hours for each Q
    fit: tuple[float, float]          # tau ~ a + b * ln(hours)
    fit_sd: tuple[float, float]       # spread of tau ~ c + d * ln(hours) (sd of draws)
    gstudy: object | None = None      # engine.stability G-study of this j's score matrix


@dataclass
class PlanResult:
    """Everything the planner estimated, with the tables a report needs."""

    measure: str
    baseline: pd.Series
    n_topics: int
    curves: list[DesignCurve]
    model: CostModel
    target_tau: float
    target_phi: float
    designs: pd.DataFrame = field(default_factory=pd.DataFrame)  # per j: Q needed and hours
    grid: pd.DataFrame = field(default_factory=pd.DataFrame)     # per (j, Q): tau mean/sd/p05, hours, phi, erho2
    judged: pd.Series = field(default_factory=lambda: pd.Series(dtype=np.int64))  # judged documents per topic

    def availability_lines(self) -> list[str]:
        """What the judgments allow: judged documents per topic, and for each j above the fewest, how many
        topics have fewer than j (they keep all they have, while the hours count j per topic)."""
        if not len(self.judged):
            return []
        lo, hi, med = int(self.judged.min()), int(self.judged.max()), float(self.judged.median())
        out = [f"judged documents per topic: {lo}-{hi} (median {med:g}) over {len(self.judged)} topics"]
        for r in self.designs.itertuples(index=False):
            if r.topics_below_j:
                out.append(f"j = {r.j}: {r.topics_below_j} of {len(self.judged)} topics have fewer than {r.j} "
                           f"judged documents and keep all they have (mean {r.judged_per_topic:.1f} per topic "
                           f"used); hours still count {r.j} per topic")
        return out

    def cheapest(self, criterion: str = "tau_mean") -> pd.Series:
        """The design with the fewest hours meeting the criterion: tau_mean, tau_p95 or phi."""
        col = {"tau_mean": "hours_tau_mean", "tau_p95": "hours_tau_p95", "phi": "hours_phi"}[criterion]
        d = self.designs.dropna(subset=[col])
        if d.empty:
            raise CranfieldError(f"no design reaches the target by {criterion}; lower the target or add judgments")
        return d.loc[d[col].idxmin()]


def _fit_log(hours: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    ok = np.isfinite(y) & (hours > 0)
    if ok.sum() < 2:
        return (float(np.nanmean(y)) if ok.any() else np.nan, 0.0)
    b, a = np.polyfit(np.log(hours[ok]), y[ok], 1)
    return float(a), float(b)


def _first_reaching(qs: np.ndarray, values: np.ndarray, target: float) -> float:
    """Smallest Q (log-interpolated between grid points) where `values` first reaches `target`; NaN if never."""
    ok = np.flatnonzero(values >= target)
    if not len(ok):
        return np.nan
    i = int(ok[0])
    if i == 0:
        return float(qs[0])
    x0, x1, y0, y1 = np.log(qs[i - 1]), np.log(qs[i]), values[i - 1], values[i]
    frac = (target - y0) / (y1 - y0) if y1 != y0 else 1.0
    return float(np.ceil(np.exp(x0 + frac * (x1 - x0))))


def _solve_hours(a: float, b: float, target: float) -> float:
    if not np.isfinite(a) or b <= 0:
        return np.nan
    return float(np.exp((target - a) / b))


def tau_draws(mat: np.ndarray, baseline: np.ndarray, q: int, trials: int, rng: np.random.Generator,
              strata: np.ndarray | None = None, shares: Mapping[int, float] | None = None,
              replace: bool = True) -> np.ndarray:
    """Kendall tau of the mean over `trials` random Q-topic draws against the baseline scores.

    replace=True draws topics with replacement (a bootstrap of the topic population, valid for any Q);
    replace=False draws distinct topics (the thesis's subsets, Q up to the topics available).
    """
    n_t = mat.shape[0]
    if strata is None or not shares:
        if replace:
            idx = rng.integers(0, n_t, size=(trials, q))
        else:
            if q > n_t:
                raise CranfieldError(f"cannot draw {q} distinct topics from {n_t}; use the bootstrap draws")
            keys = rng.random((trials, n_t))
            idx = np.argpartition(keys, q - 1, axis=1)[:, :q] if q < n_t else np.tile(np.arange(n_t), (trials, 1))
    else:
        parts = []
        for s, share in shares.items():
            members = np.flatnonzero(strata == s)
            k = int(round(q * share))
            if k > len(members) and not replace:
                raise CranfieldError(f"category mix needs {k} topics of a category that has {len(members)}")
            if k == 0:
                continue
            if replace:
                parts.append(members[rng.integers(0, len(members), size=(trials, k))])
                continue
            keys = rng.random((trials, len(members)))
            parts.append(members[np.argpartition(keys, k - 1, axis=1)[:, :k]])
        idx = np.concatenate(parts, axis=1)
    means = mat[idx].mean(axis=1)          # (trials, runs)
    return kendall_tau(means, baseline)


def shrink_systems(full: np.ndarray) -> np.ndarray:
    """Per-system shifts that shrink observed system effects to the G-study's system variance.

    Means over n topics scatter by var_system + var_residual / n; the population's systems scatter by
    var_system only. Drawing topics from the observed data as if it were the population would make
    systems look better separated than they are (optimistic tau); shifting every column by
    -(1 - k) * (mean_s - grand), k = sqrt(var_system / (var_system + var_residual / n)), removes that.
    """
    from ..stability.gtheory import g_study
    g = g_study(full)
    n = full.shape[0]
    tot = g.var_system + g.var_residual / n
    k = np.sqrt(g.var_system / tot) if tot > 0 else 1.0
    dev = full.mean(axis=0) - full.mean()
    return -(1.0 - k) * dev


def plan(qrels: pd.DataFrame, runs: pd.DataFrame, *, measure: str = "map", js: Sequence[int] = (8, 16, 32, 64, 128),
         qs: Sequence[int] | None = None, trials: int = 100, selection: str = "depth", seed: int = 0,
         model: CostModel | None = None, target_tau: float = 0.9, target_phi: float = 0.95,
         method: str = "bootstrap", progress: Progress = None) -> PlanResult:
    """Estimate hours and stability for Q x j designs from a campaign's runs and judgments.

    method 'bootstrap' (default) draws Q topics with replacement from the available ones after
    shrinking system effects to the G-study's system variance (`shrink_systems`), so any Q can be
    assessed and the spread stays honest when Q nears the topics available; 'subsample' is the thesis's
    Figure 3.14 method (distinct topics, Q up to the topics available, tau against the full-data ranking).
    """
    from ..stability.gtheory import d_study, g_study, topics_needed

    if method not in ("bootstrap", "subsample"):
        raise CranfieldError(f"unknown planner method {method!r} (bootstrap or subsample)")
    model = model or CostModel()
    rng = np.random.default_rng(seed)
    full = score_matrix(qrels, runs, measure)
    if full.shape[1] < 3:
        raise CranfieldError("the planner needs at least 3 runs to rank")
    n_t = full.shape[0]
    shift = shrink_systems(full.to_numpy()) if method == "bootstrap" else np.zeros(full.shape[1])
    baseline = full.mean(axis=0) + shift
    if qs is None:
        hi = n_t if method == "subsample" else max(10 * n_t, 500)
        qs = sorted(set(int(x) for x in np.unique(np.geomspace(5, hi, num=14).round()) if 2 <= x <= hi))
    curves, rows, design_rows = [], [], []
    judged = qrels[qrels["grade"] >= 0]
    judged = judged.groupby(judged["topic"].astype(str), sort=True).size().reindex(
        full.index.astype(str), fill_value=0).astype(np.int64)
    steps = len(js)
    for si, j in enumerate(js):
        if progress:
            progress(si / steps, f"evaluating with {j} judgments per topic")
        red = reduce_judgments(qrels, runs, j, selection=selection, seed=seed + j)
        mat = score_matrix(red, runs, measure).reindex(index=full.index, columns=full.columns).fillna(0.0)
        m = mat.to_numpy() + shift
        taus = np.stack([tau_draws(m, baseline.to_numpy(), q, trials, rng, replace=method == "bootstrap")
                         for q in qs])
        hours = np.array([model.design_hours(q, j) for q in qs])
        fit = _fit_log(hours, taus.mean(axis=1))
        fit_sd = _fit_log(hours, taus.std(axis=1, ddof=1))
        g = g_study(mat.to_numpy())
        curves.append(DesignCurve(j, np.asarray(qs), taus, hours, fit, fit_sd, g))
        for q, t, h in zip(qs, taus, hours):
            d = d_study(g, q)
            rows.append({"j": j, "queries": q, "hours": h, "tau_mean": float(np.nanmean(t)),
                         "tau_sd": float(np.nanstd(t, ddof=1)), "tau_p05": float(np.nanpercentile(t, 5)),
                         "tau_p95": float(np.nanpercentile(t, 95)), "phi": d.phi, "erho2": d.erho2})
        # designs reaching the targets
        per_q = model.design_hours(1, j)
        if method == "bootstrap":
            # measured on the grid (any Q can be drawn): the first Q whose draws reach the target,
            # interpolated in log Q; unreachable within the grid gives NaN (no extrapolation)
            q_mean = _first_reaching(np.asarray(qs, float), taus.mean(axis=1), target_tau)
            q_p95 = _first_reaching(np.asarray(qs, float), np.percentile(taus, 5, axis=1), target_tau)
            h_mean, h_p95 = q_mean * per_q, q_p95 * per_q
        else:
            # thesis Figure 3.14: tau grows with the log of cost; extrapolate the fitted line
            h_mean = _solve_hours(fit[0], fit[1], target_tau)
            # 95% probability: mean - 1.645 sd >= target, sd modelled as c + d ln(h)
            hh = np.geomspace(0.1, 10000, 4000)
            lower = fit[0] + fit[1] * np.log(hh) - 1.645 * np.maximum(fit_sd[0] + fit_sd[1] * np.log(hh), 0)
            ok = np.flatnonzero(lower >= target_tau)
            h_p95 = float(hh[ok[0]]) if len(ok) else np.nan
        n_phi, lo_phi, hi_phi = topics_needed(g, target_phi, coef="phi")
        design_rows.append({"j": j, "hours_per_query": per_q,
                            "judged_per_topic": float(np.minimum(judged.to_numpy(), j).mean()),
                            "topics_below_j": int((judged.to_numpy() < j).sum()),
                            "queries_tau_mean": h_mean / per_q if np.isfinite(h_mean) else np.nan,
                            "hours_tau_mean": h_mean,
                            "queries_tau_p95": h_p95 / per_q if np.isfinite(h_p95) else np.nan,
                            "hours_tau_p95": h_p95,
                            "queries_phi": n_phi, "queries_phi_lower": lo_phi, "queries_phi_upper": hi_phi,
                            "hours_phi": n_phi * per_q if np.isfinite(n_phi) else np.nan})
    if progress:
        progress(1.0, "done")
    res = PlanResult(measure, baseline, n_t, curves, model, target_tau, target_phi,
                     designs=pd.DataFrame(design_rows), grid=pd.DataFrame(rows), judged=judged)
    return res


def predict_tau(result: PlanResult, n_queries: int, j: int) -> tuple[float, float]:
    """Expected tau and its spread (sd) for a design: the draws at that Q, else interpolated in log Q
    between grid points, else (beyond the grid) the fitted log-cost curve, for the nearest j."""
    curve = min(result.curves, key=lambda c: abs(np.log2(c.j) - np.log2(j)))
    h = result.model.design_hours(n_queries, curve.j)
    if n_queries in set(curve.qs.tolist()):
        t = curve.taus[list(curve.qs).index(n_queries)]
        return float(np.nanmean(t)), float(np.nanstd(t, ddof=1))
    qs = curve.qs.astype(float)
    if qs[0] <= n_queries <= qs[-1]:
        x = np.log(qs)
        mean = float(np.interp(np.log(n_queries), x, np.nanmean(curve.taus, axis=1)))
        sd = float(np.interp(np.log(n_queries), x, np.nanstd(curve.taus, axis=1, ddof=1)))
        return mean, sd
    mean = curve.fit[0] + curve.fit[1] * np.log(h)
    sd = max(curve.fit_sd[0] + curve.fit_sd[1] * np.log(h), 0.0)
    return float(min(mean, 1.0)), float(sd)


def category_mixes(qrels: pd.DataFrame, runs: pd.DataFrame, categories: Mapping[str, str], *, measure: str = "map",
                   j: int = 32, q: int = 40, shares: Sequence[float] = (0.25, 0.5, 0.75), trials: int = 100,
                   model: CostModel | None = None, seed: int = 0, selection: str = "depth") -> pd.DataFrame:
    """Tau and hours when one category is sampled at each share (thesis Figure 3.15), for each category."""
    model = model or CostModel()
    rng = np.random.default_rng(seed)
    full = score_matrix(qrels, runs, measure)
    baseline = full.mean(axis=0).to_numpy()
    red = reduce_judgments(qrels, runs, j, selection=selection, seed=seed + j)
    mat = score_matrix(red, runs, measure).reindex(index=full.index, columns=full.columns).fillna(0.0)
    cats = np.array([categories.get(str(t)) for t in full.index], dtype=object)
    names = sorted({c for c in cats if c is not None})
    if len(names) < 2:
        raise CranfieldError("category mixes need topics of at least two categories (topics.categories)")
    codes = np.array([names.index(c) if c in names else -1 for c in cats])
    rows = []
    for ci, c in enumerate(names):
        for s in shares:
            rest = (1 - s) / (len(names) - 1)
            mix = {k: (s if k == ci else rest) for k in range(len(names))}
            try:
                t = tau_draws(mat.to_numpy(), baseline, q, trials, rng, strata=codes, shares=mix)
            except CranfieldError as exc:
                rows.append({"category": c, "share": s, "queries": q, "j": j, "hours": np.nan,
                             "tau_mean": np.nan, "tau_sd": np.nan, "note": str(exc)})
                continue
            hours = model.design_hours(q, j, {names[k]: v for k, v in mix.items()}) \
                if all(n in model.categories for n in names) else model.design_hours(q, j)
            rows.append({"category": c, "share": s, "queries": q, "j": j, "hours": hours,
                         "tau_mean": float(np.nanmean(t)), "tau_sd": float(np.nanstd(t, ddof=1)), "note": ""})
    return pd.DataFrame(rows)
