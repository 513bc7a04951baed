"""bpref_10: bpref-10 (Buckley and Voorhees 2004), the first R + 10 judged non-relevant documents."""
from .preference import bpref_capped
from .registry import measure


@measure("bpref_10", extension=True, nicknames={"incomplete"})
def bpref_10(r, params=()):
    """bpref with R + 10 non-relevant: 1/R sum over relevant of 1 - min(n_above, R+10) / min(N, R+10)."""
    return bpref_capped(r, 10.0)
