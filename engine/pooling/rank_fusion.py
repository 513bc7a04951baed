"""Rank fusion of runs: CombSUM, CombMNZ and reciprocal rank fusion (RRF), and the per-document fusion
weights that fusion-based pools rank by (RRF and rank-biased-precision weights).

Ranks are trec_eval's (score descending, ties by document id descending), never a file's rank column.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..ranking.join import ranked_rows

METHODS = ("combsum", "combmnz", "rrf")


def _ranked(runs: pd.DataFrame, depth: int | None) -> pd.DataFrame:
    from .candidates import ranked_runs
    rr = ranked_runs(runs, depth)
    key = pd.MultiIndex.from_frame(rr[["run", "topic", "doc"]])
    score = runs.assign(run=runs["run"].astype(str), topic=runs["topic"].astype(str),
                        doc=runs["doc"].astype(str)).drop_duplicates(["run", "topic", "doc"]) \
        .set_index(["run", "topic", "doc"])["score"]
    return rr.assign(score=score.reindex(key).to_numpy(np.float64))


def doc_weights(runs: pd.DataFrame, kind: str = "rrf", *, k: float = 60.0, p: float = 0.8,
                depth: int | None = None, weights: dict[str, float] | None = None) -> pd.DataFrame:
    """Per (topic, doc): the summed fusion weight over runs, `rrf` = sum 1 / (k + rank) or `rbp` =
    sum (1 - p) p^(rank - 1), each run's term times its weight (default 1). Columns topic, doc, weight,
    n_runs, best_rank."""
    if kind not in ("rrf", "rbp"):
        raise CranfieldError(f"unknown fusion weight {kind!r} (use rrf or rbp)")
    if kind == "rbp" and not 0 < p < 1:
        raise CranfieldError(f"RBP persistence p must be in (0, 1), got {p}")
    rr = _ranked(runs, depth) if "score" in runs else runs
    r = rr["rank"].to_numpy(np.float64)
    w = 1.0 / (k + r) if kind == "rrf" else (1.0 - p) * np.power(p, r - 1.0)
    if weights:
        w = w * rr["run"].astype(str).map(lambda t: float(weights.get(t, 1.0))).to_numpy(np.float64)
    g = rr.assign(weight=w).groupby(["topic", "doc"], sort=False)
    return pd.DataFrame({"weight": g["weight"].sum(), "n_runs": g["run"].size(),
                         "best_rank": g["rank"].min()}).reset_index()


def select_runs(runs: pd.DataFrame, tags: list[str] | None, where: str = "the campaign") -> pd.DataFrame:
    """The rows of the runs named by `tags` (every run when None or empty): what `cranfield fuse
    --campaign` and the TUI fuse. Unknown tags, and fewer than two runs, are errors."""
    present = set(runs["run"].astype(str).unique()) if len(runs) else set()
    if tags:
        unknown = sorted(set(tags) - present)
        if unknown:
            raise CranfieldError(f"unknown run tag(s) {', '.join(unknown)} in {where}")
        runs = runs[runs["run"].astype(str).isin(set(tags))]
    n = runs["run"].astype(str).nunique() if len(runs) else 0
    if n < 2:
        raise CranfieldError(f"fusion needs at least two runs (got {n})")
    return runs


def fuse(runs: pd.DataFrame, method: str = "rrf", *, k: float = 60.0, depth: int | None = 1000,
         tag: str = "fused", normalize: str = "minmax") -> pd.DataFrame:
    """Fuse runs into one run (run, topic, doc, score), the top `depth` per topic.

    combsum: sum of each run's scores (min-max normalized per run and topic unless normalize='none');
    combmnz: combsum times the number of runs retrieving the document; rrf: sum 1 / (k + rank)."""
    if method not in METHODS:
        raise CranfieldError(f"unknown fusion method {method!r}; choose from {', '.join(METHODS)}")
    if len(runs) == 0:
        raise CranfieldError("no runs to fuse")
    if method == "rrf":
        fused = doc_weights(runs, "rrf", k=k).rename(columns={"weight": "score"})
    else:
        rr = _ranked(runs, None)
        s = rr["score"]
        if normalize == "minmax":
            g = rr.groupby(["run", "topic"], sort=False)["score"]
            lo, hi = g.transform("min"), g.transform("max")
            s = ((s - lo) / (hi - lo)).where(hi > lo, 1.0)
        elif normalize != "none":
            raise CranfieldError(f"unknown normalization {normalize!r} (use minmax or none)")
        g2 = rr.assign(score=s).groupby(["topic", "doc"], sort=False)
        fused = pd.DataFrame({"score": g2["score"].sum(), "n_runs": g2["run"].size()}).reset_index()
        if method == "combmnz":
            fused["score"] = fused["score"] * fused["n_runs"]
    rows, _ = ranked_rows(fused.assign(run=tag), None if depth is None else int(depth), by_name=True)
    fused = fused.iloc[rows]
    out = pd.DataFrame({"run": tag, "topic": fused["topic"].astype(str).to_numpy(object),
                        "doc": fused["doc"].astype(str).to_numpy(object),
                        "score": fused["score"].to_numpy(np.float64)})
    return out.reset_index(drop=True)
