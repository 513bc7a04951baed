"""Bias of infAP, xinfAP and statAP and coverage of the 95% intervals of mean infAP, measured against a
simulated campaign's truth (issue 3; thesis Figures 3.1-3.2 style).

    python3 benchmarks/estimators.py [--runs 20] [--topics 50] [--trials 400] [--rates 0.2,0.4] [--min-rel 40]

Designs per trial (all `rate` of the depth-100 pool, per topic): infAP -- simple random sample;
xinfAP -- strata by the best rank a document reached (1-5 fully judged; 6-20, 21-50, 51-100 at
rates in the ratio 3 : 1.5 : 1, thesis 3.1.5); statAP -- Poisson sample, probability proportional to AP-prior weight + uniform share.
True AP = AP with the whole depth-100 pool judged. Prints per-run and summary tables (markdown).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.estimators.experiment import run_experiment  # noqa: E402
from engine.simulate import simulate  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--rates", default="0.2,0.4")
    ap.add_argument("--min-rel", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-run", action="store_true", help="also print the per-run table")
    a = ap.parse_args(argv)
    t0 = time.time()
    sim = simulate(a.runs, a.topics, 100, seed=a.seed)
    rows = []
    for rate in [float(x) for x in a.rates.split(",")]:
        for vm in ("appendix", "dependent", "linear"):
            res = run_experiment(sim, n_trials=a.trials, rate=rate, min_rel=a.min_rel, seed=a.seed,
                                 var_method=vm)
            t = res.table()
            if vm == "linear" and a.per_run:
                print(f"\nrate {rate}: per run (linearized infAP variance)\n")
                print(t.round(4).to_markdown(index=False))
            rows.append({
                "rate": rate, "infAP var": vm,
                "topics": res.n_topics, "pool/topic": round(res.pool_per_topic), "rel/topic": round(res.rel_per_topic),
                "statAP max|bias|": t["statAP_bias"].abs().max(), "xinfAP max|bias|": t["xinfAP_bias"].abs().max(),
                "xinfAP mean bias": t["xinfAP_bias"].mean(), "infAP mean bias": t["infAP_bias"].mean(),
                "infAP CI coverage min": t["infAP_coverage"].min(), "max": t["infAP_coverage"].max(),
                "se est / sd": (t["infAP_se_est"] / t["infAP_sd"]).mean(),
            })
    print(f"simulated: {a.runs} runs x {a.topics} topics (kept: >= {a.min_rel} relevant in the pool), "
          f"{a.trials} trials per rate; {time.time() - t0:.0f} s")
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".4f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
