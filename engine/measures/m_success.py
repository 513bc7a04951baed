"""success: 1 if a relevant document is in the top k."""
import numpy as np

from .registry import measure
from .specs import cutoffs


@measure("success", param_kind="int_cut",
         param_specs=cutoffs((1, 5, 10), "cut-offs: a relevant document in the first k"), nicknames={"all_trec"})
def success(r, params):
    """1.0 when at least one relevant document is ranked <= k, else 0.0."""
    out = np.empty((r.n_groups, len(params)))
    for j, k in enumerate(params):
        out[:, j] = (r.at_rank(r.cum_rel, k) > 0).astype(np.float64)
    return out
