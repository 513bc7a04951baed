"""Prediction-powered intervals against known truth (issue 38): coverage, width and the planner.

    python3 benchmarks/ppi.py [--world 2000] [--runs 8] [--topics 150] [--labelled 40] [--campaigns 1000]
                              [--pilot 30] [--seed 11]

A simulated world of `--world` topics (engine.simulation: runs, complete truth) is the topic population:
its depth-20 pool of every run, judged from the truth, is what people would say; the same pool judged by a
simulated model judge with a set error structure is what the model says. Judge error structures:
uniform noise (any other grade), grade bias up (lenient) and down (strict), and bias toward two runs'
documents (lenient on what they retrieved, slight noise elsewhere). The true value of a run's mean (a
pair's difference) is its mean over the world's topics under the truth.

Each of `--campaigns` campaigns draws `--topics` topics from the world (without replacement); the model
judges all of them, people `--labelled` of them (a random sample). Per campaign, run and pair: the PPI++
interval (tuned lambda), classical PPI (lambda 1) and the human-only interval at 95%, in the small-sample
form (the default), and PPI++ in ppi-python's normal form beside. The tables give
coverage (share of intervals holding the true value), mean width and the PPI / human-only width ratio
beside the judge's kappa with the truth. Planner: from pilots of `--pilot` human-judged topics (the first
200 campaigns), the human-judged topics predicted for a width w, against the number found empirically
(where the mean width over the campaigns first reaches w, interpolated); w is the width each run's (pair's)
PPI++ interval has at PLAN_AT (40) human-judged topics. Markdown on stdout (docs/llm-judges.md). All arithmetic is
vectorized over campaigns.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np

MEASURES = ["map", "P.10", "ndcg_cut.10"]
PLAN_AT = 40
"""The planner's target width w: each run's (pair's) mean PPI++ width at this many human-judged topics."""


def structures(pool, sim, grades, seed):
    """(name, model labels of the pool) for every judge error structure."""
    from engine.judgments.simulated import apply_judge, apply_run_bias, judge_matrix
    k = len(grades)
    q = sim.run_meta.sort_values("quality")["run"].tolist()
    fav = q[:2]                           # the two weakest runs are favoured: the bias can reorder them
    return [
        ("uniform noise 0.2", apply_judge(pool, judge_matrix("noisy", k, 0.2), grades, seed + 1)),
        ("uniform noise 0.5", apply_judge(pool, judge_matrix("noisy", k, 0.5), grades, seed + 5)),
        ("grade bias up 0.3", apply_judge(pool, judge_matrix("lenient", k, 0.3), grades, seed + 2)),
        ("grade bias down 0.3", apply_judge(pool, judge_matrix("strict", k, 0.3), grades, seed + 3)),
        (f"run bias 0.5 ({', '.join(fav)})",
         apply_run_bias(pool, sim.runs, fav, grades, 0.5, depth=20, base=judge_matrix("noisy", k, 0.1), seed=seed + 4)),
    ]


def matrices(qrels, runs, topics, names, measures=None):
    """{measure: topics x runs} per-topic values (0 where a run has no result); `measures`: MEASURES."""
    from engine.evaluation.evaluate import compute, to_long
    df = to_long(compute(qrels, runs, measures or MEASURES))
    out = {}
    for m in df["measure"].cat.categories:
        p = df[df["measure"] == m].pivot_table(index="topic", columns="run", values="value", observed=True)
        p.columns = p.columns.astype(str)
        out[str(m)] = np.nan_to_num(p.reindex(index=topics, columns=names).to_numpy(float))
    return out


def kappa(pool, labels, grades):
    from engine.judgments.agreement import kappa_from_confusion
    idx = {g: i for i, g in enumerate(grades)}
    a = np.array([idx[g] for g in pool["grade"]])
    b = np.array([idx[g] for g in labels["grade"]])
    m = np.zeros((len(grades), len(grades)))
    np.add.at(m, (a, b), 1)
    return kappa_from_confusion(m)


def draw(Y, F, idx, n):
    """(y, f_lab, f_unl) as labelled x campaigns x columns arrays."""
    lab, unl = idx[:, :n], idx[:, n:]
    return (np.moveaxis(Y[lab], 1, 0), np.moveaxis(F[lab], 1, 0), np.moveaxis(F[unl], 1, 0))


def empirical_n(grid, mean_width, w):
    """Per column: where the mean width first reaches w (linear between grid points); NaN if never."""
    out = np.full(mean_width.shape[1], np.nan)
    for c in range(mean_width.shape[1]):
        mw = mean_width[:, c]
        hit = np.flatnonzero(mw <= w[c])
        if len(hit) and hit[0] > 0:
            i = hit[0]
            out[c] = grid[i - 1] + (mw[i - 1] - w[c]) / (mw[i - 1] - mw[i]) * (grid[i] - grid[i - 1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--topics", type=int, default=150)
    ap.add_argument("--labelled", type=int, default=40)
    ap.add_argument("--campaigns", type=int, default=1000)
    ap.add_argument("--pilot", type=int, default=30)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    t0, c0 = time.time(), time.process_time()
    from engine.simulation.campaigns import depth_pool, simulate
    from engine.stability.ppi import (
        pair_columns,
        pilot_stats,
        ppi_mean,
        topics_for_width,
    )
    grades = [0, 1, 2]
    sim = simulate(a.runs, a.world, 30, a.seed, grades=grades, manual_fraction=0.0)
    names = sim.run_meta["run"].tolist()
    topics = sim.topics["topic"].tolist()
    pool = depth_pool(sim, 20, names)
    Ys = matrices(pool, sim.runs, topics, names)
    t_sim = time.time() - t0
    rng = np.random.default_rng(a.seed)
    idx = np.argsort(rng.random((a.campaigns, a.world)), axis=1)[:, :a.topics]
    grid = np.arange(10, a.topics - 9, 3)
    cov_rows, plan_rows = [], []
    for sname, labels in structures(pool, sim, grades, a.seed):
        k = kappa(pool, labels, grades)
        Fs = matrices(labels, sim.runs, topics, names)
        for m in Ys:
            for target in ("means", "differences"):
                Y, F = Ys[m], Fs[m]
                if target == "differences":
                    Y, F = pair_columns(Y)[2], pair_columns(F)[2]
                truth = Y.mean(0)
                y, fl, fu = draw(Y, F, idx, a.labelled)
                row = {"judge": sname, "kappa": k, "measure": m, "target": target,
                       "corr": float(np.median([np.corrcoef(Y[:, c], F[:, c])[0, 1] for c in range(Y.shape[1])]))}
                for meth, lam, small_n in (("ppi++", None, True), ("ppi", 1.0, True), ("human", 0.0, True),
                                           ("ppi++ normal", None, False)):
                    iv = ppi_mean(y, fl, fu, 0.05, lam, small_n)
                    row[f"cover_{meth}"] = float(((iv.lower <= truth) & (truth <= iv.upper)).mean())
                    row[f"width_{meth}"] = float(iv.width.mean())
                row["model_bias"] = float(np.abs(F.mean(0) - truth).max())
                cov_rows.append(row)
                if m != "map":
                    continue
                # planner: empirical mean width by human-judged topics, against pilots' predictions
                mw = np.stack([ppi_mean(*draw(Y, F, idx, n), 0.05).width.mean(0) for n in grid])
                wt = mw[np.searchsorted(grid, PLAN_AT)]
                emp = empirical_n(grid, mw, wt)
                preds = []
                for c in range(min(200, a.campaigns)):
                    y0, f0, u0 = draw(Y, F, idx[c:c + 1], a.pilot)
                    p = pilot_stats(y0[:, 0], f0[:, 0], u0[:, 0])
                    preds.append(topics_for_width(p, wt, 0.05))
                preds = np.asarray(preds)
                exact = topics_for_width(replace(pilot_stats(Y, F, F[:0]), topics=a.topics), wt, 0.05)
                med = np.nanmean(preds, axis=0)
                rel = np.abs(med - emp) / emp
                within = np.nanmean(np.abs(preds - emp) / emp <= 0.10)
                plan_rows.append({"judge": sname, "measure": m, "target": target, "width": float(np.median(wt)),
                                  "empirical": float(np.nanmedian(emp)), "predicted": float(np.nanmedian(med)), "p10": float(np.nanmedian(np.nanpercentile(preds, 10, axis=0))),
                                  "p90": float(np.nanmedian(np.nanpercentile(preds, 90, axis=0))),
                                  "exact": float(np.nanmedian(exact)),
                                  "exact_err": float(np.nanmax(np.abs(exact - emp) / emp)),
                                  "max_rel_err": float(np.nanmax(rel)), "pilots_within_10%": float(within)})
    elapsed, cpu = time.time() - t0, time.process_time() - c0
    load = os.getloadavg()
    print(f"World: {a.world} topics, {a.runs} runs, depth 30, depth-20 pool of every run ({len(pool)} documents), "
          f"seed {a.seed}; {a.campaigns} campaigns of {a.topics} topics, {a.labelled} judged by people. "
          f"Machine: {os.cpu_count()} cores, load {load[0]:.1f} / {load[1]:.1f}; {elapsed:.1f} s wall "
          f"({t_sim:.1f} s simulating the world), {cpu:.1f} s CPU.\n")
    print("| judge | kappa | measure | target | corr | coverage PPI++ | PPI | human-only | PPI++ normal form | "
          "width PPI++ | PPI | human-only | PPI++ / human | max model bias |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in cov_rows:
        print(f"| {r['judge']} | {r['kappa']:.3f} | {r['measure']} | {r['target']} | {r['corr']:.3f} | "
              f"{r['cover_ppi++']:.3f} | {r['cover_ppi']:.3f} | {r['cover_human']:.3f} | {r['cover_ppi++ normal']:.3f} | "
              f"{r['width_ppi++']:.4f} | "
              f"{r['width_ppi']:.4f} | {r['width_human']:.4f} | {r['width_ppi++'] / r['width_human']:.3f} | "
              f"{r['model_bias']:.4f} |")
    print(f"\nPlanner (map; w = each run's / pair's PPI++ width at {PLAN_AT} human-judged topics, median shown; "
          f"pilots of {a.pilot} human-judged topics):\n")
    print("| judge | target | w (median) | empirical topics (median) | predicted, world variances | max rel. error | "
          "predicted, mean of pilots | max rel. error | one pilot: 10%-90% | pilots within 10% |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in plan_rows:
        print(f"| {r['judge']} | {r['target']} | {r['width']:.4f} | {r['empirical']:.1f} | {r['exact']:.1f} | "
              f"{r['exact_err']:.3f} | {r['predicted']:.1f} | {r['max_rel_err']:.3f} | {r['p10']:.0f}-{r['p90']:.0f} | "
              f"{r['pilots_within_10%']:.2f} |")
    worst = min(min(r["cover_ppi++"], r["cover_ppi"]) for r in cov_rows)
    ratio = max(r["width_ppi++"] / r["width_human"] for r in cov_rows if r["kappa"] >= 0.6)
    print(f"\nlowest coverage (PPI++ and PPI, every judge, measure, target): {worst:.3f}; "
          f"largest PPI++ / human-only width ratio where kappa >= 0.6: {ratio:.3f}")


if __name__ == "__main__":
    main()
