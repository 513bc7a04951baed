"""NIST's ndeval (TREC Web track diversity): intent-aware measures over subtopic judgments.

Judgments (`-R diversity`): `topic subtopic doc grade`; a grade >= 1 makes the document relevant to that
subtopic (ndeval is binary). A topic's subtopics are those with at least one relevant document (N).
With alpha (default 0.5), a document's gain at rank r is sum over its subtopics s of (1 - alpha)^c_s,
c_s = documents relevant to s ranked above r. As ndeval prints them:

- alpha-DCG@k = sum_{r<=k} gain(r) / log2(r + 1), divided by N and by sum_{r<=k} (1-alpha)^(r-1) / log2(r + 1)
  (the best a single subtopic could score), so a perfect single-subtopic ranking scores 1;
- ERR-IA@k   = the same with discount 1/r;
- alpha-nDCG@k, nERR-IA@k = the raw sums divided by those of the ideal ranking, built greedily (at each
  rank the relevant document of largest gain; ties: the larger document id), over all relevant documents;
- NRBP = (1 - (1 - alpha) beta) / N * sum_r beta^(r-1) gain(r) (beta default 0.5), nNRBP its ideal ratio;
  (a topic without relevant subtopics scores 0 everywhere and nNRBP = 0/0 = nan, as ndeval);
- MAP-IA = mean over subtopics of AP; P-IA@k = mean over subtopics of P@k; strec@k = fraction of
  subtopics with a relevant document in the top k.

Order: by default the run's rank field (ndeval 4.5 refuses a rank repeated within a topic; we break such
ties by score descending, then document id descending); `traditional` ranks by score descending, ties by
document id descending (ndeval 4.5's resultCompareByScore; ndeval 1.3 of 2009 and pyndeval, which ranks
by score itself, break ties by ascending document id).
`complete` (-c): topics of the judgments a run did not retrieve for score 0 and count in the mean.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import Warnings

DEFAULT_CUTOFFS = (5, 10, 20)
CUT_MEASURES = ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG")
TAIL_CUT_MEASURES = ("P-IA", "strec")
NOCUT_MEASURES = ("NRBP", "nNRBP", "MAP-IA")


def measure_names(cutoffs=DEFAULT_CUTOFFS) -> list[str]:
    """ndeval's column order."""
    out = [f"{m}@{k}" for m in CUT_MEASURES for k in cutoffs]
    out += list(NOCUT_MEASURES)
    out += [f"{m}@{k}" for m in TAIL_CUT_MEASURES for k in cutoffs]
    return out


def read_diversity_qrels(path, warnings: Warnings | None = None) -> pd.DataFrame:
    """Subtopic judgments `topic subtopic doc grade` (ndeval's qrels) as topic, subtopic, doc, grade."""
    from ..formats.fieldlines import read_fields
    rows = read_fields(path, ["topic", "subtopic", "docno", "grade"], {"grade": int}, "-R diversity (ndeval qrels)")
    return pd.DataFrame(rows, columns=["topic", "subtopic", "doc", "grade"])


class TopicJudgments:
    """One topic's subtopic judgments: per relevant document, the set of subtopic indices."""

    def __init__(self, rows: pd.DataFrame, rel_level: int = 1):
        rel = rows[rows["grade"] >= rel_level]
        subs = list(dict.fromkeys(rel["subtopic"].tolist()))
        idx = {s: i for i, s in enumerate(subs)}
        self.n = len(subs)
        self.doc_subs: dict[str, list[int]] = {}
        for d, s in zip(rel["doc"], rel["subtopic"]):
            lst = self.doc_subs.setdefault(d, [])
            if idx[s] not in lst:
                lst.append(idx[s])
        self.r_per_sub = np.bincount([i for v in self.doc_subs.values() for i in v], minlength=self.n)

    def gains(self, docs: list[str], alpha: float) -> np.ndarray:
        """Per rank: sum over the document's subtopics of (1 - alpha)^(times the subtopic was seen)."""
        seen = np.zeros(self.n, np.int64)
        out = np.zeros(len(docs))
        for r, d in enumerate(docs):
            subs = self.doc_subs.get(d)
            if subs:
                out[r] = sum((1 - alpha) ** seen[s] for s in subs)
                for s in subs:
                    seen[s] += 1
        return out

    def ideal_gains(self, alpha: float, depth: int) -> np.ndarray:
        """Gains of the greedy ideal ranking (largest gain first; ties: the larger document id, as ndeval)."""
        seen = np.zeros(self.n, np.int64)
        left = sorted(self.doc_subs.items(), reverse=True)      # ties: the larger document id first
        out = []
        while left and len(out) < depth:
            best, best_i = -1.0, -1
            for i, (_, subs) in enumerate(left):
                g = sum((1 - alpha) ** seen[s] for s in subs)
                if g > best + 1e-15:
                    best, best_i = g, i
            _, subs = left.pop(best_i)
            for s in subs:
                seen[s] += 1
            out.append(best)
        return np.asarray(out)


def _disc_sum(g: np.ndarray, k: int, disc) -> float:
    n = min(k, len(g))
    return float(sum(g[r] * disc(r + 1) for r in range(n)))


