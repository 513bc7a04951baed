"""map_cut: average precision computed over the top k documents only."""
import numpy as np

from .registry import measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("map_cut", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: average precision over the first k documents"),
         nicknames={"all_trec"})
def map_cut(r, params):
    """Sum of precision at relevant documents ranked <= k, divided by R (0 when R = 0)."""
    prec = np.where(r.is_rel, r.cum_rel / r.rank, 0.0)
    cum = r.seg_cumsum(prec)
    out = np.zeros((r.n_groups, len(params)))
    ok = r.num_rel > 0
    for j, k in enumerate(params):
        out[ok, j] = r.at_rank(cum, k)[ok] / r.num_rel[ok]
    return out
