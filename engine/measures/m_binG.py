"""binG: binary G, mean over relevant documents of 1 / log2(2 + non-relevant retrieved before it)."""
import numpy as np

from ..ranking.gains import log2_of
from .registry import measure


@measure("binG", nicknames={"all_trec"})
def binG(r, params=()):
    """Sum over relevant retrieved of 1 / log2(2 + documents above it that are not relevant), / num_rel."""
    nonrel_before = r.rank - r.cum_rel          # at a relevant row, cum_rel includes the row itself
    term = np.where(r.is_rel, 1.0 / log2_of(2 + nonrel_before), 0.0)
    s = r.seg_sum(term)
    return np.divide(s, r.num_rel, out=np.zeros(r.n_groups), where=r.num_rel_ret > 0)
