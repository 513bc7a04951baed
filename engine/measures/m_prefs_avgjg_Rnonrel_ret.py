"""prefs_avgjg_Rnonrel_ret: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_avgjg_Rnonrel_ret", nicknames={"all_prefs"})
def prefs_avgjg_Rnonrel_ret(r, params=()):
    """prefs_avgjg_Rnonrel over pairs of retrieved documents only (R and N counted among retrieved ones)."""
    return _prefs.rnonrel(r, ret_only=True)
