"""P: precision at fixed cut-offs."""
import numpy as np

from .registry import contributes, measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("P", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: precision after k documents"),
         nicknames={"official", "all_trec"})
def P(r, params):
    """Precision after k documents retrieved (missing documents count as non-relevant)."""
    out = np.empty((r.n_groups, len(params)))
    for j, k in enumerate(params):
        out[:, j] = r.at_rank(r.cum_rel, k) / k
    return out


@contributes("P")
def P_contributions(r, params):
    """1/k for each relevant document in the top k."""
    out = np.zeros((r.n_rows, len(params)))
    for j, k in enumerate(params):
        out[:, j] = np.where(r.is_rel & (r.rank <= k), 1.0 / k, 0.0)
    return out
