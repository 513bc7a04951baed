"""prefs_pair: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_pair", nicknames={"all_prefs", "prefs"})
def prefs_pair(r, params=()):
    """Mean over judged document pairs of the fraction of the pair's preferences (one per judgment group) fulfilled."""
    return _prefs.pair(r, "all")
