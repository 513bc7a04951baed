"""Rprec_mult_avgjg: Rprec_mult averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .judgment_groups import avgjg_measure

avgjg_measure("Rprec_mult_avgjg", "Rprec_mult", "Rprec_mult computed against each judgment group's judgments, "
              "averaged over the groups judging the topic.")
