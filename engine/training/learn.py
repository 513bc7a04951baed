"""Training rankers on selected document sets with cross-validation over queries, evaluated on the
held-out queries' complete judgments with the engine's measures (thesis 4.1, Figures 4.3 and 4.4).

Per fold the rankers train on the selected documents of the training queries and rank every pooled
document of the held-out queries; the per-topic values of MAP, nDCG@10 and P@10 come from
`engine.evaluation.evaluate` against the complete judgments. The thesis also holds out a validation fold; the
rankers here have fixed settings, so the training queries take the thesis's training and validation parts.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .features import feature_columns
from .rankers import make_ranker
from .select import PERCENTAGES, characterize, select

EVAL_MEASURES = ["map", "ndcg_cut.10", "P.10"]
MEASURE_COLUMNS = {"map": "map", "ndcg_cut_10": "ndcg@10", "P_10": "P@10"}


def query_folds(topics, k: int = 5, seed: int = 0) -> dict[str, int]:
    """Topic -> fold (0..k-1), a seeded balanced split."""
    topics = sorted(map(str, topics))
    if k < 2 or k > len(topics):
        raise CranfieldError(f"cross-validation needs 2 <= folds <= number of queries ({len(topics)}), got {k}")
    perm = np.random.default_rng(seed).permutation(len(topics))
    return {topics[p]: i % k for i, p in enumerate(perm)}


def complete_qrels(features: pd.DataFrame) -> pd.DataFrame:
    """The complete judgments of a feature table (every pooled document is judged)."""
    return features[["topic", "doc", "grade"]].reset_index(drop=True)


def cross_validate(features: pd.DataFrame, ranker: str, selected: pd.DataFrame | None = None, *, folds: int = 5,
                   seed: int = 0) -> pd.DataFrame:
    """Per-topic test values (topic, map, ndcg@10, P@10) of `ranker` trained on the `selected`
    (topic, doc) pairs (default: every document) of the training folds."""
    from ..evaluation.evaluate import evaluate
    cols = feature_columns(features)
    fmap = query_folds(features["topic"].unique(), folds, seed)
    fold = features["topic"].astype(str).map(fmap).to_numpy()
    if selected is not None:
        key = pd.MultiIndex.from_frame(selected[["topic", "doc"]].astype(str))
        in_sel = pd.MultiIndex.from_frame(features[["topic", "doc"]].astype(str)).isin(key)
    else:
        in_sel = np.ones(len(features), bool)
    X = features[cols].to_numpy(np.float64)
    y = features["grade"].to_numpy(np.int64)
    q = features["topic"].astype(str).to_numpy(object)
    scores = np.zeros(len(features))
    for f in range(folds):
        tr = (fold != f) & in_sel
        te = fold == f
        model = make_ranker(ranker, seed=seed + f)
        if tr.any():
            model.fit(X[tr], y[tr], q[tr])
            scores[te] = model.predict(X[te])
    run = pd.DataFrame({"run": ranker, "topic": q, "doc": features["doc"].astype(str).to_numpy(object),
                        "score": scores})
    long = evaluate(complete_qrels(features), run, EVAL_MEASURES)
    wide = long.pivot_table(index="topic", columns="measure", values="value", observed=True)
    wide = wide.rename(columns=MEASURE_COLUMNS).reset_index()
    wide.columns.name = None
    return wide[["topic"] + list(MEASURE_COLUMNS.values())]


def experiment(features: pd.DataFrame, runs: pd.DataFrame, *, methods=("depth", "infap", "statap", "mtc", "hedge", "letor"),
               percentages=PERCENTAGES, rankers=("ranksvm", "ranknet"), folds: int = 5, depth: int = 100,
               seed: int = 0, progress: Callable[[float, str], None] | None = None
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 4.1-4.4 data: for every method x percentage, the selected set's characteristics and
    each ranker's mean test MAP / nDCG@10 / P@10; plus the full-pool row (method 'full', 100 %).

    Returns (summary table, per-topic MAP table for significance tests against the full pool).
    """
    qrels = complete_qrels(features)
    rows, per_topic = [], []
    plan = [("full", 100.0)] + [(m, float(p)) for m in methods for p in percentages]
    for i, (method, pct) in enumerate(plan):
        if progress:
            progress(i / len(plan), f"{method} selection at {pct:g}%: training {', '.join(rankers)} ({folds} folds)")
        sel = qrels[["topic", "doc"]] if method == "full" else select(
            method, runs, qrels, pct, depth=depth, seed=seed, features=features)
        ch = characterize(sel, features, qrels, seed=seed)
        for r in rankers:
            pt = cross_validate(features, r, sel, folds=folds, seed=seed)
            means = pt[list(MEASURE_COLUMNS.values())].mean()
            rows.append({"method": method, "percent": pct, **ch, "ranker": r, **means.to_dict()})
            per_topic.append(pt.assign(method=method, percent=pct, ranker=r))
    if progress:
        progress(1.0, "done")
    return pd.DataFrame(rows), pd.concat(per_topic, ignore_index=True)


def against_full(per_topic: pd.DataFrame, measure: str = "map") -> pd.DataFrame:
    """Paired t-test of each (method, percentage, ranker) against the same ranker on the full pool
    (thesis 4.2): mean difference and p-value (`paired_p`: NaN when identical to the full pool's)."""
    from ..stability.significance import paired_p
    full = per_topic[per_topic["method"] == "full"].set_index(["ranker", "topic"])[measure]
    out = []
    for (m, p, r), g in per_topic[per_topic["method"] != "full"].groupby(["method", "percent", "ranker"], sort=False):
        base = full.loc[r].reindex(g["topic"]).to_numpy()
        vals = g[measure].to_numpy()
        diff = vals - base
        pval = float(paired_p(diff)[0])
        out.append({"method": m, "percent": p, "ranker": r, "diff": float(diff.mean()), "p": pval})
    return pd.DataFrame(out)
