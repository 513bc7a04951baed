"""Campaign progress tables: what is judged per topic and how much of each run's top ranks is judged."""
from __future__ import annotations

import numpy as np
import pandas as pd


def trec_order(runs: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Runs sorted as trec_eval ranks them (run, topic, score desc, doc id desc) and each row's rank."""
    if len(runs) == 0:
        return runs, np.zeros(0, np.int64)
    rc, _ = pd.factorize(runs["run"].to_numpy(object))
    tc, _ = pd.factorize(runs["topic"].to_numpy(object))
    dc, _ = pd.factorize(runs["doc"].to_numpy(object), sort=True)  # code order = string order
    order = np.lexsort((-dc, -runs["score"].to_numpy(np.float64), tc, rc))
    g = (rc.astype(np.int64) * (tc.max() + 1) + tc)[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    lens = np.diff(np.concatenate((starts, [len(g)])))
    rank = np.arange(len(g)) - np.repeat(starts, lens) + 1
    return runs.iloc[order], rank


def judged_at_depth(runs: pd.DataFrame, qrels: pd.DataFrame, depths: tuple[int, ...] = (10, 100)) -> pd.DataFrame:
    """Per run: topics, documents retrieved and, per depth k, the fraction of its top-k documents (over
    all its topics) that carry a judgment (grade >= 0). Columns run, topics, retrieved, judged@k..."""
    cols = ["run", "topics", "retrieved"] + [f"judged@{k}" for k in depths]
    if len(runs) == 0:
        return pd.DataFrame({c: pd.Series([], dtype=object if c == "run" else float) for c in cols})
    ordered, rank = trec_order(runs)
    judged_keys = qrels.loc[qrels["grade"] >= 0, ["topic", "doc"]] if len(qrels) else qrels[["topic", "doc"]]
    key = pd.MultiIndex.from_arrays([ordered["topic"].astype(str).to_numpy(object),
                                     ordered["doc"].astype(str).to_numpy(object)])
    jk = pd.MultiIndex.from_arrays([judged_keys["topic"].astype(str).to_numpy(object),
                                    judged_keys["doc"].astype(str).to_numpy(object)])
    judged = key.isin(jk)
    run = ordered["run"].to_numpy(object)
    out = pd.DataFrame({"run": run, "topic": ordered["topic"].to_numpy(object)})
    base = out.groupby("run", sort=False).agg(topics=("topic", "nunique"), retrieved=("topic", "size"))
    for k in depths:
        sel = rank <= k
        frac = pd.Series(judged[sel].astype(np.float64)).groupby(run[sel], sort=False).mean()
        base[f"judged@{k}"] = frac.reindex(base.index).to_numpy()
    base = base.reset_index().rename(columns={"index": "run"})
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
