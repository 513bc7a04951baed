"""Does the planner's predicted Kendall tau hold when a design is actually run? (issue 6 report)

A simulated campaign with many topics is split: 50 topics (judged to pool depth 50) are the data the
planner sees; the other topics play the future. For each design (Q topics x j judgments per topic) the
planner predicts tau's mean and 5-95% range from the 50 topics; we then draw Q fresh topics many times,
judge j documents each (pool order), and measure tau against the ranking on all held-out topics.

    python benchmarks/planner_validation.py [--topics 250] [--runs 30] [--trials 200] [--seed 11]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.stability.correlation import kendall_tau  # noqa: E402
from engine.planning.cost import CostModel  # noqa: E402
from engine.planning.planner import plan, predict_tau, reduce_judgments, score_matrix  # noqa: E402
from engine.simulation.campaigns import simulate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=250)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seen", type=int, default=50, help="topics the planner sees")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    t0 = time.perf_counter()
    sim = simulate(n_runs=args.runs, n_topics=args.topics, depth=200, seed=args.seed)
    pool = sim.pool(depth=50)
    topics = sorted(pool["topic"].unique())
    seen = set(topics[: args.seen])
    held = [t for t in topics if t not in seen]
    runs_seen = sim.runs[sim.runs["topic"].isin(seen)]
    runs_held = sim.runs[sim.runs["topic"].isin(set(held))]
    pool_seen = pool[pool["topic"].isin(seen)]
    pool_held = pool[pool["topic"].isin(set(held))]
    model = CostModel(by_target=False)
    js = (8, 16, 32, 64)
    res = plan(pool_seen, runs_seen, js=js, trials=args.trials, seed=args.seed, model=model)
    base_held = score_matrix(pool_held, runs_held, "map")
    truth_rank = base_held.mean(axis=0)
    rng = np.random.default_rng(args.seed + 1)
    designs = [(10, 64), (25, 16), (25, 32), (50, 8), (50, 32), (100, 16), (150, 8)]
    print(f"{args.runs} runs; planner sees {args.seen} topics, {len(held)} held out; {args.trials} trials per design")
    print()
    print("| design (Q x j) | hours | predicted tau (mean, sd) | predicted 5-95% | observed tau (mean, sd) | observed mean inside predicted range |")
    print("|---|---:|---|---|---|---|")
    inside = 0
    mats = {}
    for q, j in designs:
        if j not in mats:
            red = reduce_judgments(pool_held, runs_held, j)
            mats[j] = score_matrix(red, runs_held, "map").reindex(index=base_held.index,
                                                                  columns=base_held.columns).fillna(0.0).to_numpy()
        m = mats[j]
        keys = rng.random((args.trials, m.shape[0]))
        idx = np.argpartition(keys, q - 1, axis=1)[:, :q]
        obs = kendall_tau(m[idx].mean(axis=1), truth_rank.to_numpy())
        mean, sd = predict_tau(res, q, j)
        lo, hi = mean - 1.645 * sd, min(mean + 1.645 * sd, 1.0)
        ok = lo <= obs.mean() <= hi
        inside += ok
        print(f"| {q} x {j} | {model.design_hours(q, j):.1f} | {mean:.3f}, {sd:.3f} | [{lo:.3f}, {hi:.3f}] | "
              f"{obs.mean():.3f}, {obs.std(ddof=1):.3f} | {'yes' if ok else 'NO'} |")
    print()
    print(f"{inside} of {len(designs)} designs: observed mean tau inside the predicted 5-95% range "
          f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
