"""ndcg_rel: ndcg averaged over the relevant (positive ideal gain) documents."""
import numpy as np

from ..ranking.gains import gain_model, results_dcg, row_topic
from .registry import measure
from .specs import GRADE_GAINS


@measure("ndcg_rel", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,), nicknames={"all_trec"})
def ndcg_rel(r, params=()):
    """Mean of ndcg taken at each retrieved document of positive gain; each of the L positive ideal
    positions counts once, the ones not reached with the DCG at the end of the ranking.

    L is the length of the ideal prefix of positive gains; the ideal DCG at rank k covers its first
    min(k, L) positions.
    """
    m = gain_model(r, params)
    cum = results_dcg(r, m)
    t = row_topic(r)
    pos = m.row_gain > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ideal_row = m.ideal_at(t[pos], r.rank[pos])
        term = np.zeros(r.n_rows)
        term[pos] = cum[pos] / ideal_row
        s = r.seg_sum(term)
        n_pos = r.seg_sum(pos)
        L = m.t_len[r.g_topic]
        end = r.at_rank(cum, r.num_ret)
        s = s + (L - n_pos) * end / m.t_idcg[r.g_topic]
        return np.where(s > 0, s / L, 0.0)
