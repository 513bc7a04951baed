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
from .matrix import Progress, kendall_tau, report, tau_ap
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


def compare_means(a: np.ndarray, b: np.ndarray) -> dict:
    """Ranking and score agreement of the per-run mean scores under full (`a`) and reduced (`b`) judgments."""
    return {"tau": kendall_tau(a, b), "tau_ap": tau_ap(a, b),
            "rms": float(np.sqrt(np.mean((b - a) ** 2))), "drift": float(np.mean(b - a)),
            "mean_score": float(b.mean())}


def reduction_experiment(qrels: pd.DataFrame, runs: pd.DataFrame, measures, *, method: str = "uniform",
                         levels=None, trials: int = 10, seed: int = 0, rel_level: int = 1, options=None,
                         rejudger: Rejudger | None = None, progress: Progress = None) -> pd.DataFrame:
    """Per (level, trial, measure): tau, tau_ap, rms, drift and mean_score vs the full judgments.

    `method` is "uniform" (He et al. degrees) or "bv" (Buckley-Voorhees rates). Summarize with
    `summarize_reduction`. The whole run table is one topic block of `reduction_experiment_store`.
    """
    levels = _levels(method, levels)
    report(progress, 0.0, "joining runs and judgments")
    rj = rejudger or Rejudger(qrels, runs, measures, options)
    draws = _draws(rj.qrels, method, levels, trials, seed, rel_level)

    def tick(d, n):
        lv, tr, _ = draws[max(d - 2, 0)]
        report(progress, d / n, f"{method} level {lv:g}%: trial {tr + 1}/{trials}")

    sums = _rejudged_sums(rj, [k for _, _, k in draws], rj.runs, tick if progress else None)
    return _rows(draws, rj.names, sums / max(rj.n_topics, 1), rj.q_grade >= 0)


def _levels(method: str, levels) -> tuple:
    if method not in ("uniform", "bv"):
        raise CranfieldError(f"reduction method must be 'uniform' or 'bv', got {method!r}")
    levels = tuple(levels or (HE_LEVELS if method == "uniform" else BV_RATES))
    if any(not 0 < float(v) <= 100 for v in levels):
        raise CranfieldError("reduction levels are percentages in (0, 100]")
    return levels


def _draws(q: pd.DataFrame, method: str, levels, trials: int, seed: int, rel_level: int) -> list:
    """(level, trial, keep-mask over q's rows) of every reduction, drawn in order from one generator."""
    rng = np.random.default_rng(seed)
    keep_fn = uniform_keep if method == "uniform" else bv_keep
    return [(float(lv), tr, keep_fn(q, float(lv), rng, rel_level)) for lv in levels for tr in range(trials)]


def _rejudged_sums(rj: Rejudger, masks: list, run_order: list[str], tick=None) -> np.ndarray:
    """Per (mask, measure, run in `run_order`): the sum over rj's topics; mask 0 = full judgments."""
    col = np.asarray([run_order.index(r) for r in rj.runs], np.int64)
    out = np.zeros((len(masks) + 1, len(rj.names), len(run_order)))
    for i, keep in enumerate([None, *masks]):
        ev = rj.evaluate(keep, removed_as="unjudged") if keep is not None else rj.evaluate()
        for j, name in enumerate(rj.names):
            out[i, j, col] = ev[name].sum(axis=0)
        if tick is not None:
            tick(i + 1, len(masks) + 1)
    return out


def _rows(draws: list, names: list[str], means: np.ndarray, judged: np.ndarray) -> pd.DataFrame:
    """The experiment's table from per (mask, measure, run) mean scores (mask 0 = full judgments)."""
    rows = []
    for i, (lv, tr, keep) in enumerate(draws):
        n_judged = int((keep & judged).sum())
        for j, name in enumerate(names):
            rows.append({"level": lv, "trial": tr, "measure": name, "judged": n_judged,
                         **compare_means(means[0, j], means[i + 1, j])})
    return pd.DataFrame(rows)


def _reduction_block(args) -> tuple[np.ndarray, int, list[str]]:
    """Per (mask, measure, run): the sum over the block's topics; mask 0 = full judgments."""
    from ..evaluation.blocks import read_block
    task, masks, run_order, options = args
    q = task.qrels
    runs = read_block(task)
    if len(runs) == 0:
        from ..measures import load_all, resolve
        load_all()
        names = [n for req in resolve(task.measures) for n in req.names if req.measure.value_kind != "str"]
        return np.zeros((len(masks) + 1, len(names), len(run_order))), q["topic"].nunique(), names
    rj = Rejudger(q, runs, task.measures, options)
    return _rejudged_sums(rj, masks, run_order), rj.n_topics, rj.names


def reduction_experiment_store(store, qrels: pd.DataFrame, measures, *, options=None, method: str = "uniform",
                               levels=None, trials: int = 10, seed: int = 0, rel_level: int = 1,
                               block_rows: int | None = None, workers: int | None = None, executor=None,
                               progress: Progress = None) -> pd.DataFrame:
    """`reduction_experiment` over a run store, streamed by topic blocks (bounded memory): the same
    random reductions (same seed, same draws), each block evaluated under every reduction, run sums
    accumulated over blocks. Equal to the in-memory experiment up to the rounding of the means."""
    from ..evaluation.blocks import BLOCK_ROWS, BlockTask, sorted_topics, block_rows_of, plan_blocks
    from ..util.parallel import map_tasks
    from ..ranking.ranked import EvalOptions
    levels = _levels(method, levels)
    q = qrels.reset_index(drop=True)
    draws = _draws(q, method, levels, trials, seed, rel_level)
    run_order = list(store.runs)
    plan = plan_blocks(store, sorted_topics(q["topic"].astype(str)), run_order, block_rows or BLOCK_ROWS // 2)
    opt = options or EvalOptions(rel_level=rel_level)
    tasks = []
    for (b, parts), rows in zip(plan, block_rows_of(plan, q["topic"])):
        task = BlockTask(parts, tuple(run_order), tuple(b), q.iloc[rows].reset_index(drop=True), measures, opt, None)
        tasks.append((task, [k[rows] for _, _, k in draws], run_order, opt))

    def tick(d, n):
        report(progress, d / n, f"{method} reductions: topic block {d}/{n}")

    results = map_tasks(_reduction_block, tasks, workers, executor, tick if progress else None)
    total = sum(r[0] for r in results)
    n_topics = sum(r[1] for r in results)
    return _rows(draws, results[0][2], total / max(n_topics, 1), q["grade"].to_numpy(np.int64) >= 0)


def summarize_reduction(df: pd.DataFrame, value: str = "tau") -> pd.DataFrame:
    """Level x measure table of the mean of `value` over trials."""
    t = df.pivot_table(index="level", columns="measure", values=value, aggfunc="mean", observed=True)
    t.columns.name = None
    return t.sort_index(ascending=False)


def degradation_order(df: pd.DataFrame, value: str = "tau") -> list[str]:
    """Measures from the fastest- to the slowest-degrading ranking (mean `value` over all levels)."""
    return df.groupby("measure")[value].mean().sort_values(kind="stable").index.tolist()
