"""num_nonrel_judged_ret: judged non-relevant documents retrieved."""
import numpy as np

from .registry import measure


@measure("num_nonrel_judged_ret", value_kind="long", aggregate="sum", nicknames={"all_trec"})
def num_nonrel_judged_ret(r, params=()):
    """Retrieved documents judged with a grade below the relevance level (summary: sum)."""
    return (r.num_ret - r.num_nonpool - r.num_unjudged_in_pool - r.num_rel_ret).astype(np.float64)
