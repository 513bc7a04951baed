"""num_q: number of topics evaluated."""
import numpy as np

from .registry import measure


@measure("num_q", value_kind="long", aggregate="sum", per_topic=False,
         nicknames={"official", "all_trec", "set", "all_prefs", "prefs", "qrels_jg"})
def num_q(r, params=()):
    """Number of topics with both results and judgments (all judged topics with -c)."""
    return np.ones(r.n_groups, dtype=np.float64)
