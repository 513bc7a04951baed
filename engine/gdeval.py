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

MAX_GRADE = 4


def gd_values(r, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per (run, topic) group of a Ranked structure: (nDCG@k, ERR@k) as gdeval."""
    if r.max_grade > 1023:                 # 2^g overflows a double: gdeval.pl would print inf/nan
        from .errors import CranfieldError
        raise CranfieldError(f"gdeval: grade {r.max_grade} is too large for its gain 2^g - 1 (at most 1023; "
                             f"gdeval's grades are 0-4)")
    g = np.maximum(r.rel, 0).astype(np.float64)
    gain = np.where(r.rel > 0, 2.0 ** g - 1.0, 0.0)
    rank = r.rank.astype(np.float64)
    inside = rank <= k
    dcg = r.seg_sum(np.where(inside, gain / np.log2(rank + 1.0), 0.0))
    # ideal DCG per topic from the judged grades (sorted descending)
    off, tg = r.t_grades_offsets, r.t_grades.astype(np.float64)
    n_t = len(off) - 1
    idcg_t = np.zeros(n_t)
    for t in range(n_t):
        gr = tg[off[t]:off[t + 1]][:k]
        gr = gr[gr > 0]
        if len(gr):
            idcg_t[t] = float(np.sum((2.0 ** gr - 1.0) / np.log2(np.arange(2, len(gr) + 2))))
    idcg = idcg_t[r.g_topic]
    ndcg = np.divide(dcg, idcg, out=np.zeros(r.n_groups), where=idcg > 0)
    R = np.where(inside, gain / 2.0 ** MAX_GRADE, 0.0)
    # prod_{i<r}(1 - R_i) per group: exclusive cumulative product via cumulative log would fail at R = 1
    err = np.zeros(r.n_groups)
    for gi in range(r.n_groups):
        a, b = int(r.offsets[gi]), int(r.offsets[gi + 1])
        rr = R[a:b]
        if not rr.any():
            continue
        keep = np.concatenate(([1.0], np.cumprod(1.0 - rr)[:-1]))
        err[gi] = float(np.sum(rr * keep / np.arange(1, len(rr) + 1)))
    return ndcg, err


def risk_values(run_vals: pd.Series, base_vals: pd.Series, alpha: float) -> pd.Series:
    """Per topic risk-adjusted difference: delta, or (1 + alpha) delta when the run loses."""
    base = base_vals.reindex(run_vals.index).fillna(0.0)
    d = run_vals - base
    return d.where(d >= 0, (1.0 + alpha) * d)


def gdeval_table(qrels: pd.DataFrame, runs: pd.DataFrame, k: int = 20, complete: bool = False) -> pd.DataFrame:
    """runid, topic, ndcg, err, retrieved per (run, topic), in run order then topic order. As gdeval.pl,
    only topics with a judgment above 0 count (the others are read and ignored)."""
    from .evaluate import compute
    from .ranking import EvalOptions
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
