"""gm_bpref: geometric mean of bpref over topics."""
from .m_bpref import bpref_values
from .registry import measure


@measure("gm_bpref", aggregate="gmean", per_topic=False, nicknames={"all_trec"})
def gm_bpref(r, params=()):
    """bpref per topic, summarized by its geometric mean (values floored at 1e-5)."""
    return bpref_values(r)
