"""Prediction-powered intervals with a document-level design: a model labels every document of each topic's
frame, people label a sample of those documents drawn with known inclusion probabilities pi_d (Poisson,
stratified or PPS sampling, as statAP / infAP pools record them), and topics are the outer sample.

For a measure linear in the labels, a run's value on topic t is sum_d w_d g(label_d) (w_d the document's
rank weight in the run, g the gain). Per topic and column (a run, or the difference of two runs):

    F_t = sum_{d in frame}  w_d g(m_d)            the value under the model's labels (known)
    C_t = sum_{d in sample} w_d g(m_d) / pi_d     its Horvitz-Thompson estimate from the sample
    A_t = sum_{d in sample} w_d g(h_d) / pi_d     the HT estimate of the value under people's labels
    z_t = A_t - lambda (C_t - F_t)                unbiased for y_t for any fixed lambda (E[C_t] = F_t)

lambda = 1 is PPI (F_t + sum (h - m) w / pi), lambda = 0 the human-only HT estimate, and the power-tuned
lambda = cov(A, C - F) / var(C - F) over topics (clipped to [0, 1]) minimizes the variance; in the
small-sample form it is cross-fitted over topic folds so no topic's values choose its own weight. The
estimate is mean_t z_t and, with topics a sample from their population, se^2 = var(z, ddof 1) / T
(the ultimate-cluster estimator: it carries the document design's variance and the topics' alike).
See docs/llm-judges.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import CranfieldError
from .ppi import FOLDS, MIN_TOPICS, Interval, _cols, quantile, skewness


def ht_sums(weight, gain_h, gain_m, pi, sampled, topic_codes, col_codes, n_topics: int, n_cols: int):
    """(A, C, F), topics x columns: per topic and column the HT sum of w g(h) / pi and of w g(m) / pi over
    the sampled documents, and the frame's sum of w g(m). Every argument but the sizes is per row, one row
    per (column, document): `weight` the document's rank weight in that column's run, `gain_h` / `gain_m`
    its gain under people's / the model's labels (gain_h is read only where `sampled`), `pi` its inclusion
    probability (> 0 wherever sampled), `topic_codes` / `col_codes` its topic and column (0-based)."""
    w = np.asarray(weight, np.float64)
    pi = np.asarray(pi, np.float64)
    s = np.asarray(sampled, bool)
    if np.any(s & ~(pi > 0)):
        raise CranfieldError("a sampled document has inclusion probability 0: the design is not one the "
                             "Horvitz-Thompson estimate can weight (every sampled document needs pi > 0)")
    gm = np.asarray(gain_m, np.float64)
    gh = np.where(s, np.asarray(gain_h, np.float64), 0.0)
    inv = np.divide(1.0, pi, out=np.zeros(len(pi)), where=s)
    key = np.asarray(topic_codes, np.int64) * n_cols + np.asarray(col_codes, np.int64)
    size = n_topics * n_cols
    return tuple(np.bincount(key, weights=w * v, minlength=size).reshape(n_topics, n_cols)
                 for v in (gh * inv, gm * inv, gm))


def design_lambda(A, B) -> np.ndarray:
    """The variance-minimizing lambda per column: cov(A, B) / var(B) over topics, clipped to [0, 1]
    (0 where B does not vary: the sample then says nothing about the model's error)."""
    A, B = _cols(A), _cols(B)
    cov = ((A - A.mean(0)) * (B - B.mean(0))).mean(0)
    var = np.var(B, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 0, cov / var, 0.0)
    return np.clip(lam, 0.0, 1.0)


def design_ppi_mean(A, C, F, alpha: float = 0.05, lam=None, small_n: bool = True, n_labels: int = 0,
                    n_model: int = 0) -> Interval:
    """The document-design PPI interval of the mean over topics per column. `A`, `C`, `F`: topics x columns
    from `ht_sums`. `lam` None: power-tuned (cross-fitted over FOLDS topic folds with `small_n` and at
    least 2 * FOLDS topics; topic i in fold i mod FOLDS); 1: PPI; 0: human-only. `small_n`: Student's t with
    T - 1 degrees of freedom, else the normal quantile. `n_labels` / `n_model`: human-labelled and
    model-only documents (reported as the interval's n and N)."""
    A, C, F = _cols(A), _cols(C), _cols(F)
    if not (A.shape == C.shape == F.shape):
        raise CranfieldError(f"document-design PPI: A {A.shape}, C {C.shape} and F {F.shape} do not line up")
    T = len(A)
    if T < 2:
        raise CranfieldError(f"document-design PPI needs at least 2 topics (has {T})")
    B = C - F
    if lam is None and small_n and T >= 2 * FOLDS:
        fold = np.arange(T) % FOLDS
        lam_t = np.empty_like(A)
        for k in range(FOLDS):
            lam_t[fold == k] = design_lambda(A[fold != k], B[fold != k])
        lam_shown = lam_t.mean(0)
    else:
        lam_shown = design_lambda(A, B) if lam is None else np.broadcast_to(
            np.asarray(lam, np.float64), A.shape[1:]).copy()
        lam_t = np.broadcast_to(lam_shown, A.shape)
    z = A - lam_t * B
    est = z.mean(0)
    se = np.sqrt(np.var(z, axis=0, ddof=1) / T)
    df = T - 1 if small_n else None
    q = quantile(alpha, df)
    g1 = skewness(z) if T > 2 else np.zeros(A.shape[1:])
    small = (T < MIN_TOPICS) | (T <= 25 * g1 ** 2)
    return Interval(est, est - q * se, est + q * se, se, lam_shown, int(n_labels), int(n_model), small,
                    None if df is None else float(df))


def poisson_design_variance(x, pi, sampled) -> np.ndarray:
    """Unbiased estimate, under Poisson sampling, of the design variance of one topic's HT sum of `x`
    (documents x columns): sum over the sample of (1 - pi) x^2 / pi^2. (A diagnostic: the interval's se
    comes from the spread of the per-topic estimates, which holds this part and the topics' own.)"""
    x = _cols(x)
    pi = np.asarray(pi, np.float64)
    s = np.asarray(sampled, bool)
    f = np.divide(1.0 - pi, pi ** 2, out=np.zeros(len(pi)), where=s & (pi > 0))
    return (x ** 2 * f[:, None]).sum(0)


def poisson_true_variance(x, pi) -> np.ndarray:
    """The design variance of a topic's HT sum of `x` under Poisson sampling: sum (1 - pi) x^2 / pi."""
    x = _cols(x)
    pi = np.asarray(pi, np.float64)
    f = np.divide(1.0 - pi, pi, out=np.zeros(len(pi)), where=pi > 0)
    return (x ** 2 * f[:, None]).sum(0)
