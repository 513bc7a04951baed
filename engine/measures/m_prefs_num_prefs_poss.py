"""prefs_num_prefs_poss: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_num_prefs_poss", value_kind="long", aggregate="sum", nicknames={"all_prefs", "prefs"})
def prefs_num_prefs_poss(r, params=()):
    """Number of possible preferences, whether or not the documents were retrieved (summed over judgment groups)."""
    return _prefs.count(r, "poss")
