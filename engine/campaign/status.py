"""Campaign progress tables: what is judged per topic and how much of each run's top ranks is judged."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..ranking.join import judged_share_at, ranked_rows


def _objects(s: pd.Series) -> np.ndarray:
    """A column as an object array of str without a round trip through pandas' string dtype."""
    a = s.to_numpy(object)
    return a if s.dtype == object else a.astype(str).astype(object)


def top_ranks(runs: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each (run, topic) ranked within the top `k` in trec_eval order (score descending, ties by
    document id descending): (row indices in rank order, their 1-based ranks). See ranking.ranked_rows."""
    return ranked_rows(runs, k)


def judged_at_depth(runs: pd.DataFrame, qrels: pd.DataFrame, depths: tuple[int, ...] = (10, 100)) -> pd.DataFrame:
    """Per run: topics, documents retrieved and, per depth k, the fraction of its top-k documents (over
    all its topics) that carry a judgment (grade >= 0). Columns run, topics, retrieved, judged@k..."""
    cols = ["run", "topics", "retrieved"] + [f"judged@{k}" for k in depths]
    if len(runs) == 0:
        return pd.DataFrame({c: pd.Series([], dtype=object if c == "run" else float) for c in cols})
    run = _objects(runs["run"])
    rc, names = pd.factorize(run)
    base = pd.DataFrame({"run": np.asarray(names, dtype=object),
                         "topics": pd.Series(_objects(runs["topic"])).groupby(rc).nunique().to_numpy(),
                         "retrieved": np.bincount(rc, minlength=len(names))})
    _, shares = judged_share_at(runs, qrels, tuple(depths))
    for k in depths:
        base[f"judged@{k}"] = shares[k]
    return base[cols]


def judgment_counts(qrels: pd.DataFrame, threshold: int = 1, topics: list[str] | None = None,
                    grades: list[int] | None = None) -> pd.DataFrame:
    """Per topic: judged (grade >= 0), relevant (grade >= threshold), one column per grade, and
    `unjudged` (pooled, grade < 0). Topics listed in `topics` without judgments get zeros."""
    q = qrels
    grades = sorted(set(grades or []) | set(q.loc[q["grade"] >= 0, "grade"].astype(int).unique().tolist()))
    t = q["topic"].astype(str)
    g = q["grade"].to_numpy(np.int64)
    df = pd.DataFrame({"topic": t.to_numpy(object), "judged": g >= 0, "relevant": g >= threshold,
                       "unjudged": g < 0})
    for gr in grades:
        df[f"grade {gr}"] = g == gr
    per = df.groupby("topic", sort=False).sum()
    order = list(dict.fromkeys([*(topics or []), *per.index.tolist()]))
    per = per.reindex(order, fill_value=0).astype(np.int64)
    per.index.name = "topic"
    per = per.reset_index()
    return per[["topic", "judged", "relevant", *[f"grade {gr}" for gr in grades], "unjudged"]]
