"""dcg: discounted cumulative gain over the whole ranking (trec_eval's gains)."""
from .m_ndcg import dcg_parts
from .registry import measure
from .specs import GRADE_GAINS


@measure("dcg", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,))
def dcg(r, params=()):
    """Sum of gain / log2(rank + 1) over retrieved documents."""
    return dcg_parts(r, params)[0]
