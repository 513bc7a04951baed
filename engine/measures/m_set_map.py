"""set_map: set precision times set recall."""
import numpy as np

from .registry import measure


@measure("set_map", nicknames={"all_trec", "set"})
def set_map(r, params=()):
    """num_rel_ret^2 / (num_ret * R) (0 when either is 0)."""
    rr = r.num_rel_ret.astype(np.float64)
    den = r.num_ret.astype(np.float64) * r.num_rel.astype(np.float64)
    return np.divide(rr * rr, den, out=np.zeros(r.n_groups), where=den > 0)
