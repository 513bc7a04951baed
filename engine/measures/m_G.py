"""G: normalized gain that discounts a document by how far the run lags the ideal gain before it."""
import numpy as np

from ..ranking.gains import gain_model, row_topic, seg_cumsum_rows
from .registry import measure
from .specs import GRADE_GAINS


@measure("G", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,), nicknames={"all_trec"})
def G(r, params=()):
    """Sum of gain / log2(2 + ideal cost so far - run gain so far), over the ideal gain sum.

    The cost of ideal position i is max(ideal gain, 1) inside the positive ideal prefix, 1 after it.
    """
    m = gain_model(r, params)
    t = row_topic(r)
    i = r.rank - 1
    inside = i < m.t_len[t]
    cost = np.ones(r.n_rows)
    cost[inside] = np.maximum(m.ideal_gain[m.t_off[t[inside]] + i[inside]], 1.0)
    cum_cost = seg_cumsum_rows(r, cost)
    g = m.row_gain
    run_gain = seg_cumsum_rows(r, g)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cum_cost - run_gain), 0.0)
        s = r.seg_sum(term)
        ideal = m.t_ideal_sum[r.g_topic]
        return np.divide(s, ideal, out=np.zeros(r.n_groups), where=ideal > 0)
