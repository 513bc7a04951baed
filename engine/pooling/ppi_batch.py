"""The next batch of documents for people to judge under a document-level PPI design, chosen so that the
widest intervals shrink most while every document keeps a known, positive inclusion probability.

Frame: the current design pool's rows (engine.judgments.ppi_docs), else every document the model judged.
Documents people already judged enter the new design with probability 1 (their labels are known, so
they cost nothing and the Horvitz-Thompson sum over them is exact); every other frame document d gets

    pi_d = min(1, c s_d),  sum over the unjudged of pi_d = N (the budget),
    s_d  = (1 - eps) s'_d / mean(s') + eps,
    s'_d = sqrt( sum_measures  sum_columns u_c w_c(d)^2 e(m_d) / norm_measure )

with w_c(d) the document's rank weight in column c (a run, or the difference of two runs adjacent in the
current ranking), u_c = (se_c / max se)^2 (the current interval's standard error; 1 without one), e(m) the
mean squared human-model gain difference of the judged documents the model gave grade m (shrunk to the
overall mean), and eps = EPS a defensive share so no document's probability is near 0. For a Poisson
design the HT variance is sum x_d^2 (1 - pi_d) / pi_d; pi proportional to |x_d| minimizes it at a fixed
expected size, and s'_d is the root of x_d^2's expectation. The N documents are drawn by systematic PPS
(engine.pooling.samplers): exactly N, each with probability exactly pi_d. The estimate of the new design
(the judged documents at 1, the sample at pi) is unbiased given everything before it, whatever chose the
earlier batches. See docs/llm-judges.md.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings
from .build import POOL_COLUMNS, Pool

EPS = 0.1
"""Share of the uniform design mixed into the scores (defensive sampling)."""
SHRINK = 5.0
"""Pseudo-documents of the overall mean in each model grade's error estimate e(m)."""


def design_pool(camp, name: str | None, required: bool = True) -> tuple[str, pd.DataFrame] | None:
    """(name, table) of a design: pools/pool-NAME.tsv, or the newest pool with a sampled frame (a row with
    order 0 or a probability below 1). Without one: an error, or None when not `required`."""
    from .files import list_pools, pool_path, read_pool
    if name:
        return name, read_pool(pool_path(camp.root, name))
    for p in reversed(list_pools(camp.root)):
        t = read_pool(p)
        if len(t) and ((t["order"] == 0).any() or (t["prob"] < 1).any()):
            return p.name[len("pool-"):-len(".tsv")], t
    if not required:
        return None
    raise CranfieldError("--design documents: pools/ holds no sampled pool (one with inclusion probabilities); "
                         "build one with `cranfield pool DIR --strategy statap|uniform|stratified|ppi-next` or name "
                         "it with --design-pool NAME")


