"""bpref_relative (De Beer and Moens; Sakai 2007 eq. 18): relative normalisation by r' - 1."""
from .preference import bpref_relative
from .registry import measure


@measure("bpref_relative", extension=True)
def bpref_relative_(r, params=()):
    """1/R sum over relevant r' != 1 of the condensed list of 1 - (r' - count(r')) / (r' - 1)."""
    return bpref_relative(r)
