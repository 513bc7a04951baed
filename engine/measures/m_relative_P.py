"""relative_P: precision at k relative to the best possible, min(k, R)."""
import numpy as np

from .registry import measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("relative_P", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: relative precision after k documents"),
         nicknames={"all_trec"})
def relative_P(r, params):
    """Relevant documents in the top k divided by min(k, R) (0 when R = 0)."""
    out = np.zeros((r.n_groups, len(params)))
    ok = r.num_rel > 0
    for j, k in enumerate(params):
        out[ok, j] = r.at_rank(r.cum_rel, k)[ok] / np.minimum(k, r.num_rel[ok])
    return out
