"""num_ret: number of documents retrieved."""
import numpy as np

from .registry import measure


@measure("num_ret", value_kind="long", aggregate="sum", complete_fill=0.0,
         nicknames={"official", "all_trec", "set"})
def num_ret(r, params=()):
    """Number of documents retrieved for the topic (after -M and -J)."""
    return r.num_ret.astype(np.float64)
