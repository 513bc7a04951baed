"""The experiments of Buettcher, Clarke, Yeung and Soboroff (2007) with predicted relevance.

- `classifier_quality`: train on a random fraction of each topic's judged documents, predict the rest;
  per-topic precision, recall and F1, macro-averaged (Table 6).
- `completion_poolbias`: the leave-one-group-out and leave-manual-runs-out experiments (Tables 2, 3)
  evaluated three ways: on the reduced judgments (`none`), and on the reduced judgments completed by a
  classifier trained on them that predicts the unjudged documents the left-out runs retrieve within the
  pool depth (`kld`, `svm`; Tables 7, 8).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..stability import Progress, kendall_tau, rank_positions, report
from ..stability.significance import paired_p
from ..stability.poolbias import run_metadata, scenarios, unique_contribution_mask, with_trec_ranks
from .predict import complete, make_classifier, texts_for, unjudged_within_depth
from ..documents.text import Background


def classifier_quality(qrels: pd.DataFrame, store, fractions: Sequence[float], *, classifiers=("kld", "svm"),
                       rel_level: int = 1, seed: int = 0, background: Background | None = None) -> pd.DataFrame:
    """Per classifier and training fraction: macro-averaged per-topic precision, recall and F1 on the
    judged documents not used for training (Table 6). A topic with no predicted relevant test document
    has precision 0; topics with no relevant test document are left out of the averages."""
    bg = background or Background.from_store(store)
    rng = np.random.default_rng(seed)
    q = qrels[qrels["grade"].to_numpy() >= 0].assign(topic=lambda d: d["topic"].astype(str),
                                                     doc=lambda d: d["doc"].astype(str))
    per_topic = []
    for t, g in q.groupby("topic", sort=True):
        texts, found = texts_for(store, g["doc"].tolist())
        y = (g["grade"].to_numpy() >= rel_level)[found]
        if len(y) < 4:
            continue
        x, _ = bg.counts([s for s, f in zip(texts, found) if f])
        for f in fractions:
            perm = rng.permutation(len(y))
            ntr = max(1, min(len(y) - 1, int(round(f * len(y)))))
            tr, te = perm[:ntr], perm[ntr:]
            if not y[te].any():
                continue
            for name in classifiers:
                clf = make_classifier(name, bg).fit_counts(x[tr], y[tr])
                pred = clf.decide(clf.score_counts(x[te]))
                tp = int((pred & y[te]).sum())
                p = tp / pred.sum() if pred.any() else 0.0
                r = tp / y[te].sum()
                f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
                per_topic.append((name, f, t, ntr, len(te), p, r, f1))
    d = pd.DataFrame(per_topic, columns=["classifier", "train_fraction", "topic", "n_train", "n_test",
                                         "precision", "recall", "f1"])
    if not len(d):
        raise CranfieldError("no topic has enough judged documents with text to train and test a classifier")
    return (d.groupby(["classifier", "train_fraction"], sort=False)
            .agg(topics=("topic", "size"), precision=("precision", "mean"), recall=("recall", "mean"),
                 f1=("f1", "mean")).reset_index())


def _matrix(qrels, runs, measures, topics, run_names, options) -> dict[str, np.ndarray]:
    """measure -> topics x runs per-topic values (0 where a run did not retrieve for a topic)."""
    from ..evaluation.evaluate import evaluate

    ev = evaluate(qrels, runs, measures, options=options)
    ev = ev[ev["topic"] != "all"]
    out = {}
    for m, g in ev.groupby("measure", sort=False):
        mat = g.pivot(index="topic", columns="run", values="value").reindex(index=topics, columns=run_names)
        out[m] = mat.to_numpy(np.float64, na_value=0.0)
    return out


def completion_poolbias(qrels: pd.DataFrame, runs: pd.DataFrame, run_meta: pd.DataFrame, measures,
                        store, *, mode: str = "group", depth: int = 50,
                        complete_with: Sequence[str] = ("none", "kld", "svm"), rel_level: int = 1,
                        options=None, background: Background | None = None,
                        progress: Progress = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per completion and measure, detail per completion, scenario, run and measure).

    `mode` "group" leaves each pooled group out in turn (Tables 2 and 7); "manual" leaves every manual
    pooled run out at once (Tables 3 and 8). Ranks and scores are compared with those under the full
    judgments: mean and largest absolute rank change of the affected runs, RMS error of their mean
    scores, share of affected runs whose per-topic scores differ significantly (paired t-test,
    p < 0.05), Kendall's tau over all runs and over the affected runs."""
    if mode not in ("group", "manual"):
        raise CranfieldError(f"mode must be group or manual, got {mode!r}")
    for c in complete_with:
        if c not in ("none", "kld", "svm"):
            raise CranfieldError(f"unknown completion {c!r} (choose none, kld or svm)")
    runs = runs.assign(run=runs["run"].astype(str), topic=runs["topic"].astype(str), doc=runs["doc"].astype(str))
    runs = with_trec_ranks(runs)
    qrels = qrels.assign(topic=qrels["topic"].astype(str), doc=qrels["doc"].astype(str)).reset_index(drop=True)
    run_names = sorted(set(runs["run"]))
    if not run_names:
        raise CranfieldError("no runs to compare")
    meta = run_metadata(run_meta, run_names)
    scen, contributors = scenarios(meta, mode)
    topics = sorted(set(qrels["topic"]))
    bg = background
    if any(c != "none" for c in complete_with) and bg is None:
        bg = Background.from_store(store)
    report(progress, 0.0, "evaluating with the full judgments")
    full = _matrix(qrels, runs, measures, topics, run_names, options)
    names = list(full)
    detail, taus = [], []
    steps = len(scen) * len(complete_with)
    k = 0
    for label, left_out, affected in scen:
        rm = unique_contribution_mask(qrels, runs, contributors, left_out, depth)
        reduced = qrels[~rm]
        cand = unjudged_within_depth(reduced, runs, depth, among=left_out) if left_out else None
        sel = np.isin(np.asarray(run_names), affected)
        for c in complete_with:
            k += 1
            report(progress, k / (steps + 1), f"{label}: {c}")
            q = reduced
            n_pred = n_pred_rel = 0
            if c != "none" and cand is not None and len(cand):
                comp = complete(reduced, cand, store, classifier=c, rel_level=rel_level,
                                grades=(0, rel_level), depth=depth, background=bg)
                pr = comp.predictions
                n_pred, n_pred_rel = len(pr), int((pr["grade"] >= rel_level).sum())
                q = pd.concat([reduced[["topic", "doc", "grade"]], pr[["topic", "doc", "grade"]]], ignore_index=True)
            new = _matrix(q, runs, measures, topics, run_names, options)
            for name in names:
                a, b = full[name].mean(axis=0), new[name].mean(axis=0)
                ra, rb = rank_positions(a), rank_positions(b)
                taus.append((c, label, name, kendall_tau(a, b),
                             kendall_tau(a[sel], b[sel]) if sel.sum() > 1 else np.nan))
                for j in np.flatnonzero(sel):
                    d = new[name][:, j] - full[name][:, j]
                    p = paired_p(d)[0]
                    detail.append({"complete": c, "scenario": label, "measure": name, "run": run_names[j],
                                   "removed": int(rm.sum()), "predicted": n_pred, "predicted_relevant": n_pred_rel,
                                   "old_rank": int(ra[j]), "new_rank": int(rb[j]),
                                   "rank_change": int(rb[j] - ra[j]), "old": float(a[j]), "new": float(b[j]),
                                   "p": float(p)})
    det = pd.DataFrame(detail)
    tau = pd.DataFrame(taus, columns=["complete", "scenario", "measure", "tau_all", "tau_affected"])
    rows = []
    for (c, name), s in det.groupby(["complete", "measure"], sort=False):
        ch = s["rank_change"].to_numpy()
        t = tau[(tau["complete"] == c) & (tau["measure"] == name)]
        rows.append({"complete": c, "measure": name, "n_runs": len(s),
                     "mean_abs_rank_change": float(np.abs(ch).mean()),
                     "max_up": int(max(0, -ch.min())), "max_down": int(max(0, ch.max())),
                     "rms": float(np.sqrt(np.mean((s["new"] - s["old"]) ** 2))),
                     "share_significant": float((s["p"] < 0.05).mean()),
                     "tau_all": float(t["tau_all"].mean()), "tau_affected": float(t["tau_affected"].mean())})
    report(progress, 1.0, "done")
    return pd.DataFrame(rows), det
