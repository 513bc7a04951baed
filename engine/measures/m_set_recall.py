"""set_recall: recall of the whole retrieved set."""
import numpy as np

from .registry import measure


@measure("set_recall", nicknames={"all_trec", "set"})
def set_recall(r, params=()):
    """num_rel_ret / R (0 when R = 0)."""
    return np.divide(r.num_rel_ret, r.num_rel, out=np.zeros(r.n_groups), where=r.num_rel > 0)
