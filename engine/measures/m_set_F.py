"""set_F: weighted harmonic mean of set precision and set recall."""
import numpy as np

from .registry import measure
from .specs import Param


@measure("set_F", param_kind="float_params",
         param_specs=(Param("beta", "float", 1.0, "weight of recall against precision (not squared, as trec_eval)"),),
         nicknames={"all_trec", "set"})
def set_F(r, params):
    """(beta + 1) P R / (beta P + R) with the parameter beta (default 1; trec_eval does not square it)."""
    beta = params[0]
    out = np.zeros(r.n_groups)
    ok = r.num_rel_ret > 0
    P = r.num_rel_ret[ok] / r.num_ret[ok]
    R = r.num_rel_ret[ok] / r.num_rel[ok]
    out[ok] = (beta + 1.0) * P * R / (beta * P + R)
    return out
