"""P_avgjg: P averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .judgment_groups import avgjg_measure

avgjg_measure("P_avgjg", "P", "P computed against each judgment group's judgments, averaged over the groups "
              "judging the topic.")
