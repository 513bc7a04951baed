"""Bias of infAP, xinfAP and statAP and coverage of the 95% intervals of mean infAP, measured against a
simulated campaign's truth (issue 3; thesis Figures 3.1-3.2 style).

    python3 benchmarks/estimators.py [--runs 20] [--topics 50] [--trials 200] [--rates 0.1,0.2,0.3]
                                     [--min-rel 40] [--precision default|trec] [--per-run]

Designs per trial, each `rate` of the depth-100 pool per topic (engine.planning.estimator_experiments):
infAP -- simple random sample (thesis Figures 3.1-3.2); xinfAP -- the campaign stratified design of
engine.pooling (stratum 1 = largest depth-k pool within half the budget, fully judged; three equal
strata sharing the rest 3 : 1.5 : 1) and, for comparison, fixed best-rank strata 1-5 (full) / 6-20 /
21-50 / 51-100 at 3 : 1.5 : 1, and the TREC Terabyte 2006 design of thesis 3.1.3 (depth-k pool within
half the budget fully judged + a simple random sample of the rest making up the budget); statAP --
Poisson sample, probability proportional to the AP prior plus a uniform share. True AP = AP with the
whole depth-100 pool judged. Intervals of mean infAP: every variance of VAR_METHODS around mean infAP,
and the jackknife interval around mean infAP minus its jackknife bias estimate ("bias-corrected").
"oracle prior" rows are a diagnostic, not an estimator: xinfAP with the true precision in place of
sample_eval.pl's fixed 1/3 where a stratum has nothing sampled above a relevant document.

`--precision trec` lowers the simulator's relevance-signal weight (engine.simulation.campaigns.MODEL["base_b"]
2.2 -> 0.8) so that the runs' precision looks like TREC 8 ad hoc (mean P@10 ~0.45, MAP ~0.18 instead
of ~0.82 and ~0.37 on the kept topics); everything else is unchanged.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.simulation.campaigns as simulate_mod
from engine.planning.estimator_experiments import VAR_METHODS, prepare, run_experiment  # noqa: E402
from engine.estimators import trials  # noqa: E402

PRECISION = {"default": None, "trec": 0.8}


def make_sim(runs: int, topics: int, seed: int, precision: str):
    old = dict(simulate_mod.MODEL)
    if PRECISION[precision] is not None:
        simulate_mod.MODEL["base_b"] = PRECISION[precision]
    try:
        return simulate_mod.simulate(runs, topics, 100, seed=seed)
    finally:
        simulate_mod.MODEL.clear()
        simulate_mod.MODEL.update(old)


def describe(sim, min_rel: int) -> str:
    from engine.measures.m_map import map_
    pool, runs = prepare(sim, 100, min_rel)
    base = trials.base_ranked(pool[["topic", "doc", "grade"]], runs)
    p10 = base.at_rank(base.cum_rel, 10) / 10
    return (f"{len(base.topic_names)} topics kept, {len(pool) / len(base.topic_names):.0f} pool documents and "
            f"{(pool['grade'] > 0).sum() / len(base.topic_names):.1f} relevant per topic; runs' mean P@10 "
            f"{p10.mean():.2f}, true MAP {map_(base, ()).mean():.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--rates", default="0.1,0.2,0.3")
    ap.add_argument("--min-rel", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--precision", choices=sorted(PRECISION), default="default")
    ap.add_argument("--per-run", action="store_true", help="also print the per-run tables")
    a = ap.parse_args(argv)
    t0 = time.time()
    sim = make_sim(a.runs, a.topics, a.seed, a.precision)
    head = describe(sim, a.min_rel)
    bias_rows, cov_rows = [], []
    for rate in [float(x) for x in a.rates.split(",")]:
        res = run_experiment(sim, n_trials=a.trials, rate=rate, min_rel=a.min_rel, seed=a.seed,
                             xinf_design="campaign", xinf_priors=("thesis",), var_method="jackknife",
                             var_methods=list(VAR_METHODS) + ["jackknife_bc"], xinf_oracle=True)
        alt = run_experiment(sim, n_trials=a.trials, rate=rate, min_rel=a.min_rel, seed=a.seed + 1,
                             xinf_design="ranks", var_methods=("appendix",))
        tb = run_experiment(sim, n_trials=a.trials, rate=rate, min_rel=a.min_rel, seed=a.seed + 2,
                            xinf_design="terabyte", var_methods=(), xinf_oracle=True)
        t, ta, ttb = res.table(), alt.table(), tb.table()
        if a.per_run:
            print(f"\nrate {rate}: per run\n")
            cols = ["run", "true_MAP", "infAP_bias", "infAP_bc_bias", "xinfAP_bias", "xinfAP_thesis_bias",
                    "statAP_bias"] + [f"infAP_coverage_{m}" for m in list(VAR_METHODS) + ["jackknife_bc"]]
            pr = t[cols].copy()
            pr.insert(5, "xinfAP_terabyte_bias", ttb["xinfAP_bias"])
            pr.insert(1, "type", sim.run_meta.set_index("run").loc[pr["run"], "type"].to_numpy())
            print(pr.round(4).to_markdown(index=False))
        se3 = lambda tt, k: float((3 * tt[f"{k}_sd"] / np.sqrt(a.trials)).max())  # noqa: E731
        for name, tt, k in (("statAP", t, "statAP"), ("xinfAP campaign", t, "xinfAP"),
                            ("xinfAP terabyte (depth-k + random)", ttb, "xinfAP"),
                            ("xinfAP campaign, oracle prior (diagnostic)", t, "xinfAP_oracle"),
                            ("xinfAP terabyte, oracle prior (diagnostic)", ttb, "xinfAP_oracle"),
                            ("xinfAP campaign, 2-eps prior", t, "xinfAP_thesis"),
                            ("xinfAP ranks 1-5/6-20/21-50/51-100", ta, "xinfAP"), ("infAP", t, "infAP"),
                            ("infAP - jackknife bias", t, "infAP_bc")):
            b = tt[f"{k}_bias"]
            bias_rows.append({"rate": rate, "estimator / design": name, "mean bias": b.mean(),
                              "min bias": b.min(), "max bias": b.max(),
                              "systems within 0.005": f"{int((b.abs() <= 0.005).sum())}/{len(b)}",
                              "3 se of a mean": se3(tt, k)})
        for m in list(VAR_METHODS) + ["jackknife_bc"]:
            c = t[f"infAP_coverage_{m}"]
            sd = t["infAP_bc_sd"] if m == "jackknife_bc" else t["infAP_sd"]
            cov_rows.append({"rate": rate, "infAP interval": m if m != "jackknife_bc" else
                             "jackknife, bias-corrected centre", "coverage min": c.min(), "median": c.median(),
                             "max": c.max(), "pooled": float(res.covered_by[m].mean()),
                             "systems in 90-99%": f"{int(c.between(0.9, 0.99).sum())}/{len(c)}",
                             "est. se / observed sd": float((t[f"infAP_se_est_{m}"] / sd).mean())})
        # coverage of E[infAP] (the interval's own target once the bias is taken out)
        z = 1.959964
        ctr = np.abs(res.estimates["infAP"] - res.estimates["infAP"].mean(axis=0)) <= z * res.se_by["jackknife"]
        cov_rows.append({"rate": rate, "infAP interval": "jackknife, around E[infAP]",
                         "coverage min": ctr.mean(0).min(), "median": float(np.median(ctr.mean(0))),
                         "max": ctr.mean(0).max(), "pooled": float(ctr.mean()),
                         "systems in 90-99%": f"{int(((ctr.mean(0) >= 0.9) & (ctr.mean(0) <= 0.99)).sum())}/{len(c)}",
                         "est. se / observed sd": np.nan})
        strata, strata_tb = res.strata.round(3), tb.strata.round(3)
    print(f"simulated ({a.precision} precision): {a.runs} runs x {a.topics} topics, seed {a.seed}; {head}; "
          f"{a.trials} trials per rate; {time.time() - t0:.0f} s\n")
    print("Bias of the mean estimate over trials (estimate - true MAP, per system):\n")
    print(pd.DataFrame(bias_rows).to_markdown(index=False, floatfmt=".4f"))
    print("\n95% intervals of mean infAP (sum of per-topic variances / T^2) covering true MAP, per system "
          "(pooled = over all systems and trials):\n")
    print(pd.DataFrame(cov_rows).to_markdown(index=False, floatfmt=".3f"))
    print("\nxinfAP campaign strata at the last rate (mean per topic):\n")
    print(strata.to_markdown(index=False))
    print("\nxinfAP terabyte strata at the last rate (mean per topic):\n")
    print(strata_tb.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
