"""Learning-to-rank algorithms (thesis 4.1.3): a linear pairwise RankSVM-style ranker, RankNet
(linear and one hidden layer), linear regression, and LambdaMART through LightGBM (optional extra
`ltr`). Each ranker has `fit(X, y, qid)` and `predict(X)`; features are standardized on the
training data. The numpy rankers minimize their pairwise cost with L-BFGS (scipy), deterministic
in `seed`.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ..errors import CranfieldError

LIGHTGBM_HINT = "LambdaMART needs LightGBM: pip install 'cranfield[ltr]' (or pip install lightgbm)"


def preference_pairs(y: np.ndarray, qid: np.ndarray, max_pairs: int = 5000, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j) of the same query with y[i] > y[j]; at most `max_pairs` random ones per query."""
    rng = np.random.default_rng(seed)
    I, J = [], []
    qid = np.asarray(qid)
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        yy = y[idx]
        a, b = np.nonzero(yy[:, None] > yy[None, :])
        if len(a) > max_pairs:
            k = rng.choice(len(a), max_pairs, replace=False)
            a, b = a[k], b[k]
        I.append(idx[a])
        J.append(idx[b])
    if not I:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(I).astype(np.int64), np.concatenate(J).astype(np.int64)


class _Standardized:
    """Base: remembers the training mean and sd of each feature."""

    name = "ranker"

    def _fit_scale(self, X: np.ndarray) -> np.ndarray:
        self.mu = X.mean(axis=0)
        sd = X.std(axis=0)
        self.sd = np.where(sd > 0, sd, 1.0)
        return (X - self.mu) / self.sd

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, np.float64) - self.mu) / self.sd

    def fit(self, X, y, qid):  # pragma: no cover - interface
        raise NotImplementedError

    def predict(self, X) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class RankSVM(_Standardized):
    """Linear pairwise ranker: L2-regularized squared hinge on preference pairs (RankSVM primal)."""

    name = "ranksvm"

    def __init__(self, C: float = 1.0, max_pairs: int = 5000, seed: int = 0):
        self.C, self.max_pairs, self.seed = float(C), max_pairs, seed

    def fit(self, X, y, qid):
        Z = self._fit_scale(np.asarray(X, np.float64))
        i, j = preference_pairs(np.asarray(y), qid, self.max_pairs, self.seed)
        self.n_pairs = len(i)
        self.w = np.zeros(Z.shape[1])
        if not len(i):
            return self
        D = Z[i] - Z[j]

        def f(w):
            m = np.maximum(0.0, 1.0 - D @ w)
            loss = 0.5 * w @ w + self.C * (m ** 2).mean()
            grad = w - 2.0 * self.C * (D * m[:, None]).mean(axis=0)
            return loss, grad

        self.w = minimize(f, self.w, jac=True, method="L-BFGS-B", options={"maxiter": 500}).x
        return self

    def predict(self, X):
        return self._scale(X) @ self.w


class RankNet(_Standardized):
    """RankNet: the cross-entropy of P(i before j) = sigmoid(s_i - s_j) on preference pairs; `hidden`
    = 0 for a linear scorer, else one tanh hidden layer of that many units."""

    def __init__(self, hidden: int = 0, l2: float = 1e-3, max_pairs: int = 5000, seed: int = 0,
                 maxiter: int = 300):
        self.hidden, self.l2, self.max_pairs, self.seed, self.maxiter = int(hidden), float(l2), max_pairs, seed, maxiter
        self.name = "ranknet" if not self.hidden else f"ranknet{self.hidden}"

    def _unpack(self, theta, d):
        h = self.hidden
        if not h:
            return theta, None, None
        W = theta[:d * h].reshape(d, h)
        b = theta[d * h:d * h + h]
        v = theta[d * h + h:]
        return W, b, v

    def _score(self, theta, Z):
        W, b, v = self._unpack(theta, Z.shape[1])
        if not self.hidden:
            return Z @ W, None
        H = np.tanh(Z @ W + b)
        return H @ v, H

    def fit(self, X, y, qid):
        Z = self._fit_scale(np.asarray(X, np.float64))
        n, d = Z.shape
        i, j = preference_pairs(np.asarray(y), qid, self.max_pairs, self.seed)
        self.n_pairs = len(i)
        rng = np.random.default_rng(self.seed)
        h = self.hidden
        size = d if not h else d * h + h + h
        theta = np.zeros(size) if not h else rng.normal(0, 0.3, size)
        if not len(i):
            self.theta = np.zeros(size)
            return self

        def f(th):
            s, H = self._score(th, Z)
            diff = s[i] - s[j]
            loss = np.logaddexp(0.0, -diff).mean() + 0.5 * self.l2 * th @ th
            g_diff = -1.0 / (1.0 + np.exp(np.clip(diff, -50, 50))) / len(i)   # d loss / d diff
            g_s = np.bincount(i, g_diff, n) - np.bincount(j, g_diff, n)
            if not h:
                grad = Z.T @ g_s
            else:
                W, b, v = self._unpack(th, d)
                g_v = H.T @ g_s
                g_pre = (g_s[:, None] * v[None, :]) * (1 - H ** 2)
                grad = np.concatenate(((Z.T @ g_pre).ravel(), g_pre.sum(axis=0), g_v))
            return loss, grad + self.l2 * th

        self.theta = minimize(f, theta, jac=True, method="L-BFGS-B", options={"maxiter": self.maxiter}).x
        return self

    def predict(self, X):
        return self._score(self.theta, self._scale(X))[0]


