"""The KLD relevance classifier (Buettcher, Clarke, Yeung and Soboroff 2007, section 3.1).

M_R is the unigram model of the topic's judged relevant documents, M_D a document's; both are smoothed
with the collection background by linear interpolation, p(w|M) = (1 - lambda) p_ml(w|M) + lambda p(w|C),
lambda = 0.2. A document is predicted relevant when KLD(M_D, M_R) < theta, with theta chosen so that
exactly |R| training documents fall below it: precision equals recall on the training documents.
A probability of relevance comes from Platt's sigmoid fitted to the training KLD values.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import CranfieldError
from ..documents.text import Background, balanced_threshold, platt, sigmoid

LAMBDA = 0.2


class KLDClassifier:
    """Per-topic KLD classifier; `fit` on judged texts and labels, then `predict` / `predict_proba`."""

    name = "kld"

    def __init__(self, background: Background, lam: float = LAMBDA):
        if not 0.0 < lam <= 1.0:
            raise CranfieldError(f"lambda must be in (0, 1], got {lam}")
        self.bg = background
        self.lam = float(lam)
        self._pc = background.p
        self.threshold = np.nan
        self.n_train = 0
        self.n_rel = 0
        self._pr: np.ndarray | None = None
        self._k = 0.0
        self._ab = (0.0, 0.0)

    def fit(self, texts: Sequence[str], labels) -> "KLDClassifier":
        return self.fit_counts(self.bg.counts(texts)[0], labels)

    def fit_counts(self, x, labels) -> "KLDClassifier":
        """Train on a documents x terms count matrix (`Background.counts`)."""
        y = np.asarray(labels, bool)
        if len(y) != x.shape[0]:
            raise CranfieldError("documents and labels differ in length")
        self.n_train, self.n_rel = len(y), int(y.sum())
        lam, pc = self.lam, self._pc
        rel_counts = np.asarray(x[y].sum(axis=0)).ravel()
        total = rel_counts.sum()
        p_ml = rel_counts / total if total > 0 else np.zeros_like(pc)
        self._pr = (1.0 - lam) * p_ml + lam * pc
        # terms absent from R contribute lambda*pc*log(lambda*pc / (lambda*pc)) = 0 to the constant part
        nz = rel_counts > 0
        lp = lam * pc[nz]
        self._k = float(np.sum(lp * np.log(lp / self._pr[nz]))) if total > 0 else 0.0
        s = self._kld(x)
        self.threshold = balanced_threshold(s, y, lower_is_relevant=True)
        fin = np.isfinite(s)
        self._ab = platt(-s[fin], y[fin]) if fin.any() else (0.0, 0.0)
        self._train_scores = s
        return self

    def score_counts(self, x) -> np.ndarray:
        """KLD(M_D, M_R) per row of a count matrix."""
        return self._kld(x)

    def proba_scores(self, s: np.ndarray) -> np.ndarray:
        """Probability of relevance for KLD values `s` (Platt's sigmoid; 0 where undefined)."""
        a, b = self._ab
        fin = np.isfinite(s)
        return np.where(fin, sigmoid(a, b, -np.where(fin, s, 0.0)), 0.0)

    def _kld(self, x) -> np.ndarray:
        """KLD(M_D, M_R) for each row of a count matrix; +inf for a document with no known term."""
        if self._pr is None:
            raise CranfieldError("the classifier is not trained (fit it first)")
        lam, pc, pr = self.lam, self._pc, self._pr
        lens = np.asarray(x.sum(axis=1)).ravel()
        rows = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
        cols = x.indices
        pd_ = (1.0 - lam) * x.data / lens[rows] + lam * pc[cols]
        lp = lam * pc[cols]
        term = pd_ * np.log(pd_ / pr[cols]) - lp * np.log(lp / pr[cols])
        out = np.full(x.shape[0], self._k)
        np.add.at(out, rows, term)
        out[lens == 0] = np.inf
        return out

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """KLD(M_D, M_R) per text (lower is more like the relevant documents)."""
        x, _ = self.bg.counts(texts)
        return self._kld(x)

    def decide(self, s: np.ndarray) -> np.ndarray:
        """Predicted relevant for scores `s`: KLD below the threshold."""
        return np.asarray(s) < self.threshold

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.score(texts) < self.threshold

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.proba_scores(self.score(texts))
