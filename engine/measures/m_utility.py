"""utility: linear set utility a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret."""
import numpy as np

from .registry import measure
from .specs import Param


@measure("utility", param_kind="float_params",
         param_specs=(Param("a", "float", 1.0, "per relevant retrieved"),
                      Param("b", "float", -1.0, "per non-relevant retrieved"),
                      Param("c", "float", 0.0, "per relevant not retrieved"),
                      Param("d", "float", 0.0, "per non-relevant not retrieved (with -N)")), n_params=4,
         complete_fill=0.0, nicknames={"all_trec", "set"})
def utility(r, params):
    """Coefficients a,b,c,d (default 1,-1,0,0); d uses -N (documents in the collection, default 0)."""
    a, b, c, d = params
    n_coll = r.options.num_docs_in_coll or 0
    rr = r.num_rel_ret.astype(np.float64)
    ret = r.num_ret.astype(np.float64)
    rel = r.num_rel.astype(np.float64)
    return a * rr + b * (ret - rr) + c * (rel - rr) + d * (n_coll + rr - ret - rel)
