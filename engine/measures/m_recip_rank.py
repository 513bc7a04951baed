"""recip_rank: reciprocal rank of the first relevant document."""
import numpy as np

from .registry import measure


@measure("recip_rank", nicknames={"official", "all_trec"})
def recip_rank(r, params=()):
    """1 / rank of the first relevant retrieved document (0 if none)."""
    first = r.seg_max(np.where(r.is_rel, 1.0 / r.rank, 0.0), fill=0.0)
    return first