class Regression(_Standardized):
    """Pointwise baseline: ridge least squares of the grade on the features (thesis 'Regression')."""

    name = "regression"

    def __init__(self, l2: float = 1e-3, **_):
        self.l2 = float(l2)

    def fit(self, X, y, qid):
        Z = self._fit_scale(np.asarray(X, np.float64))
        A = np.column_stack((Z, np.ones(len(Z))))
        self.w = np.linalg.solve(A.T @ A + self.l2 * np.eye(A.shape[1]), A.T @ np.asarray(y, np.float64))
        return self

    def predict(self, X):
        Z = self._scale(X)
        return Z @ self.w[:-1] + self.w[-1]


def lightgbm_available() -> bool:
    """Whether the optional LightGBM dependency imports."""
    try:
        import lightgbm  # noqa: F401
    except Exception:
        return False
    return True


class LambdaMART:
    """LambdaMART: LightGBM's lambdarank objective (gradient-boosted trees; optional extra `ltr`)."""

    name = "lambdamart"

    def __init__(self, n_estimators: int = 100, num_leaves: int = 15, learning_rate: float = 0.1,
                 min_child_samples: int = 5, seed: int = 0, **_):
        if not lightgbm_available():
            raise CranfieldError(LIGHTGBM_HINT)
        self.params = dict(n_estimators=n_estimators, num_leaves=num_leaves, learning_rate=learning_rate,
                           min_child_samples=min_child_samples, random_state=seed, n_jobs=1, verbose=-1,
                           deterministic=True, force_col_wise=True)

    def fit(self, X, y, qid):
        import lightgbm as lgb
        qid = np.asarray(qid)
        order = np.argsort(qid, kind="stable")
        _, sizes = np.unique(qid[order], return_counts=True)
        y = np.asarray(y)[order]
        self.constant = len(np.unique(y)) < 2
        if self.constant:
            return self
        self.model = lgb.LGBMRanker(objective="lambdarank", **self.params)
        self.model.fit(np.asarray(X, np.float64)[order], y.astype(int), group=sizes)
        return self

    def predict(self, X):
        if self.constant:
            return np.zeros(len(X))
        return self.model.predict(np.asarray(X, np.float64))


RANKERS = {
    "ranksvm": lambda seed=0: RankSVM(seed=seed),
    "ranknet": lambda seed=0: RankNet(hidden=0, seed=seed),
    "ranknet_hidden": lambda seed=0: RankNet(hidden=8, max_pairs=1000, maxiter=150, seed=seed),
    "regression": lambda seed=0: Regression(),
    "lambdamart": lambda seed=0: LambdaMART(seed=seed),
}
"""Ranker name -> factory(seed)."""


def make_ranker(name: str, seed: int = 0):
    """A fresh ranker by name (see RANKERS); LambdaMART raises with the install hint when LightGBM is missing."""
    if name not in RANKERS:
        raise CranfieldError(f"unknown ranker {name!r}; choose one of {', '.join(RANKERS)}")
    return RANKERS[name](seed=seed)


def available_rankers() -> list[str]:
    """Rankers usable here (LambdaMART only with LightGBM installed)."""
    return [r for r in RANKERS if r != "lambdamart" or lightgbm_available()]
