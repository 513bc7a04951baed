"""prefs_pair_ret: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_pair_ret", nicknames={"all_prefs"})
def prefs_pair_ret(r, params=()):
    """prefs_pair over pairs of retrieved documents only."""
    return _prefs.pair(r, "ret")
