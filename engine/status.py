"""Campaign progress tables: what is judged per topic and how much of each run's top ranks is judged."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _objects(s: pd.Series) -> np.ndarray:
    """A column as an object array of str without a round trip through pandas' string dtype."""
    a = s.to_numpy(object)
    return a if s.dtype == object else a.astype(str).astype(object)


def top_ranks(runs: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each (run, topic) ranked within the top `k` in trec_eval order (score descending, ties by
    document id descending): (row indices in rank order, their 1-based ranks)."""
    n = len(runs)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rc, _ = pd.factorize(_objects(runs["run"]))
    tc, tu = pd.factorize(_objects(runs["topic"]))
    g = rc.astype(np.int64) * (len(tu) + 1) + tc
    score = runs["score"].to_numpy(np.float64)
    # by score only first: a row whose tie block starts beyond k cannot reach the top k
    order = np.lexsort((-score, g))
    gs, ss = g[order], score[order]
    new_g = np.concatenate(([True], gs[1:] != gs[:-1]))
    new_block = new_g | np.concatenate(([True], ss[1:] != ss[:-1]))
    g_start = np.maximum.accumulate(np.where(new_g, np.arange(n), 0))
    b_start = np.maximum.accumulate(np.where(new_block, np.arange(n), 0))
    cand = order[b_start - g_start < k]
    # exact order among the candidates: ties broken by document id, descending
    dc, _ = pd.factorize(_objects(runs["doc"].iloc[cand]), sort=True)  # code order = string order
    o2 = np.lexsort((-dc, -score[cand], g[cand]))
    cand = cand[o2]
    gc = g[cand]
    first = np.concatenate(([True], gc[1:] != gc[:-1]))
    starts = np.maximum.accumulate(np.where(first, np.arange(len(gc)), 0))
    rank = np.arange(len(gc)) - starts + 1
    keep = rank <= k
    return cand[keep], rank[keep]


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
    rows, rank = top_ranks(runs, max(depths))
    judged_q = qrels[qrels["grade"] >= 0]
    jk = pd.MultiIndex.from_arrays([_objects(judged_q["topic"]), _objects(judged_q["doc"])])
    key = pd.MultiIndex.from_arrays([_objects(runs["topic"].iloc[rows]), _objects(runs["doc"].iloc[rows])])
    judged = key.isin(jk).astype(np.float64)
    rr = rc[rows]
    for k in depths:
        sel = rank <= k
        num = np.bincount(rr[sel], weights=judged[sel], minlength=len(names))
        den = np.bincount(rr[sel], minlength=len(names))
        with np.errstate(invalid="ignore", divide="ignore"):
            base[f"judged@{k}"] = np.where(den > 0, num / np.maximum(den, 1), np.nan)
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
