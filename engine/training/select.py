"""Selecting training documents from a depth-k pool (kanoulas thesis 4.1.2) and the selected sets'
characteristics: precision, recall (Figure 4.1) and discrepancy (Figure 4.2).

Methods, each at a per-topic budget that is a share of the topic's depth-100 pool:
  depth    depth-k pooling (best-ranked documents first)          -> engine.pooling 'depth'
  infap    uniform random sample of the pool                      -> engine.pooling 'uniform'
  statap   AP-prior unequal-probability sample                    -> engine.pooling 'statap'
  mtc      MTC, greedy online (replays the complete judgments)    -> engine.pooling 'mtc'
  hedge    Hedge, online                                          -> engine.pooling 'hedge'
  letor    LETOR: top of a BM25-like ranking plus the relevant documents beyond it
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError

METHODS = ("depth", "infap", "statap", "mtc", "hedge", "letor")
POOL_STRATEGY = {"depth": "depth", "infap": "uniform", "statap": "statap", "mtc": "mtc", "hedge": "hedge"}
PERCENTAGES = (0.6, 1, 2, 5, 10, 20, 40, 60)
"""Selection percentages of the depth-100 pool (thesis: 0.6% to 60%)."""


def select(method: str, runs: pd.DataFrame, qrels: pd.DataFrame, percent: float, *, depth: int = 100,
           seed: int = 0, features: pd.DataFrame | None = None, bm25: str = "f1") -> pd.DataFrame:
    """The selected (topic, doc) pairs of `method` at `percent` % of each topic's depth-`depth` pool.

    `qrels` are the complete judgments (the online methods replay them, LETOR adds the relevant
    documents beyond its BM25 cut); `features` (with column `bm25`) is needed by 'letor'.
    Reproducible from (method, percent, depth, seed).
    """
    from ..pooling import build_pool
    if method not in METHODS:
        raise CranfieldError(f"unknown selection method {method!r}; choose one of {', '.join(METHODS)}")
    if not 0 < percent <= 100:
        raise CranfieldError(f"selection percentage must be in (0, 100], got {percent}")
    frac = percent / 100.0
    if method == "letor":
        if features is None or bm25 not in features.columns:
            raise CranfieldError(f"the LETOR method needs feature column {bm25} (a BM25-like score)")
        return _letor(features, qrels, frac, bm25)
    strategy = POOL_STRATEGY[method]
    budget = None if frac >= 1 else frac
    oracle = qrels if strategy in ("mtc", "hedge") else None
    pool = build_pool(runs, strategy, budget, depth=depth, seed=seed, oracle=oracle)
    sel = pool.selected()
    return pd.DataFrame({"topic": sel["topic"].astype(str).to_numpy(object),
                         "doc": sel["doc"].astype(str).to_numpy(object)})


def _letor(features: pd.DataFrame, qrels: pd.DataFrame, frac: float, bm25: str) -> pd.DataFrame:
    """Per topic: the largest top-m of the BM25 ranking such that m plus the relevant documents
    below m fit the budget; when the relevant documents alone exceed it, the best-scored of them."""
    rel = _relevant_set(qrels)
    out_t, out_d = [], []
    for topic, g in features.groupby(features["topic"].astype(str), sort=True):
        g = g.sort_values([bm25, "doc"], ascending=[False, True], kind="mergesort")
        docs = g["doc"].astype(str).to_numpy(object)
        n = len(docs)
        b = n if frac >= 1 else max(1, int(round(frac * n)))
        is_rel = np.array([(topic, d) in rel for d in docs])
        rel_below = is_rel[::-1].cumsum()[::-1]            # relevant at positions >= i
        rel_below = np.concatenate((rel_below, [0]))        # m = i keeps docs[:i]
        total = np.arange(n + 1) + rel_below
        ok = np.flatnonzero(total <= b)
        m = int(ok.max()) if len(ok) else 0
        if len(ok):                                      # total is non-decreasing in m
            keep = np.zeros(n, bool)
            keep[:m] = True
            keep |= is_rel & (np.arange(n) >= m)
            chosen = docs[keep]
        else:
            chosen = docs[is_rel][:b]
        out_t += [topic] * len(chosen)
        out_d += list(chosen)
    return pd.DataFrame({"topic": np.asarray(out_t, dtype=object), "doc": np.asarray(out_d, dtype=object)})


def _relevant_set(qrels: pd.DataFrame, rel_level: int = 1) -> set:
    r = qrels[qrels["grade"] >= rel_level]
    return set(zip(r["topic"].astype(str), r["doc"].astype(str)))


def precision_recall(selected: pd.DataFrame, qrels: pd.DataFrame, rel_level: int = 1) -> tuple[float, float]:
    """Share of relevant among the selected documents, and share of all relevant documents (of
    the complete judgments) selected; totals over topics (thesis Figure 4.1)."""
    rel = _relevant_set(qrels, rel_level)
    pairs = set(zip(selected["topic"].astype(str), selected["doc"].astype(str)))
    hit = len(pairs & rel)
    return (hit / len(pairs) if pairs else 0.0, hit / len(rel) if rel else 0.0)


def _distributions(X: np.ndarray, smooth: float = 0.5) -> np.ndarray:
    """Feature vectors as smoothed discrete distributions: features scaled to [0, 1] over the
    rows given (one topic), each row normalized, then mixed with the topic's mean distribution
    (Jelinek-Mercer `smooth`), the analogue of the thesis's smoothed document language models."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    Z = (X - lo) / np.where(hi > lo, hi - lo, 1.0) + 1e-3
    P = Z / Z.sum(axis=1, keepdims=True)
    bg = P.mean(axis=0, keepdims=True)
    return (1 - smooth) * P + smooth * bg


