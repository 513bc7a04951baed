"""rpref_N (Sakai 2007 eq. 16: 1/cg_I(R) sum g(r') (1 - penalty(r') / N')), graded, on condensed lists.

Parameter: gains=g0:g1:... (gain per grade; default campaign gains or the grade itself).
"""
from . import preference
from .params import as_dict, get_list, kv_measure
from .specs import GAINS


@kv_measure("rpref_N", (GAINS,))
def rpref_N(r, params=()):
    """Sakai 2007 eq. 16: 1/cg_I(R) sum g(r') (1 - penalty(r') / N')."""
    d = as_dict(params)
    return preference.rpref_N(r, get_list("rpref_N", d, "gains"))
