"""ndeval's measures (TREC Web track diversity) over subtopic judgments: the kernel `cranfield eval -R
diversity` (engine.official.ndeval) and the library's diversity names (alpha_nDCG@20, ERR_IA@20, ...) share.
Definitions as NIST's ndeval computes them; see engine.official.ndeval for the order of ranked lists."""
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
        # as ndeval (qrelPopulateResultList): a (subtopic, doc) judged more than once takes its last line
        # (file order), while every relevant line counts in the subtopic's number of relevant documents
        # (nrelSub), which decides the subtopics that count (N) and MAP-IA's denominators
        pos = rows[rows["grade"] >= rel_level]
        subs = list(dict.fromkeys(pos["subtopic"].tolist()))
        idx = {s: i for i, s in enumerate(subs)}
        self.n = len(subs)
        last = rows.drop_duplicates(["subtopic", "doc"], keep="last")
        rel = last[last["grade"] >= rel_level]
        self.doc_subs: dict[str, list[int]] = {}
        for d, s in zip(rel["doc"], rel["subtopic"]):
            self.doc_subs.setdefault(d, []).append(idx[s])
        self.r_per_sub = np.bincount([idx[s] for s in pos["subtopic"]], minlength=self.n)
        g = rows.groupby(["subtopic", "doc"], sort=False)["grade"]
        self.conflicts = int(((g.transform("nunique") > 1) & ~rows.duplicated(["subtopic", "doc"])).sum())

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
