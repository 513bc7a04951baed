"""map: mean average precision."""
import numpy as np

from .registry import contributes, measure


@measure("map", nicknames={"official", "all_trec"})
def map_(r, params=()):
    """Average precision: sum over relevant retrieved of precision at its rank, divided by num_rel."""
    return np.divide(r.rel_precision_sum, r.num_rel, out=np.zeros(r.n_groups), where=r.num_rel_ret > 0)


@contributes("map")
def map_contributions(r, params=()):
    """Per relevant retrieved document: precision at its rank over R (the shares sum to AP)."""
    prec = np.where(r.is_rel, r.cum_rel / r.rank, 0.0)
    R = r.num_rel[r.row_group].astype(np.float64)
    ok = (r.num_rel_ret > 0)[r.row_group]
    return np.divide(prec, R, out=np.zeros(r.n_rows), where=ok)
