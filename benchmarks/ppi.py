"""Prediction-powered intervals against known truth (issue 38): coverage, width and the planner.

    python3 benchmarks/ppi.py [--world 2000] [--runs 8] [--topics 150] [--labelled 40] [--campaigns 1000]
                              [--pilot 30] [--seed 11] [--design topics|documents|both] [--per-topic 10]

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

`--design documents` (`both`, the default, runs it first): people judge a Poisson sample of `--per-topic`
documents within every topic of each campaign instead, the model every pooled document; P_10 and dcg
(linear in the labels) with the Horvitz-Thompson-corrected PPI (engine.stability.ppi_design), and the
next-batch chooser (engine.pooling.ppi_batch) against a uniform second batch at equal labels (`documents`).
map, ndcg and Rprec (ratio measures: statAP, statNDCG, statRprec from the same sample under both labellings,
engine.judgments.ppi_ratio) are drawn the same way, except that each Poisson draw over the world's documents
serves world // topics campaigns on disjoint topic sets (independent campaigns, a tenth of the estimator calls);
`bias / se` is the largest |mean estimate - truth| over the columns in units of the mean standard error.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np
import pandas as pd

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
    ap.add_argument("--design", choices=["topics", "documents", "both"], default="both",
                    help="which human sample to simulate: topics (people judge every document of some topics), "
                         "documents (people judge a sample within every topic; the next-batch chooser), or both")
    ap.add_argument("--per-topic", type=float, default=10.0,
                    help="documents design: human labels per topic on average (default 10)")
    ap.add_argument("--no-ratio", action="store_true",
                    help="documents design: leave out the ratio measures (map, ndcg, Rprec)")
    a = ap.parse_args()
    if a.design in ("documents", "both"):
        documents(a)
    if a.design == "documents":
        return
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


# ---------------------------------------------------------------------------- document-level design

DOC_MEASURES = {"P_10": (lambda r: np.where(r <= 10, 0.1, 0.0), lambda g: (g >= 1).astype(float)),
                "dcg": (lambda r: 1.0 / np.log2(r + 1.0), lambda g: np.maximum(g, 0).astype(float))}
"""The linear measures of the document design: rank weight, gain (engine.judgments.ppi_docs.Linear)."""


def doc_weights(sim, pool, names):
    """{measure: documents x runs rank weights} over the pool's documents (rows in pool order)."""
    r = sim.runs[sim.runs["run"].isin(names)]
    pos = pd.Series(np.arange(len(pool)), index=pd.MultiIndex.from_arrays([pool["topic"].astype(str),
                                                                            pool["doc"].astype(str)]))
    at = pos.reindex(pd.MultiIndex.from_arrays([r["topic"].astype(str), r["doc"].astype(str)])).to_numpy()
    inside = ~np.isnan(at)
    row = at[inside].astype(np.int64)
    col = pd.Categorical(r["run"].astype(str), categories=names).codes[inside]
    rank = r["rank"].to_numpy(float)[inside]
    out = {}
    for m, (weight, _) in DOC_MEASURES.items():
        W = np.zeros((len(pool), len(names)))
        np.add.at(W, (row, col), weight(rank))
        out[m] = W
    return out


def _ht(X, pi, s, starts, n_docs):
    """Per sampled topic (in order): the HT sums of X (documents x runs) over its sampled documents."""
    v = np.where(s, 1.0 / pi, 0.0)[:, None] * X
    return np.add.reduceat(v, starts, axis=0) if len(v) else v


RATIO_MEASURES = ["map", "ndcg", "Rprec"]


def _grid(est, ti, ri, T, R):
    X = np.zeros((T, R))
    X[ti, ri] = est
    return X


