"""gm_map: geometric mean of average precision over topics."""
import numpy as np

from .registry import measure


@measure("gm_map", aggregate="gmean", per_topic=False, nicknames={"official", "all_trec"})
def gm_map(r, params=()):
    """Average precision per topic, summarized by its geometric mean (values floored at 1e-5)."""
    return np.divide(r.rel_precision_sum, r.num_rel, out=np.zeros(r.n_groups), where=r.num_rel_ret > 0)
