"""rbp_resid: the residual of rbp, the most it can rise if every unjudged document had gain 1."""
import numpy as np

from ..ranking.gains import pair_param, powers
from .registry import measure
from .specs import PERSISTENCE


@measure("rbp_resid", params=(), param_kind="pairs", nicknames={"all_trec"}, complete_fill=0.0,
         param_specs=(PERSISTENCE,))
def rbp_resid(r, params=()):
    """p^num_ret + (1 - p) * sum over unjudged retrieved of p^(rank - 1); 0 when none is unjudged."""
    p = pair_param(params, "p", PERSISTENCE.default)
    pw = powers(p, int(r.num_ret.max(initial=0)))
    unj = r.rel < 0
    s = r.seg_sum(np.where(unj, pw[r.rank - 1], 0.0))
    return np.where(r.seg_sum(unj) > 0, pw[r.num_ret] + (1.0 - p) * s, 0.0)
