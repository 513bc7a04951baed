"""Reduction and pool-bias experiments on a simulated campaign with a manual-run bias, checked
against the qualitative findings of the papers:

1. Judgment reduction (sakai-2007 section 6, Buckley-Voorhees rates; he-macdonald-ounis-2008 uniform
   removal at 16 levels): the ranking by AP degrades fastest among AP, Q, nDCG, bpref, infAP and AP on
   condensed lists (Kendall's tau against the full judgments, averaged over the levels).
2. Leave-manual-out (buttcher-et-al-2007 Table 3): AP and P@20 move manual runs down; bpref moves them up.
3. Leave-one-group-out (buttcher Table 2) for reference.

The full judgments are the depth-100 (reduction) and depth-50 (pool bias) pools of the pooled runs,
judged from the simulator's truth. Prints markdown tables (docs/stability.md has a copy).

    python3 benchmarks/stability_findings.py [--seed 1] [--bv-trials 5] [--he-trials 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.measures import load_all  # noqa: E402
from engine.simulation.campaigns import simulate  # noqa: E402
from engine.stability.poolbias import leave_group_out, leave_manual_out  # noqa: E402
from engine.stability.reduction import reduction_experiment, summarize_reduction  # noqa: E402
from engine.stability.rejudge import Rejudger  # noqa: E402

REDUCTION = ["map", "Q", "ndcg", "bpref", "infAP", "map@cond", "P.10"]
BIAS = ["map", "P.20", "ndcg_cut.20", "bpref", "RankEff", "infAP", "map@cond"]
PAPER_SET = ["map", "Q", "ndcg", "bpref", "infAP", "map@cond"]   # the measures the papers compare AP with


def available(names: list[str]) -> list[str]:
    reg = load_all()
    out = []
    for n in names:
        base = n.split("@")[0].split(".")[0]
        if base in reg:
            out.append(n)
        else:
            print(f"note: measure {n} is not available; left out", file=sys.stderr)
    return out


def md(df: pd.DataFrame, fmt: str = "{:.3f}") -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in df.itertuples(index=False):
        cells = [fmt.format(v) if isinstance(v, (float, np.floating)) else str(v) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--bv-trials", type=int, default=5)
    ap.add_argument("--he-trials", type=int, default=3)
    a = ap.parse_args()
    t0 = time.perf_counter()
    sim = simulate(a.runs, a.topics, 1000, seed=a.seed)
    meta = sim.run_meta
    print(f"simulated campaign: {a.runs} runs ({int((meta['type'] == 'manual').sum())} manual, "
          f"{int(meta['pooled'].sum())} pooled) x {a.topics} topics, depth 1000, seed {a.seed}\n")

    # ---------------------------------------------------------------- reduction
    red = available(REDUCTION)
    q100 = sim.pool(100)
    rj = Rejudger(q100, sim.runs, red)
    names = rj.names
    paper = [n for n in names if n.replace(".", "_") in [p.replace(".", "_") for p in PAPER_SET]]
    for method, trials in (("bv", a.bv_trials), ("uniform", a.he_trials)):
        df = reduction_experiment(None, None, None, method=method, trials=trials, seed=a.seed, rejudger=rj)
        tau = summarize_reduction(df, "tau")
        title = ("Buckley-Voorhees reduction (sakai-2007 s.5)" if method == "bv"
                 else "uniform removal at the 16 levels of he-macdonald-ounis-2008")
        print(f"### {title}: Kendall tau vs full judgments (mean of {trials} trials)\n")
        t = tau.reset_index().rename(columns={"level": "% kept"})
        t["% kept"] = t["% kept"].map(lambda v: f"{v:g}")
        print(md(t, "{:.3f}"))
        drift = summarize_reduction(df, "drift")
        print("\nmean score drift (new - full) at the lowest level: "
              + ", ".join(f"{c} {drift[c].iloc[-1]:+.3f}" for c in drift.columns))
        mean_tau = tau[paper].mean().sort_values()
        print("\nmean tau over levels (AP and the measures the papers compare it with): "
              + ", ".join(f"{k} {v:.3f}" for k, v in mean_tau.items()))
        print(f"finding 'AP degrades fastest': {'REPRODUCED' if mean_tau.index[0] == 'map' else 'NOT reproduced'}"
              f" (fastest: {mean_tau.index[0]})\n")

    # ---------------------------------------------------------------- pool bias
    bias = available(BIAS)
    q50 = sim.pool(50)
    rjb = Rejudger(q50, sim.runs, bias)
    summ, det = leave_manual_out(None, sim.runs, meta, bias, depth=50, rejudger=rjb)
    print(f"### leave manual runs out (buttcher Table 3 layout), depth-50 pool, "
          f"{int(summ['removed'].iloc[0])} of {len(q50)} judgments removed\n")
    cols = ["measure", "mean_abs_rank_change", "mean_rank_change", "max_up", "max_down", "rms",
            "mean_score_change", "share_significant", "tau_all", "tau_left_out"]
    print(md(summ[cols]))
    d = dict(zip(summ["measure"], summ["mean_rank_change"]))
    checks = [("AP moves manual runs down", d.get("map", 0) > 0),
              ("P@20 moves manual runs down", d.get("P_20", 0) > 0),
              ("bpref moves manual runs up", d.get("bpref", 0) < 0)]
    for text, ok in checks:
        print(f"finding '{text}': {'REPRODUCED' if ok else 'NOT reproduced'}")
    print("(mean_rank_change > 0: the manual runs moved down the ranking)\n")
    summ_g, _ = leave_group_out(None, sim.runs, meta, bias, depth=50, rejudger=rjb)
    print("### leave one group out (buttcher Table 2 layout), depth-50 pool\n")
    print(md(summ_g[["measure", "mean_abs_rank_change", "mean_rank_change", "max_up", "max_down", "rms",
                     "share_significant"]]))

    # ---------------------------------------------------------------- stability-optimal nDCG
    from engine.stability.optimal_ndcg import compare, grade_ranks
    gr_all = grade_ranks(sim.truth, sim.runs, 100)
    rows_d, rows_g = [], []
    for k in (10, 20, 100):
        res = compare(gr_all.truncate(k))
        td = res["discount_table"].set_index("function")["topics_needed"]
        tg = res["gain_table"].set_index("function")["topics_needed"]
        rows_d.append({"nDCG@": k, **{c: int(td[c]) for c in ("zipf", "linear", "log", "optimal")}})
        rows_g.append({"nDCG@": k, **{c: int(tg[c]) for c in ("exp", "linear", "optimal")},
                       "optimal hrel/rel gain": res["gain_ratios"][0] if res["gain_ratios"] else float("nan")})
    print("\n### stability-optimal nDCG on the complete truth (thesis Tables 5.1 / 5.3 layout): "
          "topics needed for Phi >= 0.95\n")
    print("discounts (linear gains):\n")
    print(md(pd.DataFrame(rows_d)))
    print("\ngains (log discount):\n")
    print(md(pd.DataFrame(rows_g), "{:.2f}"))
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
