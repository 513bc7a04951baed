"""Document-design PPI for measures that are ratios of sums over the labels: AP, nDCG and R-prec.

Per topic t and run, with the frame's documents labelled by the model and a sample of them by people,
drawn with inclusion probabilities pi (engine.judgments.ppi_docs):

    F_t = the measure under the model's labels over the frame (exact, as the evaluator computes it)
    C_t = its statAP-family estimate from the sample under the model's labels (statAP, statRprec, statNDCG)
    A_t = the same estimate from the same sample under people's labels

and z_t = A_t - lambda (C_t - F_t) as for the linear measures (engine.stability.ppi_design). The
estimates are ratio estimators, so E[C_t] = F_t and E[A_t] = y_t hold only approximately (the bias
falls with the number of relevant documents in a topic's sample; with a thin sample and many topics it
is comparable to the standard error: the interval is approximate). When people judge the whole frame
(every pi = 1) A_t is the evaluator's exact value under people's labels. See docs/llm-judges.md.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

RATIO = ("map", "ndcg", "Rprec")
"""The ratio measures the document design supports (trec_eval's defaults: gain = grade for ndcg)."""


def ratio_measure(spec: str) -> str | None:
    """The output name of a ratio measure spec (map, ndcg, Rprec), None when it is not one."""
    s = str(spec).strip()
    return s if s in RATIO else None


def group_estimates(r) -> dict[str, np.ndarray]:
    """Per group of `r` (a Ranked whose judgments carry `prob`): the statAP-family estimate of each of RATIO."""
    from ..estimators.statap import stat_ndcg, statap_terms
    t = statap_terms(r)
    return {"map": t["statAP"], "ndcg": stat_ndcg(r), "Rprec": t["Rprec"]}


def design_estimates(base, gh, gm, pi, sampled) -> tuple[dict, dict, dict]:
    """Per group of `base` (engine.estimators.trials.base_ranked over the frame): (A, C, F), each a dict
    measure -> values: the estimates from the sample under people's grades `gh` and under the model's `gm`
    (inclusion probabilities `pi`, the sample `sampled`), and the model's exact values over the frame."""
    from ..estimators.trials import with_judgments
    s = np.asarray(sampled, bool)
    prob = np.where(s, np.asarray(pi, np.float64), 1.0)
    gh, gm = np.asarray(gh, np.int64), np.asarray(gm, np.int64)
    A, C = (group_estimates(with_judgments(base, np.where(s, g, -1), prob=prob)) for g in (gh, gm))
    return A, C, group_estimates(with_judgments(base, np.maximum(gm, 0), prob=np.ones(len(gm))))


def ratio_sums(frame: pd.DataFrame, runs: pd.DataFrame, names: list[str], grade_h, grade_m, pi, sampled,
               topics: list[str], run_names: list[str], threshold: int = 1) -> dict[str, tuple]:
    """{measure: (A, C, F)}, each topics x runs, for the ratio measures `names`. `frame`: topic, doc (the
    design's documents); the per-document arrays line up with its rows: people's grade `grade_h` (read
    where `sampled`), the model's `grade_m`, inclusion probability `pi`. `runs`: topic, doc, run, score
    rows (trec_eval's order decides ranks). `threshold`: the lowest relevant grade."""
    from ..estimators.trials import base_ranked
    from ..ranking.ranked import EvalOptions
    gm = np.asarray(grade_m, np.int64)
    gh = np.asarray(grade_h, np.int64)
    s = np.asarray(sampled, bool)
    pool = pd.DataFrame({"topic": frame["topic"].astype(str).to_numpy(object),
                         "doc": frame["doc"].astype(str).to_numpy(object), "grade": np.maximum(gm, 0)})
    base = base_ranked(pool, runs, EvalOptions(rel_level=max(int(threshold), 1)))
    ests = design_estimates(base, gh, gm, pi, s)
    t_of = {t: i for i, t in enumerate(topics)}
    r_of = {r: i for i, r in enumerate(run_names)}
    ti = np.array([t_of.get(t, -1) for t in base.topic_names])[base.g_topic]
    ri = np.array([r_of.get(r, -1) for r in base.run_names])[base.g_run]
    ok = (ti >= 0) & (ri >= 0)
    out = {}
    for m in names:
        mats = []
        for e in ests:
            X = np.zeros((len(topics), len(run_names)))
            X[ti[ok], ri[ok]] = e[m][ok]
            mats.append(X)
        out[m] = tuple(mats)
    return out