def error_by_grade(gh: np.ndarray, gm: np.ndarray, grade: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """e(m) per document: the mean of (g(h) - g(m))^2 over the judged documents of its model grade, shrunk
    toward the overall mean by SHRINK pseudo-documents; 1 when nothing is judged."""
    if not judged.any():
        return np.ones(len(gm))
    d2 = (gh - gm) ** 2
    overall = float(d2[judged].mean())
    codes, uniq = pd.factorize(pd.Series(grade))
    s = np.bincount(codes[judged], weights=d2[judged], minlength=len(uniq))
    n = np.bincount(codes[judged], minlength=len(uniq))
    e = (s + SHRINK * overall) / (n + SHRINK)
    return np.maximum(e[codes], 1e-12)


def column_weights(camp, model: str, gold: str, measures, base, alpha: float) -> dict[str, tuple]:
    """Per measure: (u over runs, adjacent pairs (i, j), u over those pairs) from the current design's
    intervals (`base`); empty when there is none to read (then every column weighs 1)."""
    if base is None:
        return {}
    from ..judgments.ppi_docs import adjacent_se, design_values
    try:
        values = design_values(camp, model, gold, measures, base, notes=[])
    except CranfieldError:
        return {}
    out = {}
    for v in values:
        se, pairs, pse = adjacent_se(v, alpha)
        top = max(float(np.max(se, initial=0)), float(np.max(pse, initial=0)), 1e-300)
        out[v.measure] = ((se / top) ** 2, pairs, (pse / top) ** 2)
    return out


def variance_scores(W: np.ndarray, u_runs: np.ndarray, pairs=None, u_pairs=None, e=None) -> np.ndarray:
    """Per document: sum_c u_c w_c(d)^2 e(m_d), the columns being the runs (`W`: documents x runs rank
    weights, `u_runs`) and the run pairs `pairs` = (i, j) (weights W_i - W_j, `u_pairs`)."""
    per = (W ** 2) @ np.asarray(u_runs, np.float64)
    if pairs is not None and len(pairs[0]):
        ii, jj = pairs
        per = per + ((W[:, ii] - W[:, jj]) ** 2) @ np.asarray(u_pairs, np.float64)
    return per if e is None else per * e


def batch_probabilities(contribs, judged: np.ndarray, n: int, eps: float = EPS) -> np.ndarray:
    """Inclusion probabilities of the next batch: 1 for the `judged` documents; for the others
    min(1, c s_d) summing to `n`, s_d the root of the measures' `variance_scores` (each scaled to sum 1
    over the unjudged) mixed with the uniform share `eps`, so every document keeps a probability > 0."""
    from .samplers import pps_probabilities
    judged = np.asarray(judged, bool)
    todo = ~judged
    score2 = np.zeros(len(judged))
    for c in contribs:
        total = c[todo].sum()
        if total > 0:
            score2 += c / total
    s = np.sqrt(score2)
    mean = s[todo].mean() if todo.any() else 0.0
    s = (1 - eps) * (s / mean if mean > 0 else 1.0) + eps
    pi = np.ones(len(judged))
    pi[todo] = pps_probabilities(np.zeros(int(todo.sum()), np.int64), s[todo], np.array([n]))
    return pi


def next_batch(camp, model: str, budget: int, gold: str = "human", measures=None, pool: str | None = None,
               seed: int = 0, alpha: float = 0.05, warnings: Warnings | None = None,
               notes: list[str] | None = None) -> Pool:
    """The pool of the next `budget` documents for people (`cranfield pool --strategy ppi-next`): the frame
    with prob = each document's inclusion probability, order > 0 for the judged ones and the drawn batch."""
    from ..judgments.ppi_docs import frame_rows
    from ..judgments.sources import source_judgments
    from .samplers import pps_systematic
    notes = notes if notes is not None else []
    if budget is None or int(budget) < 1:
        raise CranfieldError(f"--strategy ppi-next: --budget {budget}: give the number of documents of the next "
                             f"batch (an integer >= 1)")
    budget = int(budget)
    base = design_pool(camp, pool, required=pool is not None)
    if base is None:
        qm = source_judgments(camp, model, warnings)
        if not len(qm):
            raise CranfieldError(f"source {model} has no judgments: the model must label the frame first")
        frame = pd.DataFrame({"topic": qm["topic"].astype(str).to_numpy(object),
                              "doc": qm["doc"].astype(str).to_numpy(object)})
        from_name = None
    else:
        from_name, frame = base[0], base[1][["topic", "doc"]].astype(str)
    frame = frame.drop_duplicates().reset_index(drop=True)
    probe = frame.assign(stratum=1, prob=1.0, method="ppi-next", order=0)
    f = frame_rows(camp, model, gold, measures, ("ppi-next", probe), warnings, notes)
    judged = f.judged
    todo = ~judged
    if not todo.any():
        raise CranfieldError("every frame document is judged by people already: no batch to choose")
    weights = column_weights(camp, model, gold, measures, base, alpha)
    contribs = []
    for m in f.measures:
        gh, gm = m.gain(f.hg, f.threshold), m.gain(f.mg, f.threshold)
        W = np.zeros((len(frame), len(f.runs)))      # each frame document's rank weight in every run
        np.add.at(W, (f.row, f.rc), m.weight(f.rank))
        u_runs, pairs, u_pairs = weights.get(m.name, (np.ones(len(f.runs)), None, None))
        contribs.append(variance_scores(W, u_runs, pairs, u_pairs, error_by_grade(gh, gm, f.mg, judged)))
    if f.ratio:
        notes.append(f"{', '.join(f.ratio)}: the chooser weighs documents by the linear measures' rank weights "
                     f"only" + ("" if contribs else "; with none asked for, the batch is drawn uniformly"))
    n = min(budget, int(todo.sum()))
    pi = batch_probabilities(contribs, judged, n)
    sel = judged.copy()
    sel[todo] = pps_systematic(np.zeros(int(todo.sum()), np.int64), pi[todo], np.random.default_rng(seed))
    table = frame.assign(stratum=np.where(judged, 1, 2).astype(np.int64), prob=pi, method="ppi-next")
    order = np.zeros(len(frame), np.int64)
    if sel.any():
        t = table[sel]
        order[sel] = t.groupby("topic", sort=False).cumcount().to_numpy() + 1
    table["order"] = order
    spec = {"strategy": "ppi-next", "budget": budget, "seed": int(seed), "model": model, "gold": gold,
            "measures": [m.name for m in f.measures], "design_from": from_name, "eps": EPS, "depth": None}
    if n < budget:
        notes.append(f"only {n} frame documents are not judged yet: the batch holds them all")
    return Pool(table[POOL_COLUMNS].reset_index(drop=True), spec)
