"""Nugget scores of answers and runs, and citation support.

Per answer, over the topic's nuggets N (vital V, okay O) with assignment a(n) in {support,
partial_support, not_support}, s(n) = 1, 0.5, 0 and s_strict(n) = 1, 0, 0:
  strict_vital = sum_V s_strict / |V|      strict_all = sum_N s_strict / |N|
  vital        = sum_V s / |V|             all        = sum_N s / |N|
  weighted     = (sum_V s + 0.5 sum_O s) / (|V| + 0.5 |O|)   (okay nuggets weigh half)
  strict_weighted: the same with s_strict.
A score whose denominator is 0 is 0 (as nuggetizer). A run's score is the mean over the topics scored.

Citation support, per answer, from labels sup(i, d) in {1, 0.5, 0} for sentence i citing reference d:
  support_precision = sum over citations (i, d) of sup(i, d) / number of citations
  support_recall    = sum over sentences i of max_d sup(i, d) / number of sentences
(a sentence without citations adds 0 to recall). Formulas in docs/rag.md.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings

LABELS = ("support", "partial_support", "not_support")
IMPORTANCE = ("vital", "okay")
VALUE = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
STRICT = {"support": 1.0, "partial_support": 0.0, "not_support": 0.0}
MEASURES = ("strict_vital", "strict_all", "vital", "all", "weighted", "strict_weighted")
SUPPORT_MEASURES = ("support_precision", "support_recall")


def answer_scores(importance, labels) -> dict[str, float]:
    """The nugget scores of one answer from parallel lists of importance (vital/okay) and labels."""
    imp = np.asarray(list(importance), dtype=object)
    lab = list(labels)
    if len(imp) != len(lab):
        raise CranfieldError("answer_scores: one label per nugget")
    for x in imp:
        if x not in IMPORTANCE:
            raise CranfieldError(f"nugget importance {x!r}: use vital or okay")
    for x in lab:
        if x not in VALUE:
            raise CranfieldError(f"assignment {x!r}: use {', '.join(LABELS)}")
    s = np.array([VALUE[x] for x in lab], float)
    ss = np.array([STRICT[x] for x in lab], float)
    v = imp == "vital"
    wt = np.where(v, 1.0, 0.5)

    def ratio(num: float, den: float) -> float:
        return float(num / den) if den else 0.0

    return {"strict_vital": ratio(ss[v].sum(), v.sum()), "strict_all": ratio(ss.sum(), len(s)),
            "vital": ratio(s[v].sum(), v.sum()), "all": ratio(s.sum(), len(s)),
            "weighted": ratio((wt * s).sum(), wt.sum()), "strict_weighted": ratio((wt * ss).sum(), wt.sum())}


def score_table(nuggets: pd.DataFrame, assignments: pd.DataFrame, answers: pd.DataFrame,
                warnings: Warnings | None = None, source: str = "assignments") -> pd.DataFrame:
    """Per (run, topic) scores. `nuggets`: topic, nugget, importance (the nuggets in force);
    `assignments`: run, topic, nugget, label (one per triple); `answers`: run, topic (the answers to
    score). An answer's nugget without an assignment counts as not_support (as an unjudged document is
    non-relevant) and is counted in column `unassigned`; topics without nuggets are not scored."""
    w = warnings if warnings is not None else Warnings()
    nug = nuggets[["topic", "nugget", "importance"]].astype(str)
    ans = answers[["run", "topic"]].astype(str).drop_duplicates()
    no_nug = sorted(set(ans["topic"]) - set(nug["topic"]))
    if no_nug:
        w.add(source, None, f"{len(no_nug)} topic(s) have answers but no nuggets and are not scored "
                            f"(first: {', '.join(no_nug[:5])})")
    grid = ans.merge(nug, on="topic", how="inner")
    a = assignments[["run", "topic", "nugget", "label"]].astype(str)
    grid = grid.merge(a, on=["run", "topic", "nugget"], how="left")
    miss = grid["label"].isna()
    if miss.any():
        w.add(source, None, f"{int(miss.sum())} (answer, nugget) pair(s) have no assignment and count as "
                            f"not_support")
    grid["unassigned"] = miss
    grid["label"] = grid["label"].fillna("not_support")
    bad = ~grid["label"].isin(LABELS)
    if bad.any():
        raise CranfieldError(f"{source}: assignment {grid.loc[bad, 'label'].iat[0]!r}: use {', '.join(LABELS)}")
    vital = (grid["importance"] == "vital").to_numpy()
    s = grid["label"].map(VALUE).to_numpy(float)
    ss = grid["label"].map(STRICT).to_numpy(float)
    wt = np.where(vital, 1.0, 0.5)
    g = pd.DataFrame({"run": grid["run"], "topic": grid["topic"], "n": 1.0, "v": vital.astype(float),
                      "s": s, "ss": ss, "sv": s * vital, "ssv": ss * vital, "w": wt, "ws": wt * s,
                      "wss": wt * ss, "unassigned": grid["unassigned"].astype(np.int64)})
    t = g.groupby(["run", "topic"], sort=True).sum(numeric_only=True)

    def ratio(num, den):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)

    out = pd.DataFrame({"strict_vital": ratio(t["ssv"], t["v"]), "strict_all": ratio(t["ss"], t["n"]),
                        "vital": ratio(t["sv"], t["v"]), "all": ratio(t["s"], t["n"]),
                        "weighted": ratio(t["ws"], t["w"]), "strict_weighted": ratio(t["wss"], t["w"]),
                        "nuggets": t["n"].astype(np.int64), "unassigned": t["unassigned"].astype(np.int64)},
                       index=t.index).reset_index()
    return out


def run_scores(per_topic: pd.DataFrame, topics: list[str] | None = None,
               measures=MEASURES) -> pd.DataFrame:
    """Mean of each measure per run over `topics` (a run without an answer to a topic scores 0 there),
    or over the topics each run answered when `topics` is None. Sorted best first by the first measure."""
    if topics is None:
        m = per_topic.groupby("run")[list(measures)].mean()
        m["topics"] = per_topic.groupby("run").size()
    else:
        runs = sorted(per_topic["run"].unique())
        idx = pd.MultiIndex.from_product([runs, sorted(map(str, topics))], names=["run", "topic"])
        full = per_topic.set_index(["run", "topic"])[list(measures)].reindex(idx).fillna(0.0)
        m = full.groupby("run").mean()
        m["topics"] = len(topics)
    return m.sort_values(list(measures)[0], ascending=False, kind="mergesort").reset_index()


def support_table(citations: pd.DataFrame, labels: pd.DataFrame, warnings: Warnings | None = None,
                  source: str = "support") -> pd.DataFrame:
    """Per (run, topic) support_precision and support_recall. `citations`: run, topic, sentence, doc
    (every sentence listed, doc '' for a sentence without citation); `labels`: run, topic, sentence,
    doc, label. A citation without a label counts as not_support (reported as `unlabelled`)."""
    w = warnings if warnings is not None else Warnings()
    c = citations[["run", "topic", "sentence", "doc"]].astype({"run": str, "topic": str, "doc": str})
    lab = labels[["run", "topic", "sentence", "doc", "label"]].astype({"run": str, "topic": str, "doc": str})
    m = c.merge(lab, on=["run", "topic", "sentence", "doc"], how="left")
    cited = m["doc"] != ""
    miss = cited & m["label"].isna()
    if miss.any():
        w.add(source, None, f"{int(miss.sum())} citation(s) have no support label and count as not_support")
    bad = m["label"].notna() & ~m["label"].isin(LABELS)
    if bad.any():
        raise CranfieldError(f"{source}: support label {m.loc[bad, 'label'].iat[0]!r}: use {', '.join(LABELS)}")
    m["sup"] = m["label"].map(VALUE).fillna(0.0).where(cited, 0.0)
    m["cited"] = cited.astype(float)
    m["unlabelled"] = miss.astype(np.int64)
    per_sent = m.groupby(["run", "topic", "sentence"], sort=True).agg(best=("sup", "max"), sup=("sup", "sum"),
                                                                      cites=("cited", "sum"),
                                                                      unlabelled=("unlabelled", "sum"))
    t = per_sent.groupby(["run", "topic"]).agg(best=("best", "sum"), sup=("sup", "sum"), cites=("cites", "sum"),
                                               sentences=("best", "size"), unlabelled=("unlabelled", "sum"))
    prec = np.where(t["cites"] > 0, t["sup"] / t["cites"].where(t["cites"] > 0, 1), 0.0)
    rec = np.where(t["sentences"] > 0, t["best"] / t["sentences"].where(t["sentences"] > 0, 1), 0.0)
    return pd.DataFrame({"support_precision": prec, "support_recall": rec,
                         "citations": t["cites"].astype(np.int64), "sentences": t["sentences"].astype(np.int64),
                         "unlabelled": t["unlabelled"].astype(np.int64)}, index=t.index).reset_index()


def citation_rows(answers) -> pd.DataFrame:
    """run, topic, sentence, doc for every (sentence, cited reference) of the answers; a sentence
    without citations gives one row with doc ''."""
    rows = []
    for a in answers:
        for i, s in enumerate(a.sentences):
            if s.citations:
                rows.extend((a.run, a.topic, i, a.references[c]) for c in s.citations)
            else:
                rows.append((a.run, a.topic, i, ""))
    return pd.DataFrame(rows, columns=["run", "topic", "sentence", "doc"]).astype({"sentence": np.int64})
