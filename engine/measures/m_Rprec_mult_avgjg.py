"""Rprec_mult_avgjg: Rprec_mult averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .registry import measure


@measure("Rprec_mult_avgjg", order=400.16, params=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), param_kind="float_cut", nicknames={"qrels_jg"})
def Rprec_mult_avgjg(r, params=()):
    """Rprec_mult computed against each judgment group's judgments, averaged over the groups judging the topic."""
    from .judgment_groups import avg_over_groups
    return avg_over_groups(r, "Rprec_mult", params)
