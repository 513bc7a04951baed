"""Q: Sakai's Q-measure (Sakai 2007 eq. 21; thesis 2.4.3).

Q = 1/R sum over relevant documents at rank r of (beta cg(r) + count(r)) / (beta cg_I(r) + r).
Parameters: beta=B (default 1; 0 gives AP), gains=g0:g1:... (default campaign gains or the grade).
"""
import numpy as np

from .graded import gains_per_grade, ideal_cumulative_at, row_gains
from .params import as_dict, get_float, get_list, kv_measure
from .specs import GAINS, Param


@kv_measure("Q", (Param("beta", "float", 1.0, "weight of the cumulative gain (0 gives AP)", minimum=0.0),
                  GAINS),
            nicknames={"incomplete"})
def Q(r, params=()):
    """Q-measure: AP with a cumulative-gain bonus; beta controls the penalty on late relevant documents."""
    d = as_dict(params)
    beta = get_float("Q", d, "beta", 1.0, minimum=0.0)
    g_tab = gains_per_grade(r, get_list("Q", d, "gains"))
    g = row_gains(r, g_tab)
    cg = r.seg_cumsum(g)
    cgI = ideal_cumulative_at(r, g_tab, r.rank, r.g_topic[r.row_group])
    br = (beta * cg + r.cum_rel) / (beta * cgI + r.rank)
    s = r.seg_sum(np.where(r.is_rel, br, 0.0))
    R = r.num_rel.astype(np.float64)
    return np.divide(s, R, out=np.zeros(r.n_groups), where=R > 0)
