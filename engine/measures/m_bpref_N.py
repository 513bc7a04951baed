"""bpref_N (= trec_eval 8's bpref_allnonrel; Sakai 2007 eq. 11): penalty normalised by all N."""
from .preference import bpref_allnonrel
from .registry import measure


@measure("bpref_N", extension=True, nicknames={"incomplete"})
def bpref_N(r, params=()):
    """1/R sum over retrieved relevant r' of 1 - (judged non-relevant above) / N."""
    return bpref_allnonrel(r)


@measure("bpref_allnonrel", extension=True)
def bpref_allnonrel_(r, params=()):
    """Same as bpref_N (trec_eval 8.1 name)."""
    return bpref_allnonrel(r)