def _sym_kl(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Symmetrized KL divergence between paired rows of P and Q."""
    lr = np.log(P) - np.log(Q)
    return ((P - Q) * lr).sum(axis=1)


def discrepancy(selected: pd.DataFrame, features: pd.DataFrame, qrels: pd.DataFrame, *, rel_level: int = 1,
                max_pairs: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Mean symmetrized KL divergence over pairs of selected documents' feature distributions:
    (among relevant, between relevant and non-relevant), averaged over topics (thesis Figure 4.2).

    Distributions are built per topic over all its pooled documents (so a selection's
    discrepancies are comparable with the complete collection's); at most `max_pairs` random
    pairs per topic and kind. NaN where a topic set has no such pair.
    """
    from .features import feature_columns
    cols = feature_columns(features)
    rel = _relevant_set(qrels, rel_level)
    sel = set(zip(selected["topic"].astype(str), selected["doc"].astype(str)))
    rng = np.random.default_rng(seed)
    rr, rn = [], []
    for topic, g in features.groupby(features["topic"].astype(str), sort=True):
        P = _distributions(g[cols].to_numpy(np.float64))
        docs = g["doc"].astype(str).to_numpy(object)
        mask = np.array([(topic, d) in sel for d in docs])
        isr = np.array([(topic, d) in rel for d in docs])
        R = np.flatnonzero(mask & isr)
        N = np.flatnonzero(mask & ~isr)
        if len(R) >= 2:
            i, j = _pairs(len(R), len(R), max_pairs, rng, distinct=True)
            rr.append(_sym_kl(P[R[i]], P[R[j]]).mean())
        if len(R) and len(N):
            i, j = _pairs(len(R), len(N), max_pairs, rng)
            rn.append(_sym_kl(P[R[i]], P[N[j]]).mean())
    return (float(np.mean(rr)) if rr else float("nan"), float(np.mean(rn)) if rn else float("nan"))


def _pairs(a: int, b: int, cap: int, rng: np.random.Generator, distinct: bool = False):
    """All index pairs (i < j when `distinct`), or `cap` random ones when there are more."""
    total = a * (a - 1) // 2 if distinct else a * b
    if total <= cap:
        if distinct:
            return np.triu_indices(a, 1)
        i, j = np.meshgrid(np.arange(a), np.arange(b), indexing="ij")
        return i.ravel(), j.ravel()
    i = rng.integers(0, a, cap)
    j = rng.integers(0, b, cap)
    if distinct:
        j = np.where(j == i, (j + 1) % a, j)
    return i, j


def characterize(selected: pd.DataFrame, features: pd.DataFrame, qrels: pd.DataFrame, *, seed: int = 0) -> dict:
    """Size, precision, recall and discrepancies of one selected set."""
    p, r = precision_recall(selected, qrels)
    d_rr, d_rn = discrepancy(selected, features, qrels, seed=seed)
    return {"docs": int(len(selected)), "precision": p, "recall": r, "disc_rel": d_rr, "disc_rel_nonrel": d_rn}
