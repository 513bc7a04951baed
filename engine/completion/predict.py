"""Completing a campaign's judgments with predicted relevance, as a named judgment source.

Only unjudged documents that the runs retrieve within the pool depth are predicted: the paper warns
that predicting deeper than the pool biases the evaluation the other way. Each prediction records its
classifier, the topic's training-set size and the decision threshold. Predictions live in
`judgments/sources/<name>.txt` (6 columns: `topic Q0 doc grade probability source`) with the details in
`<name>.json`; official evaluation never reads them unless asked for (`fill_holes`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem, Warnings
from .text import Background

CLASSIFIERS = ("kld", "svm")
SOURCE_DIR = Path("judgments") / "sources"
Progress = Callable[[float, str], None] | None


def make_classifier(name: str, background: Background, **params):
    """A fresh classifier by name (kld or svm)."""
    if name == "kld":
        from .kld import KLDClassifier
        return KLDClassifier(background, **params)
    if name == "svm":
        from .svm import SVMClassifier
        return SVMClassifier(background, **params)
    raise CranfieldError(f"unknown classifier {name!r} (choose one of: {', '.join(CLASSIFIERS)})")


def unjudged_within_depth(qrels: pd.DataFrame, runs: pd.DataFrame, depth: int,
                          among: list[str] | None = None) -> pd.DataFrame:
    """(topic, doc) pairs that the runs (or the runs in `among`) retrieve within `depth`, in trec_eval
    order, and that are not judged; only topics that have judgments."""
    from ..pooling.candidates import ranked_runs

    if depth < 1:
        raise CranfieldError(f"--depth must be at least 1, got {depth}")
    rr = ranked_runs(runs, depth, pooled=among)
    top = rr[["topic", "doc"]].drop_duplicates()
    judged_topics = set(qrels["topic"].astype(str))
    top = top[top["topic"].isin(judged_topics)]
    key = pd.MultiIndex.from_frame(qrels[["topic", "doc"]].astype(str))
    out = top[~pd.MultiIndex.from_frame(top).isin(key)]
    return out.sort_values(["topic", "doc"], kind="mergesort").reset_index(drop=True)


@dataclass
class Completion:
    """Predicted labels for unjudged documents, with how each topic's classifier was trained."""

    classifier: str
    depth: int
    predictions: pd.DataFrame          # topic, doc, grade, prob, score
    topics: pd.DataFrame               # topic, n_train, n_rel, threshold, n_predicted, n_pred_rel, no_text
    params: dict = field(default_factory=dict)

    def as_qrels(self) -> pd.DataFrame:
        return self.predictions[["topic", "doc", "grade"]].copy()


def texts_for(store, docs) -> tuple[list[str], np.ndarray]:
    """Texts (title + text) for `docs` from the store, and a mask of the documents found."""
    got = store.get_many(docs)
    found = np.fromiter((d in got for d in docs), bool, len(docs))
    return [f"{got[d].title} {got[d].text}" if d in got else "" for d in docs], found


def complete(qrels: pd.DataFrame, candidates: pd.DataFrame, store, *, classifier: str = "kld",
             rel_level: int = 1, grades: tuple[int, int] | None = None, depth: int = 0,
             background: Background | None = None, progress: Progress = None,
             warnings: Warnings | None = None, **params) -> Completion:
    """Train one classifier per topic on its judged documents (relevant: grade >= `rel_level`) and
    predict the `candidates` (topic, doc). Predicted grades are `grades` = (non-relevant, relevant),
    by default (0, rel_level). Documents without text are left unpredicted and counted."""
    bg = background or Background.from_store(store)
    lo, hi = grades or (0, rel_level)
    q = qrels.assign(topic=qrels["topic"].astype(str), doc=qrels["doc"].astype(str))
    q = q[q["grade"].to_numpy() >= 0]                 # unjudged markers (-1) are not training data
    rows, info = [], []
    topics = sorted(set(candidates["topic"]))
    by_topic = dict(tuple(candidates.groupby("topic", sort=False)["doc"]))
    train_by = dict(tuple(q.groupby("topic", sort=False)))
    for i, t in enumerate(topics):
        if progress:
            progress(i / max(len(topics), 1), f"topic {t}")
        tr = train_by.get(t)
        cand = by_topic[t].tolist()
        if tr is None or not len(tr):
            info.append((t, 0, 0, np.nan, 0, 0, len(cand)))
            continue
        tdocs = tr["doc"].tolist()
        ttexts, tfound = texts_for(store, tdocs)
        y = tr["grade"].to_numpy() >= rel_level
        ctexts, cfound = texts_for(store, cand)
        x, _ = bg.counts([t_ for t_, f in zip(ttexts, tfound) if f] + [c for c, f in zip(ctexts, cfound) if f])
        ntr = int(tfound.sum())
        clf = make_classifier(classifier, bg, **params).fit_counts(x[:ntr], y[tfound])
        s = clf.score_counts(x[ntr:])
        rel = clf.decide(s)
        prob = clf.proba_scores(s)
        docs = [c for c, f in zip(cand, cfound) if f]
        rows.append(pd.DataFrame({"topic": t, "doc": docs, "grade": np.where(rel, hi, lo).astype(np.int64),
                                  "prob": prob, "score": s}))
        info.append((t, ntr, int(y[tfound].sum()), float(clf.threshold), len(docs), int(rel.sum()),
                     int((~cfound).sum()) + int((~tfound).sum())))
    if progress:
        progress(1.0, "done")
    pred = (pd.concat(rows, ignore_index=True) if rows else
            pd.DataFrame({"topic": [], "doc": [], "grade": np.array([], np.int64), "prob": [], "score": []}))
    tinfo = pd.DataFrame(info, columns=["topic", "n_train", "n_rel", "threshold", "n_predicted", "n_pred_rel",
                                        "no_text"])
    missing = int(tinfo["no_text"].sum()) if len(tinfo) else 0
    if missing and warnings is not None:
        warnings.add("docs", None, f"{missing} judged or candidate document(s) have no text in the document "
                                   f"store: they were neither used for training nor predicted "
                                   f"(import them with cranfield docs import)")
    return Completion(classifier, depth, pred, tinfo, dict(params, rel_level=rel_level, grades=[lo, hi]))


