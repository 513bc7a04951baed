"""relative_P: precision at k relative to the best possible, min(k, R)."""
import numpy as np

from .registry import measure


@measure("relative_P", params=(5, 10, 15, 20, 30, 100, 200, 500, 1000), param_kind="int_cut",
         nicknames={"all_trec"})
def relative_P(r, params):
    """Relevant documents in the top k divided by min(k, R) (0 when R = 0)."""
    out = np.zeros((r.n_groups, len(params)))
    ok = r.num_rel > 0
    for j, k in enumerate(params):
        out[ok, j] = r.at_rank(r.cum_rel, k)[ok] / np.minimum(k, r.num_rel[ok])
    return out
