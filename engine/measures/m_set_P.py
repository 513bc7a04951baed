"""set_P: precision of the whole retrieved set."""
import numpy as np

from .registry import measure


@measure("set_P", nicknames={"all_trec", "set"})
def set_P(r, params=()):
    """num_rel_ret / num_ret (0 when nothing is retrieved)."""
    return np.divide(r.num_rel_ret, r.num_ret, out=np.zeros(r.n_groups), where=r.num_ret > 0)
