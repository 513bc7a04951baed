"""map_avgjg: map averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .registry import measure


@measure("map_avgjg", order=400.02, nicknames={"qrels_jg"})
def map_avgjg(r, params=()):
    """map computed against each judgment group's judgments, averaged over the groups judging the topic."""
    from .judgment_groups import avg_over_groups
    return avg_over_groups(r, "map", params)
