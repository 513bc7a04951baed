"""ndcg: normalized discounted cumulative gain (Jarvelin & Kekalainen), trec_eval's gain parameters."""
import numpy as np

from ..ranking.gains import gain_model, rank_log2, results_dcg
from .registry import contributes, measure
from .specs import GRADE_GAINS


def dcg_parts(r, params=()) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (the run's DCG over all retrieved, the topic's ideal DCG)."""
    m = gain_model(r, params)
    cum = results_dcg(r, m)
    dcg = r.at_rank(cum, r.num_ret)
    return dcg, m.t_idcg[r.g_topic]


@measure("ndcg", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,), nicknames={"all_trec"})
def ndcg(r, params=()):
    """DCG / ideal DCG; gains default to the grade, `-m ndcg.1=3,2=9` sets gains per level."""
    dcg, ideal = dcg_parts(r, params)
    return np.divide(dcg, ideal, out=np.zeros(r.n_groups), where=ideal > 0)


@contributes("ndcg")
def ndcg_contributions(r, params=()):
    """Each retrieved document's gain / log2(rank + 1) over the topic's ideal DCG."""
    m = gain_model(r, params)
    ideal = m.t_idcg[r.g_topic][r.row_group]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_row = m.row_gain / rank_log2(r)
    return np.divide(per_row, ideal, out=np.zeros(r.n_rows), where=ideal > 0)
