"""bpref: binary preference (Buckley and Voorhees 2004), trec_eval's version."""
import numpy as np

from .registry import measure


def bpref_values(r) -> np.ndarray:
    """Per group bpref; unjudged and non-pool documents are skipped."""
    R = r.num_rel
    nonrel_before = r.seg_cumsum(r.is_nonrel_judged)          # judged non-relevant at or above
    rel_rows = r.is_rel & r.is_judged
    R_row = np.repeat(R, r.num_ret)
    denom = np.minimum(np.repeat(r.num_nonrel, r.num_ret), R_row)
    with np.errstate(divide="ignore", invalid="ignore"):
        pen = np.where(nonrel_before > 0, 1.0 - np.minimum(nonrel_before, R_row) / denom, 1.0)
    s = r.seg_sum(np.where(rel_rows, pen, 0.0))
    return np.divide(s, R, out=s.copy(), where=R > 0)


@measure("bpref", order=8, nicknames={"official", "all_trec"})
def bpref(r, params=()):
    """Per relevant retrieved: 1 - (judged non-relevant above it, capped at R) / min(R, N); sum / R."""
    return bpref_values(r)
