"""bpref_relative2 (Sakai 2007 eq. 20): relative normalisation by r'; equals AP on condensed lists."""
from .preference import bpref_relative2
from .registry import measure


@measure("bpref_relative2", extension=True)
def bpref_relative2_(r, params=()):
    """1/R sum over relevant r' of the condensed list of 1 - (r' - count(r')) / r' (= map@cond)."""
    return bpref_relative2(r)
