"""unj: fraction of unjudged documents in the top k (documents missing below k count as judged)."""
import numpy as np

from .registry import measure
from .specs import cutoffs


@measure("unj", param_kind="int_cut",
         param_specs=cutoffs((5, 10, 20), "cut-offs: unjudged share of the first k documents"),
         nicknames={"all_trec"}, complete_fill=0.0)
def unj(r, params):
    """Unjudged (not in the judgments, or pooled but unjudged) among the first k, divided by k."""
    cum = r.seg_cumsum(r.rel < 0)
    out = np.empty((r.n_groups, len(params)))
    for j, k in enumerate(params):
        out[:, j] = r.at_rank(cum, k) / k
    return out
