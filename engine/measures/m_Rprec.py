"""Rprec: precision after R (number of relevant) documents."""
import numpy as np

from .registry import measure


@measure("Rprec", nicknames={"official", "all_trec"})
def Rprec(r, params=()):
    """Relevant documents in the top min(R, num_ret), divided by R (0 when R = 0)."""
    hits = r.at_rank(r.cum_rel, r.num_rel)
    return np.divide(hits, r.num_rel, out=np.zeros(r.n_groups), where=(r.num_rel > 0) & (r.num_ret > 0))
