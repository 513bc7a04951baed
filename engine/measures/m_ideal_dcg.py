"""ideal_dcg: DCG of the topic's ideal ranking (trec_eval's gains)."""
from .m_ndcg import dcg_parts
from .registry import measure
from .specs import GRADE_GAINS


@measure("ideal_dcg", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,))
def ideal_dcg(r, params=()):
    """DCG of the judged documents sorted by decreasing gain, stopping at the first gain <= 0."""
    return dcg_parts(r, params)[1]
