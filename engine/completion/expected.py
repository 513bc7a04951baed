"""Expected P@k and AP from probabilities of relevance (the future-work suggestion of Buettcher et al. 2007).

Each document has a probability of relevance: 1 or 0 where judged (grade >= rel_level or not), the
classifier's probability where predicted, 0 otherwise. With relevance independent across documents,
E[P@k] = sum_{i<=k} p_i / k exactly, and AP is estimated by the ratio of expectations
E[sum_i rel_i P@i] / E[R] = sum_i (p_i / i)(1 + sum_{j<i} p_j) / sum_d p_d (over every document of the topic).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def relevance_probabilities(qrels: pd.DataFrame, predicted: pd.DataFrame | None, rel_level: int = 1) -> pd.DataFrame:
    """topic, doc, prob: judged documents at 0/1, predicted ones (not judged) at their probability."""
    q = pd.DataFrame({"topic": qrels["topic"].astype(str), "doc": qrels["doc"].astype(str),
                      "prob": (qrels["grade"].to_numpy() >= rel_level).astype(np.float64)})
    q = q[qrels["grade"].to_numpy() >= 0]
    if predicted is None or not len(predicted):
        return q.reset_index(drop=True)
    p = pd.DataFrame({"topic": predicted["topic"].astype(str), "doc": predicted["doc"].astype(str),
                      "prob": predicted["prob"].to_numpy(np.float64)})
    p = p[~pd.MultiIndex.from_frame(p[["topic", "doc"]]).isin(pd.MultiIndex.from_frame(q[["topic", "doc"]]))]
    return pd.concat([q, p], ignore_index=True)


def expected_measures(runs: pd.DataFrame, probs: pd.DataFrame, cutoffs: Sequence[int] = (10, 20),
                      depth: int | None = 1000) -> pd.DataFrame:
    """Long table run, topic, measure (eP_k, eAP), value over the topics that have probabilities."""
    from ..pooling.candidates import ranked_runs

    rr = ranked_runs(runs, depth)
    rr = rr[rr["topic"].isin(set(probs["topic"]))]
    m = rr.merge(probs, on=["topic", "doc"], how="left")
    m["prob"] = m["prob"].fillna(0.0)
    m = m.sort_values(["run", "topic", "rank"], kind="mergesort")
    g = m.groupby(["run", "topic"], sort=False)["prob"]
    before = g.cumsum().to_numpy() - m["prob"].to_numpy()
    p = m["prob"].to_numpy()
    rank = m["rank"].to_numpy(np.float64)
    er = probs.groupby("topic")["prob"].sum()
    m = m.assign(_ap=p / rank * (1.0 + before))
    out = []
    ap = m.groupby(["run", "topic"], sort=False)["_ap"].sum().reset_index()
    denom = ap["topic"].map(er).to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap["value"] = np.where(denom > 0, ap["_ap"].to_numpy() / denom, 0.0)
    out.append(ap.assign(measure="eAP")[["run", "topic", "measure", "value"]])
    for k in cutoffs:
        pk = m[m["rank"] <= k].groupby(["run", "topic"], sort=False)["prob"].sum() / k
        pk = pk.reindex(ap.set_index(["run", "topic"]).index, fill_value=0.0).reset_index(name="value")
        out.append(pk.assign(measure=f"eP_{k}")[["run", "topic", "measure", "value"]])
    return pd.concat(out, ignore_index=True)
