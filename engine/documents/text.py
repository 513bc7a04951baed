"""Tokens, the collection background model and TF-IDF vectors for the relevance classifiers."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; punctuation and underscores separate)."""
    return _TOKEN.findall(text.lower())


@dataclass
class Background:
    """Collection statistics: term index, collection and document frequencies, document count."""

    index: dict[str, int]
    cf: np.ndarray
    df: np.ndarray
    ndocs: int

    @classmethod
    def from_counts(cls, cf: dict[str, int], df: dict[str, int], ndocs: int) -> "Background":
        terms = sorted(cf, key=lambda t: (-cf[t], t))  # most frequent first: a prefix is a top-k vocabulary
        return cls({t: i for i, t in enumerate(terms)},
                   np.fromiter((cf[t] for t in terms), np.float64, len(terms)),
                   np.fromiter((df.get(t, 0) for t in terms), np.float64, len(terms)), int(ndocs))

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> "Background":
        cf: Counter = Counter()
        df: Counter = Counter()
        for t in texts:
            toks = tokenize(t)
            cf.update(toks)
            df.update(set(toks))
        return cls.from_counts(cf, df, len(texts))

    @classmethod
    def from_store(cls, store) -> "Background":
        cf, df, n = store.term_stats()
        return cls.from_counts(cf, df, n)

    @property
    def p(self) -> np.ndarray:
        """The background language model p(w | C) over the index."""
        return self.cf / max(self.cf.sum(), 1.0)

    def counts(self, texts: Sequence[str], max_terms: int | None = None):
        """Documents x terms count matrix (CSR) over the index (or its `max_terms` most frequent terms);
        terms outside that vocabulary are dropped, as the paper removes them. Also returns the length of
        each document in tokens before the drop."""
        from scipy import sparse

        limit = len(self.index) if max_terms is None else min(max_terms, len(self.index))
        idx = self.index
        rows, cols, vals, lens = [], [], [], np.zeros(len(texts), np.float64)
        for i, t in enumerate(texts):
            toks = tokenize(t)
            lens[i] = len(toks)
            c = Counter(idx.get(w, -1) for w in toks)
            c.pop(-1, None)
            for j, n in c.items():
                if j < limit:
                    rows.append(i)
                    cols.append(j)
                    vals.append(n)
        m = sparse.csr_matrix((np.asarray(vals, np.float64), (np.asarray(rows, np.int64), np.asarray(cols, np.int64))),
                              shape=(len(texts), limit))
        m.sum_duplicates()
        m.sort_indices()
        return m, lens

    def tfidf(self, counts, max_terms: int | None = 10 ** 6):
        """L1-normalized TF-IDF vectors from a count matrix: f(T, D) x log(|D| / |D_T|) over the
        `max_terms` most frequent terms of the collection; other terms are dropped (Buettcher et al.
        2007, section 3.2)."""
        from scipy import sparse

        k = counts.shape[1] if max_terms is None else min(max_terms, counts.shape[1])
        x = counts[:, :k]
        idf = np.log(self.ndocs / np.maximum(self.df[:k], 1.0))
        x = x @ sparse.diags(idf)
        norm = np.asarray(abs(x).sum(axis=1)).ravel()
        norm[norm == 0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norm) @ x)


def platt(scores: np.ndarray, labels: np.ndarray, iters: int = 100) -> tuple[float, float]:
    """(a, b) of Platt's sigmoid P(rel | s) = 1 / (1 + exp(-(a s + b))), fitted by Newton's method with
    Platt's smoothed targets (so it stays finite when the training scores separate the classes)."""
    s = np.asarray(scores, np.float64)
    y = np.asarray(labels, bool)
    npos, nneg = int(y.sum()), int((~y).sum())
    t = np.where(y, (npos + 1.0) / (npos + 2.0), 1.0 / (nneg + 2.0))
    a, b = 0.0, float(np.log((npos + 1.0) / (nneg + 1.0)))
    for _ in range(iters):
        z = np.clip(a * s + b, -500, 500)
        p = 1.0 / (1.0 + np.exp(-z))
        g = np.array([np.sum((p - t) * s), np.sum(p - t)])
        w = p * (1 - p) + 1e-12
        h = np.array([[np.sum(w * s * s) + 1e-9, np.sum(w * s)], [np.sum(w * s), np.sum(w) + 1e-9]])
        step = np.linalg.solve(h, g)
        a, b = a - step[0], b - step[1]
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(a), float(b)


def sigmoid(a: float, b: float, s: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(a * np.asarray(s, np.float64) + b, -500, 500)))


def balanced_threshold(scores: np.ndarray, labels: np.ndarray, *, lower_is_relevant: bool) -> float:
    """The threshold that classifies exactly as many training documents relevant as are relevant, so that
    precision equals recall on the training data (midpoint between the two scores around the cut)."""
    s = np.sort(np.asarray(scores, np.float64))
    if not lower_is_relevant:
        s = -s[::-1]
    n_rel = int(np.asarray(labels, bool).sum())
    if n_rel == 0:
        th = -np.inf
    elif n_rel >= len(s):
        th = np.inf
    else:
        lo, hi = s[n_rel - 1], s[n_rel]
        th = (lo + hi) / 2.0 if np.isfinite(lo) and np.isfinite(hi) else (lo if np.isfinite(lo) else hi)
    return float(th) if lower_is_relevant else float(-th)