def topic_measures(tj: TopicJudgments, docs: list[str], cutoffs=DEFAULT_CUTOFFS, alpha: float = 0.5,
                   beta: float = 0.5) -> dict[str, float]:
    """Every ndeval measure of one ranked list for one topic."""
    out: dict[str, float] = {}
    N = tj.n
    if N == 0:       # no relevant subtopic: every measure 0, nNRBP 0/0 (nan), as ndeval computes it
        return {m: (math.nan if m == "nNRBP" else 0.0) for m in measure_names(cutoffs)}
    g = tj.gains(docs, alpha)
    ig = tj.ideal_gains(alpha, len(tj.doc_subs))
    log_d = lambda r: 1.0 / math.log2(r + 1)          # noqa: E731
    rr_d = lambda r: 1.0 / r                          # noqa: E731
    for name, disc in (("ERR-IA", rr_d), ("alpha-DCG", log_d)):
        for k in cutoffs:
            raw = _disc_sum(g, k, disc)
            best = _disc_sum(np.array([(1 - alpha) ** r for r in range(k)]), k, disc)
            ideal = _disc_sum(ig, k, disc)
            out[f"{name}@{k}"] = raw / N / best
            out[f"{'nERR-IA' if name == 'ERR-IA' else 'alpha-nDCG'}@{k}"] = raw / ideal if ideal > 0 else 0.0
    nb = lambda r: beta ** (r - 1)                    # noqa: E731
    raw = _disc_sum(g, len(g), nb)
    ideal = _disc_sum(ig, len(ig), nb)
    out["NRBP"] = (1 - (1 - alpha) * beta) / N * raw
    out["nNRBP"] = raw / ideal if ideal > 0 else 0.0
    # per subtopic: relevance matrix of the ranked list
    rel = np.zeros((len(docs), N), dtype=bool)
    for r, d in enumerate(docs):
        for s in tj.doc_subs.get(d, ()):
            rel[r, s] = True
    cum = np.cumsum(rel, axis=0) if len(docs) else np.zeros((0, N))
    ranks = np.arange(1, len(docs) + 1)[:, None]
    ap = (np.where(rel, cum / ranks, 0.0).sum(axis=0) / np.maximum(tj.r_per_sub, 1)) if len(docs) else np.zeros(N)
    out["MAP-IA"] = float(ap.mean())
    for k in cutoffs:
        top = rel[:k]
        out[f"P-IA@{k}"] = float(top.sum(axis=0).mean() / k)
        out[f"strec@{k}"] = float(top.any(axis=0).sum() / N) if len(top) else 0.0
    return {m: out[m] for m in measure_names(cutoffs)}


def ranked_docs(run: pd.DataFrame, order: str = "default") -> dict[str, list[str]]:
    """Per topic, the run's documents in ndeval's order (`default`: rank field; `traditional`: score)."""
    out = {}
    for t, g in run.groupby("topic", sort=False):
        g = g.sort_values("doc", ascending=False, kind="stable")
        g = g.sort_values("score", ascending=False, kind="stable")
        if order != "traditional" and "rank" in g.columns:
            g = g.sort_values("rank", kind="stable")
        out[str(t)] = list(dict.fromkeys(g["doc"].astype(str)))
    return out


def evaluate_diversity(qrels: pd.DataFrame, run: pd.DataFrame, cutoffs=DEFAULT_CUTOFFS, alpha: float = 0.5,
                       beta: float = 0.5, order: str = "default", complete: bool = False,
                       rel_level: int = 1) -> pd.DataFrame:
    """One row per (run, topic) with every ndeval measure; topics in the judgments' order."""
    judg = {str(t): TopicJudgments(g, rel_level) for t, g in qrels.groupby("topic", sort=False)}
    rows = []
    for rn, rg in run.groupby("run", sort=False):
        ranked = ranked_docs(rg, order)
        for t in sorted(judg, key=_topic_key):
            if t not in ranked:
                if complete:
                    rows.append({"runid": rn, "topic": t, **{m: 0.0 for m in measure_names(cutoffs)}})
                continue
            rows.append({"runid": rn, "topic": t, **topic_measures(judg[t], ranked[t], cutoffs, alpha, beta)})
    return pd.DataFrame(rows, columns=["runid", "topic", *measure_names(cutoffs)])


def _topic_key(t: str):
    return (0, int(t), t) if t.isdigit() else (1, 0, t)


def ndeval_lines(table: pd.DataFrame, cutoffs=DEFAULT_CUTOFFS) -> list[str]:
    """ndeval's CSV output: header, one line per topic, then the run's `amean` line."""
    names = measure_names(cutoffs)
    lines = ["runid,topic," + ",".join(names)]
    for rn, g in table.groupby("runid", sort=False):
        for _, row in g.iterrows():
            lines.append(f"{rn},{row['topic']}," + ",".join(f"{row[m]:.6f}" for m in names))
        lines.append(f"{rn},amean," + ",".join(f"{g[m].mean():.6f}" for m in names))
    return lines


def run_cli(args, out) -> int:
    """`cranfield eval -R diversity QRELS RUN...`: ndeval's CSV for each run."""
    from ..errors import CranfieldError
    from ..formats.runs import read_runs
    if len(args.files) < 2:
        raise CranfieldError("eval -R diversity needs a subtopic judgments file and at least one run file")
    w = Warnings()
    q = read_diversity_qrels(args.files[0], w)
    runs = read_runs(args.files[1:], w)
    for p in w:
        print(f"warning: {p}", file=__import__("sys").stderr)
    table = evaluate_diversity(q, runs, alpha=args.alpha, beta=args.beta,
                               order="traditional" if args.traditional else "default", complete=args.complete,
                               rel_level=args.rel_level if args.rel_level is not None else 1)
    if table.empty:
        raise CranfieldError("no topics with both results and subtopic judgments")
    out.write("\n".join(ndeval_lines(table)) + "\n")
    return 0
