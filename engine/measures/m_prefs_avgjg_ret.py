"""prefs_avgjg_ret: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_avgjg_ret", nicknames={"all_prefs"})
def prefs_avgjg_ret(r, params=()):
    """prefs_avgjg over pairs of retrieved documents only."""
    return _prefs.avgjg(r, "ret")
