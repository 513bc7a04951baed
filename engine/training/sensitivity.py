"""Which measure to train with when judgments are incomplete (He, Macdonald and Ounis 2008).

A run family is one system run over a parameter grid (the values in run metadata columns). The
topics are split into k folds (k=2: the paper's train on one topic set, test on the other, and
swap). For each incompleteness level x (percentage of the training judgments kept; the paper's 16
levels) and repetition, (100 - x) % of each training topic's judgments are removed at random (kept
in the pool as unjudged, grade -1, which is what infAP expects and what MAP, bpref and nDCG ignore
or count as non-relevant like trec_eval), the setting maximizing each training measure on the
reduced judgments is chosen, and its MAP on the test topics with full judgments is reported,
with a Wilcoxon signed-rank test against the MAP-trained choice (the paper's test).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..errors import CranfieldError

LEVELS = (1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100)
"""Percent of judgments kept: the paper's 16 incompleteness levels plus complete (100)."""
TRAIN_MEASURES = ("map", "bpref", "infAP", "ndcg")


def simulate_family(n_topics: int = 50, settings=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), best: float = 0.6,
                    *, param: str = "b", n_docs: int = 400, depth: int = 100, width: float = 0.2,
                    topic_spread: float = 0.05, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A run family with a known best setting: (runs, complete qrels, run metadata with column `param`).

    Per topic, a document space of `n_docs` documents (a log-normal number relevant); the run at
    setting p scores a document w(p) * v + e + 0.25 e_p, with v the relevance signal, e the
    system's base ranking noise (shared by all settings), e_p a small per-setting perturbation and
    w(p) = 2.2 exp(-(p - best_t)^2 / (2 width^2)), best_t = best + N(0, topic_spread): so the
    expected effectiveness peaks at `best`. Runs retrieve their top `depth` documents.
    """
    settings = [float(s) for s in settings]
    if best not in settings:
        raise CranfieldError(f"the known best setting {best} must be one of the grid settings")
    rng = np.random.default_rng(seed)
    topics = [str(301 + i) for i in range(n_topics)]
    runs, qrels = [], []
    names = [f"{param}={s:g}" for s in settings]
    for t in topics:
        n_rel = int(np.clip(np.round(np.exp(rng.normal(np.log(30), 0.8))), 3, n_docs // 3))
        rel = np.zeros(n_docs, bool)
        rel[:n_rel] = True
        v = np.where(rel, 1.0 + 0.5 * rng.standard_normal(n_docs), 0.0)
        e = rng.standard_normal(n_docs)
        bt = best + topic_spread * rng.standard_normal()
        docs = np.array([f"{t}-{i:04d}" for i in range(n_docs)], dtype=object)
        for name, p in zip(names, settings):
            w = 2.2 * np.exp(-((p - bt) ** 2) / (2 * width ** 2))
            score = np.round(w * v + e + 0.25 * rng.standard_normal(n_docs), 6)
            top = np.argsort(-score, kind="stable")[:depth]
            runs.append(pd.DataFrame({"run": name, "topic": t, "doc": docs[top], "score": score[top]}))
        pooled = np.unique(np.concatenate([f["doc"].to_numpy(object) for f in runs[-len(names):]]))
        isrel = np.isin(pooled, docs[rel])
        qrels.append(pd.DataFrame({"topic": t, "doc": pooled, "grade": isrel.astype(np.int64)}))
        # relevant documents no setting retrieved still count in the complete judgments
        missing = np.setdiff1d(docs[rel], pooled)
        if len(missing):
            qrels.append(pd.DataFrame({"topic": t, "doc": missing, "grade": 1}))
    meta = pd.DataFrame({"run": names, param: settings})
    return (pd.concat(runs, ignore_index=True), pd.concat(qrels, ignore_index=True), meta)


def reduce_judgments(qrels: pd.DataFrame, percent: float, rng: np.random.Generator) -> pd.DataFrame:
    """Keep `percent` % of each topic's judgments (at least one), chosen uniformly; the removed ones
    stay as pooled-unjudged (grade -1)."""
    if percent >= 100:
        return qrels
    out = qrels.copy()
    grade = out["grade"].to_numpy(np.int64).copy()
    codes, _ = pd.factorize(out["topic"])
    keys = rng.random(len(out))
    order = np.lexsort((keys, codes))
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    pos = np.empty(len(out), np.int64)
    pos[order] = np.arange(len(out)) - np.repeat(starts, sizes)
    keep_n = np.maximum(1, np.round(sizes * percent / 100.0)).astype(np.int64)
    grade[pos >= keep_n[codes]] = -1
    out["grade"] = grade
    return out


def _mean_by_run(long: pd.DataFrame) -> pd.DataFrame:
    """run x measure means over topics (trec_eval's averages over the topics evaluated)."""
    return long.pivot_table(index="run", columns="measure", values="value", aggfunc="mean", observed=True)


def sensitivity(runs: pd.DataFrame, qrels: pd.DataFrame, meta: pd.DataFrame, params: list[str] | None = None, *,
                measures=TRAIN_MEASURES, levels=LEVELS, repeats: int = 10, folds: int = 2, seed: int = 0,
                progress: Callable[[float, str], None] | None = None) -> dict:
    """The training-measure sensitivity experiment. Returns a dict of tables:

    choices   fold, level, rep, measure, run (chosen setting), train (its training value)
    summary   level, measure, test_map (mean over repetitions of the test MAP with full judgments),
              sd_test_map, hit_best (share of choices equal to the full-judgment best), p_vs_map
              (Wilcoxon on per-topic test MAP, repetition-averaged, against MAP-trained), and the
              mean and sd of each parameter chosen
    best      the setting with the highest test MAP on all topics with complete judgments
    """
    from scipy.stats import wilcoxon

    from ..evaluation.evaluate import evaluate
    from .learn import query_folds
    params = list(params) if params else [c for c in meta.columns if c != "run"]
    missing = [p for p in params if p not in meta.columns]
    if missing or not params:
        raise CranfieldError(f"run metadata has no parameter column(s) {', '.join(missing) or '(none given)'}; "
                             "give the family's parameters as metadata columns")
    fam = set(meta["run"].astype(str))
    runs = runs[runs["run"].astype(str).isin(fam)]
    if runs["run"].nunique() < 2:
        raise CranfieldError("a run family needs at least two runs whose names appear in the run metadata")
    qrels = qrels.assign(topic=qrels["topic"].astype(str), doc=qrels["doc"].astype(str))
    topics = sorted(set(runs["topic"].astype(str)) & set(qrels["topic"]))
    fmap = query_folds(topics, folds, seed)
    # test values with full judgments, per run and topic
    full = evaluate(qrels, runs, ["map"])
    test_map = full[full["measure"] == "map"].pivot_table(index="topic", columns="run", values="value",
                                                          observed=True).reindex(topics).fillna(0.0)
    best_run = str(test_map.mean().idxmax())
    rng = np.random.default_rng(seed)
    choices = []
    for f in range(folds):
        train_t = [t for t in topics if fmap[t] != f]
        tr_q = qrels[qrels["topic"].isin(train_t)]
        tr_r = runs[runs["topic"].astype(str).isin(train_t)]
        for li, level in enumerate(levels):
            if progress:
                progress((f * len(levels) + li) / (folds * len(levels)),
                         f"fold {f + 1}/{folds}: choosing settings with {level}% of the judgments")
            for rep in range(1 if level >= 100 else repeats):
                red = reduce_judgments(tr_q, level, rng)
                means = _mean_by_run(evaluate(red, tr_r, list(measures)))
                for m in means.columns:
                    col = means[m].reindex(sorted(means.index))
                    run = str(col.idxmax()) if col.notna().any() else str(col.index[0])
                    choices.append({"fold": f, "level": level, "rep": rep, "measure": str(m), "run": run,
                                    "train": float(col.max())})
    choices = pd.DataFrame(choices)
    pm = meta.assign(run=meta["run"].astype(str)).set_index("run")[params]
    choices = choices.join(pm, on="run")
    summary = []
    fold_topics = {f: [t for t in topics if fmap[t] == f] for f in range(folds)}
    per_topic: dict[tuple, np.ndarray] = {}
    for (level, m), g in choices.groupby(["level", "measure"], sort=True):
        reps = sorted(g["rep"].unique())
        mat = np.zeros((len(reps), len(topics)))
        tindex = {t: i for i, t in enumerate(topics)}
        for r_i, rep in enumerate(reps):
            for _, row in g[g["rep"] == rep].iterrows():
                ts = fold_topics[int(row["fold"])]
                mat[r_i, [tindex[t] for t in ts]] = test_map.loc[ts, row["run"]].to_numpy()
        per_topic[(level, m)] = mat.mean(axis=0)
        rec = {"level": level, "measure": m, "test_map": float(mat.mean()),
               "sd_test_map": float(mat.mean(axis=1).std()), "hit_best": float((g["run"] == best_run).mean())}
        for p in params:
            rec[f"{p}_mean"] = float(g[p].mean())
            rec[f"{p}_sd"] = float(g[p].std(ddof=0))
        summary.append(rec)
    summary = pd.DataFrame(summary)
    pv = []
    for _, row in summary.iterrows():
        a, b = per_topic[(row["level"], row["measure"])], per_topic.get((row["level"], "map"))
        if b is None or row["measure"] == "map" or np.allclose(a, b):
            pv.append(1.0)
        else:
            pv.append(float(wilcoxon(a, b).pvalue))
    summary["p_vs_map"] = pv
    return {"choices": choices, "summary": summary, "best": best_run,
            "best_params": {p: meta.set_index("run").loc[best_run, p] for p in params},
            "test_map": test_map}
