"""rpref_relative2 (Sakai 2007 eq. 19: 1/cg_I(R) sum g(r') (1 - penalty(r') / r')), graded, on condensed lists.

Parameter: gains=g0:g1:... (gain per grade; default campaign gains or the grade itself).
"""
from . import preference
from .params import as_dict, get_list, kv_measure
from .specs import GAINS


@kv_measure("rpref_relative2", (GAINS,), nicknames={"incomplete"})
def rpref_relative2(r, params=()):
    """Sakai 2007 eq. 19: 1/cg_I(R) sum g(r') (1 - penalty(r') / r')."""
    d = as_dict(params)
    return preference.rpref_relative2(r, get_list("rpref_relative2", d, "gains"))
