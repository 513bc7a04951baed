"""Judgment-reduction experiments: how measures behave as judgments are removed at random.

- Buckley-Voorhees reductions (sakai-2007 section 5): per topic, the judged relevant and judged
  non-relevant documents are each shuffled; at rate j% the first R_j = max(1, trunc(R*j/100))
  relevant and N_j = max(10, trunc(N*j/100)) non-relevant documents are kept.
- Uniform removal (he-macdonald-ounis-2008 section 5): at each of 16 completeness degrees
  x in {1,2,3,4,5,10,15,20,25,30,40,50,60,70,80,90}% a random x% of every topic's relevant and of its
  non-relevant judgments are kept (rounded down), the rest removed.

Each level is repeated over `trials` random draws; per measure the system ranking and scores are
compared with those under the full judgments (removed documents count as pooled but unjudged): Kendall's tau, tau_AP, RMS error of the mean scores
and the mean score drift (new - full).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from . import Progress, kendall_tau, report, tau_ap
from .rejudge import Rejudger

BV_RATES = (90, 70, 50, 30, 10)
HE_LEVELS = (1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90)


def _class_ranks(qrels: pd.DataFrame, rng: np.random.Generator, rel_level: int = 1):
    """(topic code, is_rel, random rank within (topic, class), class size) per judged qrels row."""
    t = pd.factorize(qrels["topic"].astype(str))[0].astype(np.int64)
    g = qrels["grade"].to_numpy(np.int64)
    judged = g >= 0
    cls = t * 3 + np.where(judged, (g >= rel_level).astype(np.int64), 2)   # non-relevant, relevant, unjudged
    key = rng.random(len(qrels))
    order = np.lexsort((key, cls))
    cs = cls[order]
    starts = np.flatnonzero(np.concatenate(([True], cs[1:] != cs[:-1])))
    lens = np.diff(np.concatenate((starts, [len(cs)])))
    rank = np.empty(len(cls), np.int64)
    rank[order] = np.arange(len(cs)) - np.repeat(starts, lens)
    size = np.empty(len(cls), np.int64)
    size[order] = np.repeat(lens, lens)
    return judged, g >= rel_level, rank, size


def bv_keep(qrels: pd.DataFrame, rate: float, rng: np.random.Generator, rel_level: int = 1) -> np.ndarray:
    """Keep-mask of a Buckley-Voorhees reduction at `rate` percent (unjudged pool rows are kept)."""
    judged, is_rel, rank, size = _class_ranks(qrels, rng, rel_level)
    lim = np.where(is_rel, np.maximum(1, np.floor(size * rate / 100.0)),
                   np.maximum(10, np.floor(size * rate / 100.0)))
    return ~judged | (rank < lim)


def uniform_keep(qrels: pd.DataFrame, degree: float, rng: np.random.Generator, rel_level: int = 1) -> np.ndarray:
    """Keep-mask keeping `degree` percent of each topic's relevant and non-relevant judgments."""
    judged, _, rank, size = _class_ranks(qrels, rng, rel_level)
    return ~judged | (rank < np.floor(size * degree / 100.0 + 1e-9))


def compare(full: np.ndarray, new: np.ndarray) -> dict:
    """Ranking and score agreement of the run means under new vs full judgments (topics x runs inputs)."""
    a, b = full.mean(axis=0), new.mean(axis=0)
    return {"tau": kendall_tau(a, b), "tau_ap": tau_ap(a, b),
            "rms": float(np.sqrt(np.mean((b - a) ** 2))), "drift": float(np.mean(b - a)),
            "mean_score": float(b.mean())}


def reduction_experiment(qrels: pd.DataFrame, runs: pd.DataFrame, measures, *, method: str = "uniform",
                         levels=None, trials: int = 10, seed: int = 0, rel_level: int = 1,
                         rejudger: Rejudger | None = None, progress: Progress = None) -> pd.DataFrame:
    """Per (level, trial, measure): tau, tau_ap, rms, drift and mean_score vs the full judgments.

    `method` is "uniform" (He et al. degrees) or "bv" (Buckley-Voorhees rates). Summarize with
    `summarize_reduction`.
    """
    if method not in ("uniform", "bv"):
        raise CranfieldError(f"reduction method must be 'uniform' or 'bv', got {method!r}")
    levels = tuple(levels or (HE_LEVELS if method == "uniform" else BV_RATES))
    if any(not 0 < float(v) <= 100 for v in levels):
        raise CranfieldError("reduction levels are percentages in (0, 100]")
    report(progress, 0.0, "joining runs and judgments")
    rj = rejudger or Rejudger(qrels, runs, measures)
    q = rj.qrels
    full = rj.evaluate()
    rng = np.random.default_rng(seed)
    keep_fn = uniform_keep if method == "uniform" else bv_keep
    rows = []
    total = len(levels) * trials
    done = 0
    for lv in levels:
        for tr in range(trials):
            keep = keep_fn(q, float(lv), rng, rel_level)
            new = rj.evaluate(keep, removed_as="unjudged")
            for name in rj.names:
                rows.append({"level": float(lv), "trial": tr, "measure": name,
                             "judged": int((keep & (rj.q_grade >= 0)).sum()), **compare(full[name], new[name])})
            done += 1
            report(progress, done / total, f"{method} level {lv}%: trial {tr + 1}/{trials}")
    return pd.DataFrame(rows)


def summarize_reduction(df: pd.DataFrame, value: str = "tau") -> pd.DataFrame:
    """Level x measure table of the mean of `value` over trials."""
    t = df.pivot_table(index="level", columns="measure", values=value, aggfunc="mean", observed=True)
    t.columns.name = None
    return t.sort_index(ascending=False)


def degradation_order(df: pd.DataFrame, value: str = "tau") -> list[str]:
    """Measures from the fastest- to the slowest-degrading ranking (mean `value` over all levels)."""
    return df.groupby("measure")[value].mean().sort_values(kind="stable").index.tolist()
