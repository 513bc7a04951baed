"""Fusion-based pools: per topic, the `budget` documents with the largest reciprocal-rank-fusion (rrf) or
rank-biased-precision (rbp) weight summed over the pooled runs (runs weighted by `weights`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError


def fusion_pool(rr: pd.DataFrame, kind: str, budgets: pd.Series | None, *, k: float = 60.0, p: float = 0.8,
                weights: dict | None = None) -> pd.DataFrame:
    """Selected (topic, doc) rows in judging order (largest weight first; ties by best rank, then doc id),
    with their weight. `rr` is `ranked_runs` output (trec_eval ranks, cut at the pool depth)."""
    from .rank_fusion import doc_weights
    if budgets is None:
        raise CranfieldError(f"strategy {kind} needs a budget (--budget N per topic)")
    w = doc_weights(rr, kind, k=k, p=p, weights=weights)
    w = w.sort_values(["topic", "weight", "best_rank", "doc"], ascending=[True, False, True, True],
                      kind="mergesort")
    pos = w.groupby("topic", sort=False).cumcount().to_numpy()
    lim = w["topic"].map(budgets).fillna(0).to_numpy(np.int64)
    return w[pos < lim].reset_index(drop=True)


from ..util.names import FUSION_STRATEGIES as FUSION_POOLS  # noqa: E402, F401  (one list of names; re-exported)
