"""Measured agreement of simulated judges against the value their confusion matrix implies (issue 17).

    python3 benchmarks/agreement_judges.py [--runs 20] [--topics 30] [--pool-depth 30] [--seed 7]
                                           [--errors 0.1,0.3] [--measure map]

For each judge (lenient, strict, noisy) and error rate, a simulated campaign's depth-k pool (judged
from the truth: the official source) is judged again by the simulated judge. The table gives, on the
graded scale (unweighted and quadratic kappa) and binarized at the campaign threshold, the measured
kappa, the kappa the matrix implies for the pool's true-grade shares, the sampling error (standard
deviation of kappa over multinomial samples of the pool's size from the implied joint table) and
z = (measured - implied) / error; then Kendall tau and tau_ap between the leaderboards (`--measure`)
under the official judgments and under the judge's. Markdown on stdout (docs/judgment-sources.md).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=30)
    ap.add_argument("--depth", type=int, default=200)
    ap.add_argument("--pool-depth", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--errors", default="0.1,0.3")
    ap.add_argument("--measure", default="map")
    a = ap.parse_args()

    from engine.judgments.agreement import label_agreement, leaderboard_agreement, mean_scores
    from engine.campaign.campaign import load_campaign
    from engine.judgments.simulated import (JUDGE_KINDS, binary_matrix, implied_kappa, kappa_sampling_error,
        write_judge_source)
    from engine.simulation.campaigns import depth_pool, simulate, write_campaign
    from engine.judgments.sources import source_judgments

    t0 = time.perf_counter()
    sim = simulate(a.runs, a.topics, a.depth, a.seed)
    tmp = Path(tempfile.mkdtemp(prefix="cranfield-agree-"))
    write_campaign(sim, tmp / "c", pool_depth=a.pool_depth)
    camp = load_campaign(tmp / "c")
    grades = sorted(camp.scale())
    thr_i = grades.index(camp.binary_threshold())
    pool = depth_pool(sim, a.pool_depth)
    share = np.array([(pool["grade"] == g).mean() for g in grades])
    n = len(pool)
    official = source_judgments(camp, "official")
    runs = camp.runs()
    opt = camp.eval_options()
    s_off = mean_scores(official, runs, a.measure, opt, camp.gains())
    print(f"Simulated campaign: {a.runs} runs, {a.topics} topics, seed {a.seed}; depth-{a.pool_depth} pool of "
          f"{n} documents, true grade shares " + ", ".join(f"{g}: {s:.3f}" for g, s in zip(grades, share)) + "\n")
    print("| judge | error | kappa | implied | error (sd) | z | quadratic kappa | implied | sd | z | "
          "binary kappa | implied | sd | z | tau | tau_ap |")
    print("|---|---|" + "---|" * 14)
    for i, kind in enumerate(JUDGE_KINDS):
        for err in [float(x) for x in a.errors.split(",")]:
            name = write_judge_source(camp.root, pool, grades, kind, err, a.seed + 100 * i + int(err * 1000),
                                      name=f"judge-{kind}-{err}")
            from engine.judgments.simulated import judge_matrix
            m = judge_matrix(kind, len(grades), err)
            la = label_agreement(official, source_judgments(camp, name), ("official", name), grades,
                                 camp.binary_threshold())
            cells = []
            for w, key in (("unweighted", "kappa_unweighted"), ("quadratic", "kappa_quadratic")):
                imp = implied_kappa(m, share, w)
                sd = kappa_sampling_error(m, share, n, w, draws=1000, seed=1)
                got = la.graded[key]
                cells += [got, imp, sd, (got - imp) / sd]
            bm, bs = binary_matrix(m, share, thr_i)
            imp = implied_kappa(bm, bs)
            sd = kappa_sampling_error(bm, bs, n, draws=1000, seed=1)
            got = la.binary["kappa_unweighted"]
            cells += [got, imp, sd, (got - imp) / sd]
            sa = leaderboard_agreement(s_off, mean_scores(source_judgments(camp, name), runs, a.measure, opt,
                                                          camp.gains()), ("official", name), a.measure)
            print(f"| {kind} | {err} | " + " | ".join(
                f"{c:+.2f}" if j % 4 == 3 else f"{c:.3f}" for j, c in enumerate(cells))
                  + f" | {sa.tau:.3f} | {sa.tau_ap:.3f} |")
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
