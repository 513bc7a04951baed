"""Pool experiments on campaigns with complete truth (thesis 3.1.3-3.1.5, Figures 3.3-3.7).

Several pool strategies get the same per-topic judging budget; only the documents each selects are
revealed from the truth; every system's mean score is estimated with the estimator that matches the
design (xinfAP on stratified samples, infAP on uniform samples, statAP on statAP samples, plain AP
on anything) and compared with its true score: RMSE, Kendall's tau and Pearson's rho, separately for
systems that contributed to the pool and those that did not (Buttcher et al. 2007, section 5).

The true score is AP against the truth restricted to the depth-d pool of the contributing runs (the
thesis treats that pool as the complete judgment set; `truth_scope="complete"` uses every truth
judgment instead).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..util.names import DEFAULT_DESIGNS, DESIGNS  # noqa: F401  (public here too)

ESTIMATORS_NEEDING_FRAME = {"xinfAP", "infAP"}


@dataclass
class ExperimentResult:
    """Summary (mean over trials) per design and system set, per-trial statistics, and scores."""

    summary: pd.DataFrame
    trials: pd.DataFrame
    scores: pd.DataFrame          # trial, design, run, estimate, truth, contributed
    params: dict = field(default_factory=dict)


def _reveal(pool: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Pool rows with true grades where selected (documents missing from the truth are non-relevant)
    and -1 for sampling-frame rows that were not selected."""
    m = pool.merge(truth[["topic", "doc", "grade"]], on=["topic", "doc"], how="left")
    g = m["grade"].fillna(0).astype(np.int64).to_numpy()
    m["grade"] = np.where(m["order"].to_numpy() > 0, np.maximum(g, 0), -1)
    return m


def _mean_scores(qrels: pd.DataFrame, runs: pd.DataFrame, measure: str, topics: list[str]) -> pd.Series:
    from ..evaluation.evaluate import evaluate
    df = evaluate(qrels, runs, [measure])
    df = df[df["measure"] == measure]
    tab = df.pivot_table(index="run", columns="topic", values="value", observed=False, aggfunc="first")
    tab = tab.reindex(columns=topics).fillna(0.0)
    return tab.mean(axis=1)


def _stats(est: np.ndarray, true: np.ndarray) -> dict:
    from scipy.stats import kendalltau, pearsonr
    if len(est) < 3:
        return {"rmse": float("nan"), "tau": float("nan"), "rho": float("nan")}
    rmse = float(np.sqrt(np.mean((est - true) ** 2)))
    tau = float(kendalltau(est, true).statistic) if np.ptp(est) > 0 else float("nan")
    rho = float(pearsonr(est, true).statistic) if np.ptp(est) > 0 else float("nan")
    return {"rmse": rmse, "tau": tau, "rho": rho}


def pool_experiment(runs: pd.DataFrame, truth: pd.DataFrame, pooled: list[str], *, budget=0.05,
                    depth: int = 100, designs=DEFAULT_DESIGNS, trials: int = 5, seed: int = 0,
                    truth_scope: str = "pool", rel_level: int = 1) -> ExperimentResult:
    """Run every design `trials` times at the same per-topic budget and compare estimates with truth."""
    from ..pooling import build_pool

    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise CranfieldError(f"unknown design(s) {', '.join(unknown)}; choose from {', '.join(DESIGNS)}")
    if not pooled:
        raise CranfieldError("the experiment needs at least one contributing (pooled) run")
    runs = runs.astype({"topic": str, "doc": str, "run": str})
    truth = truth.astype({"topic": str, "doc": str})
    frame = build_pool(runs, "depth", None, depth=depth, pooled=pooled).table
    topics = sorted(frame["topic"].unique().tolist())
    runs = runs[runs["topic"].isin(set(topics))]
    if truth_scope == "pool":
        true_q = _reveal(frame, truth)[["topic", "doc", "grade"]]
    elif truth_scope == "complete":
        true_q = truth[truth["topic"].isin(set(topics))]
    else:
        raise CranfieldError("truth_scope must be 'pool' or 'complete'")
    true_map = _mean_scores(true_q, runs, "map", topics)
    all_runs = sorted(runs["run"].unique().tolist())
    contributed = pd.Series([r in set(pooled) for r in all_runs], index=all_runs)
    rows, score_rows = [], []
    for t in range(trials):
        built: dict[str, pd.DataFrame] = {}
        for label in designs:
            strategy, measure = DESIGNS[label]
            if strategy not in built:
                pool = build_pool(runs, strategy, budget, depth=depth, seed=seed + 1000 * t, pooled=pooled,
                                  oracle=truth, rel_level=rel_level).table
                built[strategy] = _reveal(pool, truth)
            q = built[strategy]
            if measure not in ESTIMATORS_NEEDING_FRAME:
                q = q[q["grade"] >= 0]
            est = _mean_scores(q, runs, measure, topics).reindex(all_runs).fillna(0.0)
            judged = int((built[strategy]["grade"] >= 0).sum())
            for name, mask in (("contributing", contributed.to_numpy()), ("non-contributing", ~contributed.to_numpy()),
                               ("all", np.ones(len(all_runs), bool))):
                if not mask.any():
                    continue
                st = _stats(est.to_numpy()[mask], true_map.reindex(all_runs).to_numpy()[mask])
                rows.append({"trial": t, "design": label, "systems": name, "judged": judged, **st})
            score_rows.append(pd.DataFrame({"trial": t, "design": label, "run": all_runs, "estimate": est.to_numpy(),
                                            "truth": true_map.reindex(all_runs).to_numpy(),
                                            "contributed": contributed.to_numpy()}))
    trials_df = pd.DataFrame(rows)
    summary = (trials_df.groupby(["design", "systems"], sort=False)
               .agg(judged=("judged", "mean"), rmse=("rmse", "mean"), tau=("tau", "mean"), rho=("rho", "mean"))
               .reset_index())
    n_frame = len(frame)
    summary["judged_share"] = summary["judged"] / n_frame
    params = {"budget": budget, "depth": depth, "designs": list(designs), "trials": trials, "seed": seed,
              "truth_scope": truth_scope, "pool_size": n_frame, "topics": len(topics),
              "runs": len(all_runs), "contributing": int(contributed.sum())}
    return ExperimentResult(summary, trials_df, pd.concat(score_rows, ignore_index=True), params)


def simulated_pool_experiment(n_runs: int = 30, n_topics: int = 25, sim_seed: int = 7, run_depth: int = 100,
                              **kw) -> ExperimentResult:
    """`pool_experiment` on a fresh simulation (engine.simulation.campaigns) with its pooled runs contributing."""
    from ..simulation.campaigns import simulate
    sim = simulate(n_runs=n_runs, n_topics=n_topics, depth=run_depth, seed=sim_seed)
    pooled = sim.run_meta.loc[sim.run_meta["pooled"].astype(bool), "run"].astype(str).tolist()
    res = pool_experiment(sim.runs, sim.truth, pooled, **kw)
    res.params.update({"simulation": {"n_runs": n_runs, "n_topics": n_topics, "seed": sim_seed, "depth": run_depth}})
    return res