def source_name(classifier: str) -> str:
    return f"predicted-{classifier}"


def write_completion(root, comp: Completion, name: str | None = None) -> Path:
    """Write the predictions as judgments/sources/<name>.txt (+ .json details), atomically; returns the path."""
    from ..formats import write_text

    name = name or source_name(comp.classifier)
    base = Path(root) / SOURCE_DIR
    p = comp.predictions
    lines = [f"{t} Q0 {d} {g} {pr:.6f} {name}\n" for t, d, g, pr in
             zip(p["topic"], p["doc"], p["grade"], p["prob"])]
    meta = {"source": name, "kind": "predicted", "classifier": comp.classifier, "depth": comp.depth,
            "params": comp.params, "documents": int(len(p)), "predicted_relevant": int((p["grade"] > comp.params["grades"][0]).sum()),
            "topics": [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                       for r in comp.topics.to_dict("records")]}
    write_text(base / f"{name}.json", json.dumps(meta, indent=1, default=_jsonable) + "\n")
    write_text(base / f"{name}.txt", "".join(lines))
    return base / f"{name}.txt"


def _jsonable(v):
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    raise TypeError(type(v).__name__)


def read_predictions(path) -> pd.DataFrame:
    """A predictions file (topic Q0 doc grade probability source) as topic, doc, grade, prob, source."""
    p = Path(path)
    rows, problems = [], []
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            f = line.split()
            if not f:
                continue
            if len(f) != 6:
                problems.append(Problem(str(p), n, f"expected 6 fields (topic Q0 doc grade probability source), "
                                                    f"got {len(f)}"))
                continue
            try:
                g = int(f[3])
                pr = float(f[4])
            except ValueError:
                problems.append(Problem(str(p), n, "grade must be an integer and probability a number"))
                continue
            if not 0.0 <= pr <= 1.0:
                problems.append(Problem(str(p), n, f"probability {f[4]} is outside [0, 1]"))
                continue
            rows.append((f[0], f[2], g, pr, f[5]))
    if problems:
        raise FormatError(problems, hint="write it again with cranfield judgments predict")
    return pd.DataFrame(rows, columns=["topic", "doc", "grade", "prob", "source"]).astype({"grade": np.int64})


def fill_holes(qrels: pd.DataFrame, predicted: pd.DataFrame, source: str = "predicted") -> pd.DataFrame:
    """Official judgments plus predicted grades for the documents they leave unjudged; a `source` column
    says which judgment each row is (official rows win where both exist)."""
    q = qrels[["topic", "doc", "grade"]].assign(source="official")
    key = pd.MultiIndex.from_frame(q[["topic", "doc"]].astype(str))
    pr = predicted.assign(topic=predicted["topic"].astype(str), doc=predicted["doc"].astype(str))
    add = pr[~pd.MultiIndex.from_frame(pr[["topic", "doc"]]).isin(key)][["topic", "doc", "grade"]]
    out = pd.concat([q, add.assign(source=source)], ignore_index=True)
    return out.sort_values(["topic", "doc"], kind="mergesort").reset_index(drop=True)
