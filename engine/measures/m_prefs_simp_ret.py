"""prefs_simp_ret: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_simp_ret", nicknames={"all_prefs"})
def prefs_simp_ret(r, params=()):
    """prefs_simp over pairs of retrieved documents only."""
    return _prefs.simp(r, "ret")
