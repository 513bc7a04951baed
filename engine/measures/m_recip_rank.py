"""recip_rank: reciprocal rank of the first relevant document."""
import numpy as np

from .registry import measure


@measure("recip_rank", nicknames={"official", "all_trec"})
def recip_rank(r, params=()):
    """1 / rank of the first relevant retrieved document (0 if none)."""
    idx = r.rel_idx                             # relevant retrieved rows, in rank order per group
    g = r.row_group[idx]
    first = np.ones(len(idx), bool)
    first[1:] = g[1:] != g[:-1]
    out = np.zeros(r.n_groups)
    out[g[first]] = 1.0 / r.rank[idx[first]]
    return out
