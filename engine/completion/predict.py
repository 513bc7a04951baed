"""Completing a campaign's judgments with predicted relevance, as a named judgment source.

Only unjudged documents that the runs retrieve within the pool depth are predicted: the paper warns
that predicting deeper than the pool biases the evaluation the other way. Each prediction records its
classifier, the topic's training-set size and the decision threshold. Predictions live in
`judgments/sources/<name>.qrels` (a judgment source like any other) with the details in `<name>.meta.json`
and the probabilities in `<name>.probs.tsv`; official evaluation never reads them unless asked for
(`fill_holes`, or the source rules of `cranfield eval --judgments official+<name>`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem, Warnings
from ..documents.text import Background
from ..util import fs

CLASSIFIERS = ("kld", "svm")
SOURCE_DIR = Path("judgments") / "sources"   # engine confine CAMPAIGN_PATHS["sources"]
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
    """Write the predictions as the judgment source `name` (default predicted-CLASSIFIER) in
    judgments/sources/: NAME.qrels (the labels), NAME.meta.json (kind predicted, classifier, depth, per-topic
    training size, relevant count and threshold) and NAME.probs.tsv (topic, doc, probability, score).
    Each file is written atomically; the labels file last. Returns its path."""
    from ..formats.qrels import write_qrels
    from ..formats.files import write_text

    name = name or source_name(comp.classifier)
    base = Path(root) / SOURCE_DIR
    p = comp.predictions
    meta = {"name": name, "kind": "predicted", "model": comp.classifier, "prompt_version": "",
            "classifier": comp.classifier, "depth": comp.depth, "params": comp.params,
            "judgments": int(len(p)),
            "predicted_relevant": int((p["grade"] > comp.params["grades"][0]).sum()),
            "topics": [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                       for r in comp.topics.to_dict("records")]}
    write_text(base / f"{name}.meta.json", json.dumps(meta, indent=1, default=_jsonable) + "\n")
    write_text(base / f"{name}.probs.tsv", "topic\tdoc\tprob\tscore\n" + "".join(
        f"{t}\t{d}\t{pr:.6f}\t{sc:.6g}\n" for t, d, pr, sc in zip(p["topic"], p["doc"], p["prob"], p["score"])))
    write_qrels(base / f"{name}.qrels", p[["topic", "doc", "grade"]])
    return base / f"{name}.qrels"


def _jsonable(v):
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    raise TypeError(type(v).__name__)


def read_predictions(root, name: str) -> pd.DataFrame:
    """A predicted source's labels with their probabilities: topic, doc, grade, prob."""
    from ..formats.qrels import read_qrels

    base = Path(root) / SOURCE_DIR
    q = read_qrels(base / f"{name}.qrels")[["topic", "doc", "grade"]]
    pp = base / f"{name}.probs.tsv"
    if not pp.is_file():
        raise CranfieldError(f"{pp}: no probabilities for source {name} (run cranfield judgments predict again)")
    try:
        with fs.open(pp, "rb") as fh:
            pr = pd.read_csv(fh, sep="\t", dtype={"topic": str, "doc": str}, usecols=["topic", "doc", "prob"])
    except (ValueError, pd.errors.ParserError) as exc:
        raise FormatError(Problem(str(pp), None, f"unreadable ({exc})"),
                          hint="run cranfield judgments predict again") from None
    if pr["prob"].isna().any() or not pr["prob"].between(0, 1).all():
        raise FormatError(Problem(str(pp), int(np.flatnonzero(~pr["prob"].between(0, 1))[0]) + 2,
                                  "probability missing or outside [0, 1]"), hint="run cranfield judgments predict again")
    return q.merge(pr, on=["topic", "doc"], how="left")


def fill_holes(qrels: pd.DataFrame, predicted: pd.DataFrame, source: str = "predicted") -> pd.DataFrame:
    """Official judgments plus predicted grades for the documents they leave unjudged; a `source` column
    says which judgment each row is (official rows win where both exist)."""
    q = qrels[["topic", "doc", "grade"]].assign(source="official")
    key = pd.MultiIndex.from_frame(q[["topic", "doc"]].astype(str))
    pr = predicted.assign(topic=predicted["topic"].astype(str), doc=predicted["doc"].astype(str))
    add = pr[~pd.MultiIndex.from_frame(pr[["topic", "doc"]]).isin(key)][["topic", "doc", "grade"]]
    out = pd.concat([q, add.assign(source=source)], ignore_index=True)
    return out.sort_values(["topic", "doc"], kind="mergesort").reset_index(drop=True)
