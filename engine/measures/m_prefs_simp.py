"""prefs_simp: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_simp", nicknames={"all_prefs", "prefs"})
def prefs_simp(r, params=()):
    """Preferences fulfilled / preferences possible, all judgment groups pooled."""
    return _prefs.simp(r, "all")
