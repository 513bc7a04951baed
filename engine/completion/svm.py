"""The SVM relevance classifier (Buettcher, Clarke, Yeung and Soboroff 2007, section 3.2).

Documents become L1-normalized TF-IDF vectors over the most frequent terms of the collection; a linear
SVM (scikit-learn's libsvm `SVC(kernel="linear")`, an unregularized bias like SVMlight) is trained on the
topic's judged documents with SVMlight's default C = 1 / mean(x.x). A probability of relevance comes from
Platt's sigmoid fitted to the training decision values. scikit-learn is the optional extra `predict`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import CranfieldError
from ..documents.text import Background, platt, sigmoid

MAX_TERMS = 10 ** 6


def sklearn_available() -> bool:
    """True when scikit-learn can be imported (the SVM classifier needs it)."""
    import importlib.util
    return importlib.util.find_spec("sklearn") is not None


def require_sklearn():
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise CranfieldError("the SVM classifier needs scikit-learn: pip install 'cranfield[predict]' "
                             "(or pip install scikit-learn), or use --classifier kld") from None


def svmlight_c(x) -> float:
    """SVMlight's default C: 1 / mean(x . x) over the training vectors."""
    sq = np.asarray(x.multiply(x).sum(axis=1)).ravel()
    m = float(sq.mean()) if len(sq) else 0.0
    return 1.0 / m if m > 0 else 1.0


class SVMClassifier:
    """Per-topic linear SVM over TF-IDF vectors; `fit`, then `predict` / `predict_proba`."""

    name = "svm"

    def __init__(self, background: Background, max_terms: int = MAX_TERMS, C: float | None = None):
        require_sklearn()
        self.bg = background
        self.max_terms = int(max_terms)
        self.C = C
        self.model = None
        self.constant: bool | None = None
        self.threshold = 0.0
        self.n_train = 0
        self.n_rel = 0
        self._ab = (0.0, 0.0)

    def vectors(self, texts: Sequence[str]):
        """The TF-IDF vectors the SVM sees for these texts."""
        return self.bg.tfidf(self.bg.counts(texts)[0], self.max_terms)

    def fit(self, texts: Sequence[str], labels) -> "SVMClassifier":
        return self.fit_counts(self.bg.counts(texts)[0], labels)

    def fit_counts(self, counts, labels) -> "SVMClassifier":
        """Train on a documents x terms count matrix (`Background.counts`)."""
        from sklearn.svm import SVC

        y = np.asarray(labels, bool)
        if len(y) != counts.shape[0]:
            raise CranfieldError("documents and labels differ in length")
        self.n_train, self.n_rel = len(y), int(y.sum())
        if y.all() or not y.any():  # one class only: nothing to separate
            self.constant = bool(y.all()) if len(y) else False
            self.model = None
            return self
        x = self.bg.tfidf(counts, self.max_terms)
        c = svmlight_c(x) if self.C is None else float(self.C)
        self.C_used = c
        self.model = SVC(kernel="linear", C=c).fit(x, y)
        self.constant = None
        self._ab = platt(self.model.decision_function(x), y)
        return self

    def score_counts(self, counts) -> np.ndarray:
        """The SVM decision value per row of a count matrix (positive: predicted relevant)."""
        if self.model is None:
            if self.constant is None:
                raise CranfieldError("the classifier is not trained (fit it first)")
            return np.full(counts.shape[0], 1.0 if self.constant else -1.0)
        if counts.shape[0] == 0:
            return np.zeros(0)
        return self.model.decision_function(self.bg.tfidf(counts, self.max_terms))

    def proba_scores(self, s: np.ndarray) -> np.ndarray:
        """Probability of relevance for decision values `s` (Platt's sigmoid)."""
        if self.model is None:
            return np.full(len(s), 1.0 if self.constant else 0.0)
        a, b = self._ab
        return sigmoid(a, b, s)

    def decision_function(self, texts: Sequence[str]) -> np.ndarray:
        return self.score_counts(self.bg.counts(texts)[0])

    def decide(self, s: np.ndarray) -> np.ndarray:
        """Predicted relevant for decision values `s`: positive."""
        return np.asarray(s) > self.threshold

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        return self.decision_function(texts) > self.threshold

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.proba_scores(self.decision_function(texts))
