"""Sakai (2007) section 5 reductions on a simulated campaign: Kendall's tau between the system ranking
with full judgments and with j% of them, for AP, Q, nDCG on raw lists, their condensed variants
AP', Q', nDCG', bpref and the rpref/bpref variants.

Reduction (Buckley and Voorhees' method, Sakai sec. 5): per topic, shuffle the judged relevant and the
judged non-relevant documents separately and keep the first R_j = max(1, trunc(R j/100)) and
N_j = max(10, trunc(N j/100)); the other documents become unjudged (dropped from the qrels).
Full judgments = the depth-`pool` pool of all runs, judged from the simulator's truth.

    python3 benchmarks/reductions_sakai.py [--runs 30] [--topics 50] [--depth 1000] [--pool 100] [--reps 5]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: E402
from engine.simulation.campaigns import simulate  # noqa: E402

# label -> measure spec (Sakai's settings: nDCG with log base a = 2 and no discount up to rank a,
# cut-off 1000; Q-measure beta = 1; gains = grades)
MEASURES = {
    "AveP": "map", "Q-measure": "Q", "nDCG": "ndcgx.disc=sakai,a=2,k=1000",
    "AveP'": "map@cond", "Q'": "Q@cond", "nDCG'": "ndcgx@cond.disc=sakai,a=2,k=1000",
    "bpref": "bpref", "rpref_relative2": "rpref_relative2", "bpref_N": "bpref_N", "rpref_N": "rpref_N",
}
LEVELS = (90, 70, 50, 30, 10)


def reduce_qrels(q: pd.DataFrame, j: int, rng: np.random.Generator) -> pd.DataFrame:
    """Keep per topic max(1, R j/100) relevant and max(10, N j/100) non-relevant judged documents."""
    q = q[q["grade"] >= 0].copy()
    q["rel"] = q["grade"] > 0
    q["u"] = rng.random(len(q))
    q = q.sort_values(["topic", "rel", "u"], kind="stable")
    q["pos"] = q.groupby(["topic", "rel"]).cumcount()
    size = q.groupby(["topic", "rel"])["u"].transform("size")
    keep_n = np.where(q["rel"], np.maximum(1, (size * j) // 100), np.maximum(10, (size * j) // 100))
    return q.loc[q["pos"].to_numpy() < keep_n, ["topic", "doc", "grade"]].reset_index(drop=True)


def system_means(q: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    specs = list(MEASURES.values())
    df = engine.evaluate(q, runs, specs)
    table = engine.summarize(df)
    names = {}
    for label, spec in MEASURES.items():
        base, dot, ptext = spec.partition(".")
        names[label] = base if not dot else f"{base}_{ptext}"
    return table[[names[k] for k in MEASURES]].set_axis(list(MEASURES), axis=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2007)
    a = ap.parse_args(argv)
    t0 = time.time()
    sim = simulate(a.runs, a.topics, a.depth, seed=a.seed)
    full = sim.pool(a.pool, runs=list(sim.run_meta["run"]))
    base = system_means(full, sim.runs)
    rng = np.random.default_rng(a.seed)
    taus = {j: [] for j in LEVELS}
    for j in LEVELS:
        for _ in range(a.reps):
            red = system_means(reduce_qrels(full, j, rng), sim.runs)
            taus[j].append([kendalltau(base[m], red[m]).statistic for m in MEASURES])
    out = pd.DataFrame({f"{j}%": np.mean(taus[j], axis=0) for j in LEVELS}, index=list(MEASURES))
    out.index.name = "measure"
    rel = (full["grade"] > 0).groupby(full["topic"]).sum()
    print(f"simulated campaign: {a.runs} runs x {a.topics} topics, depth {a.depth}; full judgments = depth-{a.pool} "
          f"pool ({len(full) / a.topics:.0f} docs/topic, {rel.mean():.1f} relevant/topic); "
          f"Kendall tau vs full judgments, mean of {a.reps} reductions; {time.time() - t0:.0f} s")
    print(out.to_markdown(floatfmt=".3f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
