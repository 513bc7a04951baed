"""prefs_avgjg_Rnonrel: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_avgjg_Rnonrel", nicknames={"all_prefs"})
def prefs_avgjg_Rnonrel(r, params=()):
    """prefs_avgjg with each judgment group's non-relevant documents counted as if there were R of them."""
    return _prefs.rnonrel(r, ret_only=False)
