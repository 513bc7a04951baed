"""dcg: discounted cumulative gain over the whole ranking (trec_eval's gains)."""
from .m_ndcg import dcg_parts
from .registry import measure


@measure("dcg", params=(), param_kind="pairs")
def dcg(r, params=()):
    """Sum of gain / log2(rank + 1) over retrieved documents."""
    return dcg_parts(r, params)[0]
