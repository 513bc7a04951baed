"""rbp_resid: the residual of rbp, the most it can rise if every unjudged document had gain 1."""
import numpy as np

from ._gains import pair_param
from .registry import measure


@measure("rbp_resid", order=55, params=(), param_kind="pairs", nicknames={"all_trec"}, complete_fill=0.0)
def rbp_resid(r, params=()):
    """p^num_ret + (1 - p) * sum over unjudged retrieved of p^(rank - 1); 0 when none is unjudged."""
    p = pair_param(params, "p", 0.9)
    unj = r.rel < 0
    w = np.power(p, (r.rank - 1).astype(np.float64))
    s = r.seg_sum(np.where(unj, w, 0.0))
    tail = np.power(p, r.num_ret.astype(np.float64))
    return np.where(r.seg_sum(unj) > 0, tail + (1.0 - p) * s, 0.0)
