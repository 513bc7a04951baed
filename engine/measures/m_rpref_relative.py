"""rpref_relative (Sakai 2007 eq. 17: 1/cg_I(R) sum over r' != 1 of g(r') (1 - penalty(r') / (r' - 1))), graded, on condensed lists.

Parameter: gains=g0:g1:... (gain per grade; default campaign gains or the grade itself).
"""
from . import preference
from .params import as_dict, get_list, kv_measure
from .specs import GAINS


@kv_measure("rpref_relative", (GAINS,))
def rpref_relative(r, params=()):
    """Sakai 2007 eq. 17: 1/cg_I(R) sum over r' != 1 of g(r') (1 - penalty(r') / (r' - 1))."""
    d = as_dict(params)
    return preference.rpref_relative(r, get_list("rpref_relative", d, "gains"))
