"""Speed of the stability analyses on a 200 systems x 1000 topics score matrix (printed, not asserted).

    python3 benchmarks/stability_speed.py [--systems 200] [--topics 1000]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.stability import d_study, g_study, topics_needed  # noqa: E402
from engine.stability.discrim import discriminative_power  # noqa: E402
from engine.stability.significance import pairwise  # noqa: E402
from engine.stability.stratified import multivariate_g_study, stability_by_share  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--systems", type=int, default=200)
    ap.add_argument("--topics", type=int, default=1000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    ns, nt = a.systems, a.topics
    x = np.clip(0.3 + rng.normal(0, 0.05, ns)[None, :] + rng.normal(0, 0.15, nt)[:, None]
                + rng.normal(0, 0.12, (nt, ns)), 0, 1)
    df = pd.DataFrame(x, index=[str(i) for i in range(nt)], columns=[f"s{j}" for j in range(ns)])
    pairs = ns * (ns - 1) // 2
    rows = []

    def timed(name, fn):
        t = time.perf_counter()
        fn()
        rows.append((name, time.perf_counter() - t))

    timed("G-study + D-study + topics needed", lambda: (d_study(g_study(df), np.arange(1, 2001)),
                                                        topics_needed(g_study(df), 0.95)))
    timed("stratified (4 classes) + share curve", lambda: stability_by_share(
        multivariate_g_study(df, [f"c{i % 4}" for i in range(nt)]), "c0"))
    timed(f"paired bootstrap, B = 1000, {pairs} pairs", lambda: discriminative_power(df, n_bootstrap=1000))
    timed(f"t-test + Wilcoxon + Holm + Tukey, {pairs} pairs", lambda: pairwise(df, ("t", "wilcoxon")))
    timed(f"randomization test, 1000 permutations, {pairs} pairs",
          lambda: pairwise(df, ("randomization",), n_perm=1000))
    print(f"{ns} systems x {nt} topics")
    print("| analysis | seconds |\n|---|---:|")
    for name, s in rows:
        print(f"| {name} | {s:.2f} |")


if __name__ == "__main__":
    main()
