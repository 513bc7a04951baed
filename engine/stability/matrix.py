"""Score matrices (topics x systems) from the long evaluation table, rank helpers and progress reports."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .correlation import kendall_tau  # noqa: F401  (one implementation, re-exported)
from ..errors import CranfieldError

Progress = Callable[[float, str], None] | None


def report(progress: Progress, fraction: float, message: str) -> None:
    """Call `progress` when given (fraction clipped to [0, 1])."""
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def score_matrix(df: pd.DataFrame, measure: str, *, fill: float | None = None) -> pd.DataFrame:
    """Topic x run matrix of one measure from the long table (run, topic, measure, value).

    A (topic, run) cell missing from the table raises, unless `fill` is given (e.g. 0.0, trec_eval -c).
    """
    if len(df) == 0:
        raise CranfieldError("no evaluation results: the score table is empty")
    meas = df["measure"].astype(str)
    sub = df[meas.to_numpy() == measure]
    if len(sub) == 0:
        known = sorted(set(meas.tolist()))
        raise CranfieldError(f"measure {measure!r} is not in the results (have: {', '.join(known[:20])})")
    runs = list(dict.fromkeys(sub["run"].astype(str).tolist()))
    m = sub.assign(run=sub["run"].astype(str), topic=sub["topic"].astype(str)).pivot_table(
        index="topic", columns="run", values="value", aggfunc="first", observed=True)
    m = m.reindex(columns=runs)
    m = m.reindex(index=sorted(m.index, key=lambda s: s.encode("utf-8")))
    m.columns.name = None
    m.index.name = "topic"
    if m.isna().any().any():
        if fill is None:
            bad = m.isna().sum().sort_values(ascending=False)
            bad = bad[bad > 0]
            raise CranfieldError(
                f"{measure}: {int(bad.sum())} (topic, run) scores are missing (e.g. run {bad.index[0]!r} "
                f"lacks {int(bad.iloc[0])} topics); evaluate with -c (complete) or pass fill=0")
        m = m.fillna(fill)
    return m.astype(np.float64)


def as_matrix(scores) -> tuple[np.ndarray, list[str], list[str]]:
    """(values topics x systems, topic names, system names) from an ndarray or DataFrame; checks it."""
    if isinstance(scores, pd.DataFrame):
        try:
            x = scores.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise CranfieldError(f"score matrix has non-numeric values ({exc})") from None
        topics = [str(t) for t in scores.index]
        systems = [str(s) for s in scores.columns]
    else:
        try:
            x = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise CranfieldError(f"score matrix has non-numeric values ({exc})") from None
        if x.ndim != 2:
            raise CranfieldError(f"a score matrix must be 2-D (topics x systems), got shape {x.shape}")
        topics = [str(i + 1) for i in range(x.shape[0])]
        systems = [f"s{j + 1}" for j in range(x.shape[1])]
    if x.ndim != 2:
        raise CranfieldError("a score matrix must be 2-D (topics x systems)")
    if not np.isfinite(x).all():
        r, c = np.argwhere(~np.isfinite(x))[0]
        raise CranfieldError(f"score matrix has {int((~np.isfinite(x)).sum())} missing or non-finite values "
                             f"(first: topic {topics[r]!r}, system {systems[c]!r}); fill or drop them first")
    return x, topics, systems


def tau_ap(truth: np.ndarray, est: np.ndarray) -> float:
    """Yilmaz-Aslam-Robertson AP rank correlation of ranking `est` against the reference `truth`
    (top-weighted; 1 = identical order). Ties in `est` count as half-correct."""
    truth, est = np.asarray(truth, float), np.asarray(est, float)
    n = len(truth)
    if n < 2:
        return float("nan")
    order = np.argsort(-est, kind="stable")          # systems in estimated order
    t = truth[order]
    e = est[order]
    # for the system at estimated position i (i >= 1): share of systems above it that truth also puts above
    above = (t[None, :] > t[:, None]).astype(float) + 0.5 * (t[None, :] == t[:, None])
    tri = np.tril(np.ones((n, n), bool), k=-1)        # j < i
    tie_e = e[None, :] == e[:, None]
    above = np.where(tie_e, 0.5, above)
    c = (above * tri).sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (c / np.arange(1, n)).sum() - 1.0)


def rank_positions(means: np.ndarray) -> np.ndarray:
    """1-based rank of every system by decreasing mean (ties share the better rank order by index)."""
    order = np.argsort(-np.asarray(means, float), kind="stable")
    pos = np.empty(len(order), np.int64)
    pos[order] = np.arange(1, len(order) + 1)
    return pos
