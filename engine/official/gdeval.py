"""NIST's gdeval (TREC Web track 2010-2014): nDCG@k and ERR@k, and risk-sensitive evaluation.

As gdeval.pl computes them: documents ranked by score descending, ties by document id descending (the
trec_eval order); gain 2^g - 1 (grades below 1, e.g. -2 spam, gain 0); nDCG@k = DCG@k / ideal DCG@k with
discount 1/log2(rank + 1) and the ideal from the topic's judged grades; ERR@k = sum_{r<=k} (1/r) R_r
prod_{i<r} (1 - R_i) with R = (2^g - 1) / 2^4 (maximum grade 4). Topics: those of the judgments the run
retrieved for; with -c every judged topic, a missing one scoring 0.

Risk-sensitive (TREC Web 2013-2014), against a baseline run: per topic delta = run - baseline (a topic
the baseline lacks counts as 0), the risk-adjusted value is delta when delta >= 0 and (1 + alpha) delta
otherwise; the `amean` line is their mean (U_risk).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..measures.gdeval import MAX_GRADE, gd_values  # noqa: F401  (the measure kernel, shared)

def risk_values(run_vals: pd.Series, base_vals: pd.Series, alpha: float) -> pd.Series:
    """Per topic risk-adjusted difference: delta, or (1 + alpha) delta when the run loses."""
    base = base_vals.reindex(run_vals.index).fillna(0.0)
    d = run_vals - base
    return d.where(d >= 0, (1.0 + alpha) * d)


def gdeval_table(qrels: pd.DataFrame, runs: pd.DataFrame, k: int = 20, complete: bool = False) -> pd.DataFrame:
    """runid, topic, ndcg, err, retrieved per (run, topic), in run order then topic order. As gdeval.pl,
    only topics with a judgment above 0 count (the others are read and ignored)."""
    from ..evaluation.evaluate import compute
    from ..ranking.ranked import EvalOptions
    c = compute(qrels, runs, [f"gd_ndcg@{k}", f"gd_err@{k}"], EvalOptions(complete=complete))
    r = c.ranked
    t = pd.DataFrame({"runid": np.asarray(r.run_names, dtype=object)[r.g_run],
                      "topic": np.asarray(r.topic_names, dtype=object)[r.g_topic],
                      "ndcg": c.values[f"gd_ndcg@{k}"], "err": c.values[f"gd_err@{k}"]})
    have = set(zip(runs["run"].astype(str), runs["topic"].astype(str)))
    t["retrieved"] = [(str(a), str(b)) in have for a, b in zip(t["runid"], t["topic"])]
    seen = set(qrels.loc[qrels["grade"] > 0, "topic"].astype(str))
    return t[t["topic"].astype(str).isin(seen)].reset_index(drop=True)


def risk_runid(runid: str, base_runid: str, alpha_text: str) -> str:
    """gdeval.pl's name of a risk-sensitive run: `run (rel to. base, rs=1+a, a=ALPHA)`, ALPHA as typed."""
    return f"{runid} (rel to. {base_runid}, rs=1+a, a={alpha_text})"


def gdeval_lines(table: pd.DataFrame, k: int, runid: str | None = None, risk: bool = False) -> list[str]:
    """gdeval's CSV: header, one line per topic, then `amean` over every row of the table. Topics the
    run did not retrieve for (rows of -c) are not printed, except in risk-sensitive mode, where gdeval.pl
    prints them after the run's own topics."""
    lines = [f"runid,topic,ndcg@{k},err@{k}"]
    for rn, g in table.groupby("runid", sort=False):
        name = runid or rn
        ret = g["retrieved"].to_numpy(bool) if "retrieved" in g else np.ones(len(g), bool)
        shown = pd.concat([g[ret], g[~ret]]) if risk else g[ret]
        for t, n, e in zip(shown["topic"], shown["ndcg"], shown["err"]):
            lines.append(f"{name},{t},{n:.5f},{e:.5f}")
        lines.append(f"{name},amean,{g['ndcg'].mean():.5f},{g['err'].mean():.5f}")
    return lines
