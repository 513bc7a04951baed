"""map_avgjg: map averaged over the judgment groups of a -R qrels_jg file (trec_eval)."""
from .judgment_groups import avgjg_measure

avgjg_measure("map_avgjg", "map", "map computed against each judgment group's judgments, averaged over the "
              "groups judging the topic.")
