"""infAP: inferred average precision (Yilmaz and Aslam 2006), trec_eval's version."""
import numpy as np

from .registry import measure

INFAP_EPSILON = 0.00001


@measure("infAP", nicknames={"all_trec"})
def infAP(r, params=()):
    """Expected precision at relevant documents, estimated from the judged sample above each.

    Pooled-unjudged documents (grade < 0) are the unsampled part of the pool; documents absent
    from the judgments are skipped.
    """
    idx = r.rel_idx                                  # relevant rows are judged (level >= 0)
    g = r.row_group[idx]
    rel_so_far = r.cum_rel[idx]
    nonrel_so_far = r.seg_cumsum_at(r.is_nonrel_judged, idx)
    unj_so_far = r.seg_cumsum_at(r.rel == -2, idx)
    j = (r.rank[idx] - 1).astype(np.float64)
    a = (rel_so_far - 1 + nonrel_so_far + unj_so_far).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = (1.0 / (j + 1.0) + (j / (j + 1.0)) * (a / j)
                * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, term)
    s = np.bincount(g, weights=term, minlength=r.n_groups).astype(np.float64)
    return np.divide(s, r.num_rel, out=s.copy(), where=r.num_rel > 0)
