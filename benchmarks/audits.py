"""Judge audits against known truth (issue 38): canary false-positive rates and the crafted run.

    python3 benchmarks/audits.py [--world 2000] [--runs 12] [--topics 50] [--canaries 6] [--campaigns 1000]
                                 [--crafted-rate 0.8] [--seed 5]

A simulated world of `--world` topics (engine.simulation, no manual runs) is the topic population; its
depth-20 pool of every run, judged from the truth, is what people say. A simulated model judge labels the
same pool with a set error structure (uniform noise, grade bias up / down, bias toward the documents of the
second and third weakest runs), and on top of it a crafted run (`--crafted`: the weakest run, default, or the run of median quality) inflates itself: each of its
top-20 documents the judge would call non-relevant is judged relevant with probability `--crafted-rate`
(engine.judgments.simulated.apply_crafted_run). Canaries (engine.judgments.canaries.make_canaries,
`--canaries` per topic, kinds in turn) are judged with set false-positive rates per kind
(engine.judgments.simulated.judge_canaries).

Each of `--campaigns` campaigns draws `--topics` topics from the world; people judged all of them. Per
campaign: the audit's rates with 95% Wilson intervals (engine.judgments.audit.rate_rows) and the run gaps
with their 2-SD flags and tau (engine.judgments.audit.gap_table), the code `cranfield judgments audit`
runs. Printed: per structure and kind, the set rate beside the mean detected rate and the share of
campaigns whose interval holds the set rate; per structure and measure, the share of campaigns flagging
the crafted run, the share of other runs flagged, and tau with and without the flagged runs.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

MEASURES = ["map", "P.10"]
RATES = {"stuffing": 0.3, "instruction": 0.6, "foreign": 0.05}


def matrices(qrels, runs, topics, names):
    """{measure: topics x runs} per-topic values of MEASURES (benchmarks/ppi.py's)."""
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ppi import matrices as ppi_matrices
    return ppi_matrices(qrels, runs, topics, names, MEASURES)


def structures(pool, sim, grades, seed):
    """(name, model labels of the pool before the crafted run) for every judge error structure."""
    from engine.judgments.simulated import apply_judge, apply_run_bias, judge_matrix
    k = len(grades)
    weakest = sim.run_meta.sort_values("quality", kind="mergesort")["run"].tolist()[1:3]   # not the crafted one
    return [
        ("uniform noise 0.1", apply_judge(pool, judge_matrix("noisy", k, 0.1), grades, seed + 1)),
        ("grade bias up 0.2", apply_judge(pool, judge_matrix("lenient", k, 0.2), grades, seed + 2)),
        ("grade bias down 0.2", apply_judge(pool, judge_matrix("strict", k, 0.2), grades, seed + 3)),
        (f"run bias 0.5 ({', '.join(weakest)})",
         apply_run_bias(pool, sim.runs, weakest, grades, 0.5, depth=20, base=judge_matrix("noisy", k, 0.05),
                        seed=seed + 4)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--canaries", type=int, default=6)
    ap.add_argument("--campaigns", type=int, default=1000)
    ap.add_argument("--crafted-rate", type=float, default=0.8)
    ap.add_argument("--crafted", choices=["weakest", "median"], default="weakest",
                    help="which run is crafted: the weakest (as in Clarke & Dietz: a weak run topping the model's "
                         "ranking) or the run of median quality (whose group siblings share its documents)")
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    t0, c0 = time.time(), time.process_time()
    from engine.judgments.audit import gap_table, rate_rows
    from engine.judgments.canaries import KINDS, make_canaries
    from engine.judgments.simulated import apply_crafted_run, judge_canaries
    from engine.simulation.campaigns import depth_pool, simulate
    grades, rel = [0, 1, 2], 1
    sim = simulate(a.runs, a.world, 100, a.seed, grades=grades, manual_fraction=0.0)
    names = sim.run_meta["run"].tolist()
    topics = sim.topics["topic"].tolist()
    by_q = sim.run_meta.sort_values("quality", kind="mergesort")["run"].tolist()
    crafted = by_q[0] if a.crafted == "weakest" else by_q[len(names) // 2]
    ci = names.index(crafted)
    pool = depth_pool(sim, 20, names)
    H = matrices(pool, sim.runs, topics, names)
    canaries = make_canaries(sim.topics, a.canaries, a.seed, taken=set(sim.truth["doc"].astype(str)))
    ctopic = canaries["topic"].to_numpy()
    rng = np.random.default_rng(a.seed)
    idx = np.argsort(rng.random((a.campaigns, a.world)), axis=1)[:, :a.topics]
    rate_out, gap_out = [], []
    for sname, labels in structures(pool, sim, grades, a.seed):
        labels = apply_crafted_run(labels, sim.runs, crafted, grades, rel, a.crafted_rate, 20, seed=a.seed + 9)
        F = matrices(labels, sim.runs, topics, names)
        rows = []
        for c in range(a.campaigns):
            chosen = set(np.asarray(topics, dtype=object)[idx[c]])
            cc = canaries[np.isin(ctopic, list(chosen))]
            lab = judge_canaries(cc, RATES, grades, rel, seed=(a.seed + len(rate_out)) * 100003 + c)
            rows += rate_rows(cc, lab, rel, 0.05, sname)
        r = pd.DataFrame(rows)
        for kind in KINDS:
            g = r[r["kind"] == kind]
            rate_out.append({"judge": sname, "kind": kind, "set": RATES[kind], "detected": g["rate"].mean(),
                             "sd": g["rate"].std(ddof=1), "covered": ((g["lower"] <= RATES[kind])
                                                                      & (RATES[kind] <= g["upper"])).mean(),
                             "canaries": g["judged"].mean()})
        for m in H:
            flags, others, tau_a, tau_u = [], [], [], []
            for c in range(a.campaigns):
                sel = idx[c]
                df, tau = gap_table(H[m][sel], F[m][sel], np.ones(len(sel), bool), names)
                f = df["flagged"].to_numpy()
                flags.append(f[ci])
                others.append(np.delete(f, ci).mean())
                tau_a.append(tau["tau_all"])
                tau_u.append(tau["tau_unflagged"])
            gap_out.append({"judge": sname, "measure": m, "crafted_flagged": np.mean(flags),
                            "others_flagged": np.mean(others), "tau_all": np.nanmean(tau_a),
                            "tau_unflagged": np.nanmean(tau_u)})
    elapsed, cpu = time.time() - t0, time.process_time() - c0
    load = os.getloadavg()
    print(f"World: {a.world} topics, {a.runs} runs, depth-20 pool of every run, seed {a.seed}; {a.campaigns} "
          f"campaigns of {a.topics} topics, {a.canaries} canaries per topic; crafted run {crafted} ({a.crafted} quality) "
          f"at rate {a.crafted_rate:g}. Machine: {os.cpu_count()} cores, load {load[0]:.1f} / {load[1]:.1f}; "
          f"{elapsed:.1f} s wall, {cpu:.1f} s CPU.\n")
    print("| judge | canary kind | set rate | detected (mean) | sd over campaigns | 95% Wilson interval holds "
          "the set rate | canaries judged per campaign |")
    print("|---|---|---|---|---|---|---|")
    for r in rate_out:
        print(f"| {r['judge']} | {r['kind']} | {r['set']:.3f} | {r['detected']:.3f} | {r['sd']:.3f} | "
              f"{r['covered']:.3f} | {r['canaries']:.0f} |")
    print("\n| judge | measure | crafted run flagged | other runs flagged | tau (all runs) | tau (unflagged) |")
    print("|---|---|---|---|---|---|")
    for r in gap_out:
        print(f"| {r['judge']} | {r['measure']} | {r['crafted_flagged']:.3f} | {r['others_flagged']:.3f} | "
              f"{r['tau_all']:.3f} | {r['tau_unflagged']:.3f} |")


if __name__ == "__main__":
    main()
