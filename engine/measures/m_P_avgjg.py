"""P_avgjg: P averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .registry import measure


@measure("P_avgjg", order=400.11, params=(5, 10, 15, 20, 30, 100, 200, 500, 1000), param_kind="int_cut", nicknames={"qrels_jg"})
def P_avgjg(r, params=()):
    """P computed against each judgment group's judgments, averaged over the groups judging the topic."""
    from .judgment_groups import avg_over_groups
    return avg_over_groups(r, "P", params)
