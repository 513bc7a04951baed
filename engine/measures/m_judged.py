"""judged: share of the top k retrieved documents that are judged (ir_measures' Judged@k)."""
import numpy as np

from ..ranking.order import ascending_tie_rank
from .registry import measure
from .specs import cutoffs


@measure("judged", param_kind="int_cut", extension=True, complete_fill=0.0,
         param_specs=cutoffs((10,), "cut-offs: judged share of the first k (or of those retrieved when fewer)"))
def judged(r, params):
    """Judged documents (any grade in the judgments) among the first k retrieved, divided by k or by the
    number retrieved when fewer; tied scores ordered by document id ascending (as ir_measures' Judged@k)."""
    rank = ascending_tie_rank(r)
    judged_row = r.rel >= 0
    out = np.empty((r.n_groups, len(params)))
    n = r.num_ret.astype(np.float64)
    for j, k in enumerate(params):
        hits = r.seg_sum((judged_row & (rank <= k)).astype(np.float64))
        den = np.minimum(n, float(k))
        out[:, j] = np.divide(hits, den, out=np.zeros(r.n_groups), where=den > 0)
    return out
