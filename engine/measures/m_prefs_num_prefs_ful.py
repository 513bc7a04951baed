"""prefs_num_prefs_ful: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_num_prefs_ful", value_kind="long", aggregate="sum", nicknames={"all_prefs", "prefs"})
def prefs_num_prefs_ful(r, params=()):
    """Number of preferences fulfilled: the preferred document retrieved and ranked above the other, or the other not retrieved."""
    return _prefs.count(r, "ful")
