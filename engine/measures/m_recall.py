"""recall: recall at fixed cut-offs."""
import numpy as np

from .registry import contributes, measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("recall", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: recall after k documents"),
         nicknames={"all_trec"})
def recall(r, params):
    """Relevant documents in the top k divided by R (0 when R = 0)."""
    out = np.zeros((r.n_groups, len(params)))
    ok = r.num_rel > 0
    for j, k in enumerate(params):
        out[ok, j] = r.at_rank(r.cum_rel, k)[ok] / r.num_rel[ok]
    return out


@contributes("recall")
def recall_contributions(r, params):
    """1/R for each relevant document in the top k (nothing when R = 0)."""
    R = r.num_rel[r.row_group].astype(np.float64)
    out = np.zeros((r.n_rows, len(params)))
    for j, k in enumerate(params):
        hit = r.is_rel & (r.rank <= k) & (R > 0)
        out[:, j] = np.divide(1.0, R, out=np.zeros(r.n_rows), where=hit)
    return out
