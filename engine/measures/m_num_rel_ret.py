"""num_rel_ret: number of relevant documents retrieved."""
import numpy as np

from .registry import measure


@measure("num_rel_ret", value_kind="long", aggregate="sum",
         nicknames={"official", "all_trec", "set"})
def num_rel_ret(r, params=()):
    """Number of relevant documents retrieved."""
    return r.num_rel_ret.astype(np.float64)
