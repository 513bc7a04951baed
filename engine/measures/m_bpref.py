"""bpref: binary preference (Buckley and Voorhees 2004), trec_eval's version."""
import numpy as np

from .registry import measure


def bpref_values(r) -> np.ndarray:
    """Per group bpref; unjudged and non-pool documents are skipped."""
    R = r.num_rel
    idx = r.rel_idx                                   # relevant rows are judged (level >= 0)
    g = r.row_group[idx]
    nonrel_before = r.seg_cumsum_at(r.is_nonrel_judged, idx)
    R_row = R[g]
    denom = np.minimum(r.num_nonrel[g], R_row)
    with np.errstate(divide="ignore", invalid="ignore"):
        pen = np.where(nonrel_before > 0, 1.0 - np.minimum(nonrel_before, R_row) / denom, 1.0)
    s = np.bincount(g, weights=pen, minlength=r.n_groups).astype(np.float64)
    return np.divide(s, R, out=s.copy(), where=R > 0)


@measure("bpref", nicknames={"official", "all_trec"})
def bpref(r, params=()):
    """Per relevant retrieved: 1 - (judged non-relevant above it, capped at R) / min(R, N); sum / R."""
    return bpref_values(r)
