"""judged: share of the top k retrieved documents that are judged (ir_measures' Judged@k)."""
import numpy as np

from .registry import measure


@measure("judged", order=57, params=(10,), param_kind="int_cut", extension=True, complete_fill=0.0)
def judged(r, params):
    """Judged documents (any grade in the judgments) among the first k retrieved, divided by k."""
    cum = r.seg_cumsum(r.rel >= 0)
    out = np.empty((r.n_groups, len(params)))
    for j, k in enumerate(params):
        out[:, j] = r.at_rank(cum, k) / k
    return out
