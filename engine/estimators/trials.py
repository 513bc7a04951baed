"""Fast re-evaluation of the same runs under many judgment sets (sampling trials).

`base_ranked(pool_qrels, runs)` builds the ranked lists once against the full pool; `with_judgments`
then swaps in one trial's grades / strata / probabilities (arrays aligned with the pool's rows)
without re-sorting anything, so hundreds of trials cost a few milliseconds each.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..util.lazy import lazy_module
from ..ranking.build import DENSE_LEVELS, build_ranked, topic_judgments
from ..ranking.ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED, EvalOptions, Ranked
from ._rows import row_index, topic_codes

pd = lazy_module("pandas")


def base_ranked(pool: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None) -> Ranked:
    """Ranked lists of `runs` joined with the pool (topic, doc, grade[, stratum, prob])."""
    pool = pool.reset_index(drop=True)
    r, _ = build_ranked(pool, runs, options)
    r.qrels = pool
    row_index(r)
    return r


def with_judgments(base: Ranked, grade: np.ndarray, stratum: np.ndarray | None = None,
                   prob: np.ndarray | None = None) -> Ranked:
    """`base` with the pool's grades replaced (grade < 0: pooled, not judged), plus strata/probabilities."""
    q = base.qrels
    grade = np.asarray(grade, np.int64)
    idx = base.caches["est"]["row_index"]
    rel = np.full(base.n_rows, RELVALUE_NONPOOL, np.int64)
    ok = idx >= 0
    g = grade[idx[ok]]
    rel[ok] = np.where(g < 0, RELVALUE_UNJUDGED, g)
    tc = base.caches["est"].get("qrels_topics")
    if tc is None:
        tc = topic_codes(base, q)
        base.caches["est"]["qrels_topics"] = tc
    T = len(base.topic_names)
    judged = (grade >= 0) & (tc >= 0)
    G = max(int(grade.max()) + 1 if len(grade) else 1, 1)
    if G > DENSE_LEVELS:                        # large grades: a column per grade judged
        t_levels, t_off, t_grades, lg = topic_judgments(T, tc[judged], grade[judged])
    else:
        t_levels, lg = np.zeros((T, G), np.int64), None
        np.add.at(t_levels, (tc[judged], grade[judged]), 1)
        srt = np.lexsort((-grade[judged], tc[judged]))
        t_grades = grade[judged][srt]
        t_off = np.concatenate(([0], np.cumsum(np.bincount(tc[judged], minlength=T)))).astype(np.int64)
    new = replace(base, rel=rel, t_levels=t_levels, t_grades=t_grades, t_grades_offsets=t_off, t_level_grades=lg)
    arrays = {"grade": grade}
    if stratum is not None:
        arrays["stratum"] = np.asarray(stratum, np.int64)
    if prob is not None:
        arrays["prob"] = np.asarray(prob, np.float64)
    # the pool's topic/doc frame is shared; the trial's columns live in the estimator cache (qcol),
    # so no DataFrame is built per trial. Use `judgments_frame` for a standalone qrels table.
    new.qrels = q
    new.caches["est"] = {"row_index": idx, "qrels_topics": tc, "qrels_arrays": arrays}
    return new


def judgments_frame(r: Ranked) -> pd.DataFrame:
    """The qrels table of a trial Ranked (pool topic/doc with the trial's grade/stratum/prob)."""
    q = r.qrels[["topic", "doc"]].copy()
    for k, v in r.caches.get("est", {}).get("qrels_arrays", {}).items():
        q[k] = v
    return q
