"""set_relative_P: set precision relative to the best possible for the set size."""
import numpy as np

from .registry import measure


@measure("set_relative_P", nicknames={"all_trec", "set"})
def set_relative_P(r, params=()):
    """num_rel_ret / min(num_ret, R) (0 when either is 0)."""
    den = np.minimum(r.num_ret, r.num_rel)
    return np.divide(r.num_rel_ret, den, out=np.zeros(r.n_groups), where=den > 0)