def _tally(acc, key, iv, tr):
    """Add one campaign's interval `iv` against the truth `tr`: coverage, width, count, bias and se sums."""
    d = acc.setdefault(key, [0.0, 0.0, 0, 0.0, 0.0])
    d[0] += _cover(iv, tr).sum()
    d[1] += iv.width.sum()
    d[2] += iv.width.size
    d[3] = d[3] + (iv.estimate - tr)
    d[4] = d[4] + iv.se


def ratio_rows(a, sim, pool, names, grades, tnames, size, rng):
    """Coverage, width and bias of the ratio measures' intervals (map, ndcg, Rprec) under every judge."""
    from engine.estimators.trials import base_ranked
    from engine.judgments.ppi_ratio import design_estimates
    from engine.stability.ppi import pair_columns
    from engine.stability.ppi_design import design_ppi_mean
    base = base_ranked(pool[["topic", "doc", "grade"]], sim.runs[sim.runs["run"].isin(names)])
    T, R = len(tnames), len(names)
    t_of, r_of = {t: i for i, t in enumerate(tnames)}, {r: i for i, r in enumerate(names)}
    ti = np.array([t_of[t] for t in base.topic_names])[base.g_topic]
    ri = np.array([r_of[r] for r in base.run_names])[base.g_run]
    tcode = pd.Categorical(pool["topic"].astype(str), categories=list(tnames)).codes
    pi = np.minimum(1.0, a.per_topic / size[tcode])
    ii, jj, _ = pair_columns(np.zeros((1, R)))
    h = pool["grade"].to_numpy()
    per_draw = max(1, T // a.topics)
    draws = -(-a.campaigns // per_draw)
    every = np.ones(len(pool), bool)
    rows = []
    for sname, labels in structures(pool, sim, grades, a.seed):
        k = kappa(pool, labels, grades)
        mg = labels["grade"].to_numpy()
        grid = lambda e: {m: _grid(v, ti, ri, T, R) for m, v in e.items()}
        truth = grid(design_estimates(base, h, mg, every, every)[0])
        acc, labels_n, done = {}, 0, 0
        for _ in range(draws):
            s = rng.random(len(pool)) < pi
            A_all, C_all, Fw = (grid(e) for e in design_estimates(base, h, mg, pi, s))
            perm = rng.permutation(T)
            for j in range(per_draw):
                if done == a.campaigns:
                    break
                tp = np.sort(perm[j * a.topics:(j + 1) * a.topics])
                labels_n += int(s[np.isin(tcode, tp)].sum())
                done += 1
                for m in RATIO_MEASURES:
                    A, C, F = A_all[m][tp], C_all[m][tp], Fw[m][tp]
                    tm = truth[m].mean(0)
                    for target, cols in (("means", None), ("differences", (ii, jj))):
                        AA, CC, FF = (A, C, F) if cols is None else (x[:, ii] - x[:, jj] for x in (A, C, F))
                        tr = tm if cols is None else tm[ii] - tm[jj]
                        for meth, lam in (("ppi++", None), ("ppi", 1.0), ("human", 0.0)):
                            _tally(acc, (m, target, meth), design_ppi_mean(AA, CC, FF, 0.05, lam), tr)
        for m in RATIO_MEASURES:
            for target in ("means", "differences"):
                r = {"judge": sname, "kappa": k, "measure": m, "target": target, "labels": labels_n / done}
                for meth in ("ppi++", "ppi", "human"):
                    d = acc[(m, target, meth)]
                    r[f"cover_{meth}"], r[f"width_{meth}"] = d[0] / d[2], d[1] / d[2]
                    r[f"bias_{meth}"] = float(np.max(np.abs(d[3]) / np.maximum(d[4], 1e-300)))
                rows.append(r)
    return rows


def _cover(iv, truth):
    return ((iv.lower <= truth) & (truth <= iv.upper))


def documents(a) -> None:
    """The document-level design against known truth: coverage and width of PPI++, PPI and the human-only
    HT interval for run means and pairwise differences under every judge error structure; then the
    next-batch chooser (engine.pooling.ppi_batch) against a uniform second batch at equal labels."""
    from engine.pooling.ppi_batch import batch_probabilities, error_by_grade, variance_scores
    from engine.pooling.samplers import pps_systematic
    from engine.simulation.campaigns import depth_pool, simulate
    from engine.stability.ppi import pair_columns
    from engine.stability.ppi_design import design_ppi_mean
    t0, c0 = time.time(), time.process_time()
    grades = [0, 1, 2]
    sim = simulate(a.runs, a.world, 30, a.seed, grades=grades, manual_fraction=0.0)
    names = sim.run_meta["run"].tolist()
    pool = depth_pool(sim, 20, names).reset_index(drop=True)
    Ws = doc_weights(sim, pool, names)
    tcode, tnames = pd.factorize(pool["topic"].astype(str))
    size = np.bincount(tcode)
    first = np.concatenate([[0], np.cumsum(size)[:-1]])     # the pool is sorted by topic
    h = pool["grade"].to_numpy()
    ii, jj, _ = pair_columns(np.zeros((1, len(names))))
    t_sim = time.time() - t0
    rng = np.random.default_rng(a.seed + 100)
    picks = np.argsort(rng.random((a.campaigns, len(tnames))), axis=1)[:, :a.topics]
    rows, batch_rows = [], []
    for sname, labels in structures(pool, sim, grades, a.seed):
        k = kappa(pool, labels, grades)
        mg = labels["grade"].to_numpy()
        X = {m: (Ws[m] * DOC_MEASURES[m][1](h)[:, None], Ws[m] * DOC_MEASURES[m][1](mg)[:, None]) for m in Ws}
        truth = {m: np.add.reduceat(X[m][0], first, axis=0).mean(0) for m in X}
        Fw = {m: np.add.reduceat(X[m][1], first, axis=0) for m in X}
        acc = {}
        bacc = {}
        for c in range(a.campaigns):
            tp = np.sort(picks[c])
            docs = np.concatenate([np.arange(first[t], first[t] + size[t]) for t in tp])
            starts = np.concatenate([[0], np.cumsum(size[tp])[:-1]])
            # design 1: Poisson, a.per_topic documents a topic on average
            pi = np.minimum(1.0, a.per_topic / size[tp])[np.repeat(np.arange(len(tp)), size[tp])]
            s = rng.random(len(docs)) < pi
            for m in X:
                A = _ht(X[m][0][docs], pi, s, starts, len(docs))
                C = _ht(X[m][1][docs], pi, s, starts, len(docs))
                F = Fw[m][tp]
                for target, cols in (("means", None), ("differences", (ii, jj))):
                    AA, CC, FF = (A, C, F) if cols is None else (x[:, ii] - x[:, jj] for x in (A, C, F))
                    tr = truth[m] if cols is None else truth[m][ii] - truth[m][jj]
                    for meth, lam in (("ppi++", None), ("ppi", 1.0), ("human", 0.0)):
                        _tally(acc, (m, target, meth), design_ppi_mean(AA, CC, FF, 0.05, lam), tr)
            acc.setdefault(("labels",), [0, 0])[0] += int(s.sum())
            if c >= a.campaigns // 2 and a.campaigns > 1:
                continue                         # the chooser on the first half of the campaigns (time)
            # the chooser: a uniform first batch of half the labels, then the same number again, uniform or chosen
            n1 = a.per_topic / 2
            pi1 = np.minimum(1.0, n1 / size[tp])[np.repeat(np.arange(len(tp)), size[tp])]
            s1 = rng.random(len(docs)) < pi1
            n2 = int(round(n1 * len(tp)))
            contribs = []
            for m in X:
                A = _ht(X[m][0][docs], pi1, s1, starts, len(docs))
                C = _ht(X[m][1][docs], pi1, s1, starts, len(docs))
                iv = design_ppi_mean(A, C, Fw[m][tp], 0.05)
                order = np.argsort(-iv.estimate, kind="stable")
                pa, pb = order[:-1], order[1:]
                pv = design_ppi_mean(A[:, pa] - A[:, pb], C[:, pa] - C[:, pb], Fw[m][tp][:, pa] - Fw[m][tp][:, pb])
                top = max(iv.se.max(), pv.se.max())
                gh, gm = DOC_MEASURES[m][1](h[docs]), DOC_MEASURES[m][1](mg[docs])
                e = error_by_grade(gh, gm, mg[docs], s1)
                contribs.append(variance_scores(Ws[m][docs], (iv.se / top) ** 2, (pa, pb), (pv.se / top) ** 2, e))
            for how in ("uniform", "chooser"):
                if how == "uniform":
                    pi2 = np.ones(len(docs))
                    todo = ~s1
                    pi2[todo] = min(1.0, n2 / todo.sum())
                else:
                    pi2 = batch_probabilities(contribs, s1, n2)
                s2 = s1 | pps_systematic(np.zeros(len(docs), np.int64), np.where(s1, 0.0, pi2), rng)
                for m in X:
                    A = _ht(X[m][0][docs], pi2, s2, starts, len(docs))
                    C = _ht(X[m][1][docs], pi2, s2, starts, len(docs))
                    F = Fw[m][tp]
                    for target, cols in (("means", None), ("differences", (ii, jj))):
                        AA, CC, FF = (A, C, F) if cols is None else (x[:, ii] - x[:, jj] for x in (A, C, F))
                        tr = truth[m] if cols is None else truth[m][ii] - truth[m][jj]
                        iv = design_ppi_mean(AA, CC, FF, 0.05)
                        d = bacc.setdefault((m, target, how), [0.0, 0.0, 0, 0.0])
                        d[0] += _cover(iv, tr).sum()
                        d[1] += iv.width.sum()
                        d[2] += iv.width.size
                        d[3] += iv.width.max()           # the widest column's width, summed over campaigns
                    bacc.setdefault(("labels", how), [0])[0] += int(s2.sum())
        for m in X:
            for target in ("means", "differences"):
                r = {"judge": sname, "kappa": k, "measure": m, "target": target,
                     "labels": acc[("labels",)][0] / a.campaigns}
                for meth in ("ppi++", "ppi", "human"):
                    d = acc[(m, target, meth)]
                    r[f"cover_{meth}"], r[f"width_{meth}"] = d[0] / d[2], d[1] / d[2]
                    r[f"bias_{meth}"] = float(np.max(np.abs(d[3]) / np.maximum(d[4], 1e-300)))
                rows.append(r)
                b = {"judge": sname, "measure": m, "target": target}
                half = max(1, a.campaigns // 2) if a.campaigns > 1 else 1
                for how in ("uniform", "chooser"):
                    d = bacc[(m, target, how)]
                    b[f"cover_{how}"], b[f"width_{how}"] = d[0] / d[2], d[1] / d[2]
                    b[f"maxw_{how}"] = d[3] / half
                    b[f"labels_{how}"] = bacc[("labels", how)][0] / half / len(X)
                batch_rows.append(b)
    if not a.no_ratio:
        rows += ratio_rows(a, sim, pool, names, grades, tnames, size, rng)
    elapsed, cpu = time.time() - t0, time.process_time() - c0
    load = os.getloadavg()
    print(f"Document design. World: {a.world} topics, {a.runs} runs, depth 30, depth-20 pool of every run "
          f"({len(pool)} documents, {len(pool) / len(tnames):.1f} a topic), seed {a.seed}; {a.campaigns} campaigns of "
          f"{a.topics} topics; people judge a Poisson sample of {a.per_topic:g} documents a topic on average, the "
          f"model every pooled document. Machine: {os.cpu_count()} cores, load {load[0]:.1f} / {load[1]:.1f}; "
          f"{elapsed:.1f} s wall ({t_sim:.1f} s simulating the world), {cpu:.1f} s CPU.\n")
    print("| judge | kappa | measure | target | human labels | coverage PPI++ | PPI | human-only HT | "
          "width PPI++ | PPI | human-only HT | PPI++ / human | bias / se PPI++ | human-only |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['judge']} | {r['kappa']:.3f} | {r['measure']} | {r['target']} | {r['labels']:.0f} | "
              f"{r['cover_ppi++']:.3f} | {r['cover_ppi']:.3f} | {r['cover_human']:.3f} | {r['width_ppi++']:.4f} | "
              f"{r['width_ppi']:.4f} | {r['width_human']:.4f} | {r['width_ppi++'] / r['width_human']:.3f} | "
              f"{r['bias_ppi++']:.3f} | {r['bias_human']:.3f} |")
    half = max(1, a.campaigns // 2)
    print(f"\nNext batch ({half} campaigns): a uniform first batch of {a.per_topic / 2:g} documents a topic, then "
          f"as many again drawn uniformly or by the chooser (ppi-next: P_10 and dcg, runs and adjacent pairs); "
          f"PPI++ on the second design:\n")
    print("| judge | measure | target | labels uniform | chooser | coverage uniform | chooser | mean width uniform "
          "| chooser | chooser / uniform | widest uniform | chooser | chooser / uniform |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for b in batch_rows:
        print(f"| {b['judge']} | {b['measure']} | {b['target']} | {b['labels_uniform']:.0f} | {b['labels_chooser']:.0f} | "
              f"{b['cover_uniform']:.3f} | {b['cover_chooser']:.3f} | {b['width_uniform']:.4f} | "
              f"{b['width_chooser']:.4f} | {b['width_chooser'] / b['width_uniform']:.3f} | {b['maxw_uniform']:.4f} | "
              f"{b['maxw_chooser']:.4f} | {b['maxw_chooser'] / b['maxw_uniform']:.3f} |")
    lin_rows = [r for r in rows if r["measure"] not in RATIO_MEASURES]
    worst = min(min(r["cover_ppi++"], r["cover_ppi"]) for r in lin_rows)
    ratio = max(r["width_ppi++"] / r["width_human"] for r in lin_rows if r["kappa"] >= 0.6)
    rat_rows = [r for r in rows if r["measure"] in RATIO_MEASURES]
    if rat_rows:
        print(f"\nratio measures (map, ndcg, Rprec): coverage PPI++ / PPI "
              f"{min(min(r['cover_ppi++'], r['cover_ppi']) for r in rat_rows):.3f}-"
              f"{max(max(r['cover_ppi++'], r['cover_ppi']) for r in rat_rows):.3f}, human-only "
              f"{min(r['cover_human'] for r in rat_rows):.3f}-{max(r['cover_human'] for r in rat_rows):.3f}; PPI++ / "
              f"human-only width {min(r['width_ppi++'] / r['width_human'] for r in rat_rows):.3f}-"
              f"{max(r['width_ppi++'] / r['width_human'] for r in rat_rows):.3f}; largest bias / se PPI++ "
              f"{max(r['bias_ppi++'] for r in rat_rows):.3f}, human-only {max(r['bias_human'] for r in rat_rows):.3f}")
    bworst = min(min(b["cover_uniform"], b["cover_chooser"]) for b in batch_rows)
    print(f"\ndocument design: lowest coverage of the linear measures (PPI++ and PPI, every judge, measure, target): {worst:.3f}; largest "
          f"PPI++ / human-only width ratio where kappa >= 0.6: {ratio:.3f}; next batch: lowest coverage {bworst:.3f}, "
          f"mean width chooser / uniform {min(b['width_chooser'] / b['width_uniform'] for b in batch_rows):.3f}-"
          f"{max(b['width_chooser'] / b['width_uniform'] for b in batch_rows):.3f}\n")


if __name__ == "__main__":
    main()
