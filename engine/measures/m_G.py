"""G: normalized gain that discounts a document by how far the run lags the ideal gain before it."""
import numpy as np

from ._gains import gain_model, seg_cumsum_float
from .registry import measure


@measure("G", order=20, params=(), param_kind="pairs", nicknames={"all_trec"})
def G(r, params=()):
    """Sum of gain / log2(2 + ideal cost so far - run gain so far), over the ideal gain sum.

    The cost of ideal position i is max(ideal gain, 1) inside the positive ideal prefix, 1 after it.
    """
    m = gain_model(r, params)
    key = ("G_cost", tuple(params))
    c = r.__dict__.setdefault("_gain_cache", {})
    if key not in c:
        c[key] = seg_cumsum_float(np.maximum(m.ideal_gain, 1.0), m.t_off)
    cum_cost_ideal = c[key]
    t = r.g_topic[r.row_group] if r.n_rows else np.zeros(0, np.int64)
    k = r.rank                                   # positions 1..k
    L = m.t_len[t]
    inside = m.ideal_at(t, k, cum_cost_ideal)    # cost over the first min(k, L) positions
    cost = inside + np.maximum(k - L, 0)         # one per position beyond the prefix
    run_gain = r.seg_cumsum(m.row_gain)
    g = m.row_gain
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cost - run_gain), 0.0)
    s = r.seg_sum(term)
    ideal = m.t_ideal_sum[r.g_topic]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(s, ideal, out=np.zeros(r.n_groups), where=ideal > 0)
