"""prefs_simp_imp: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_simp_imp", nicknames={"all_prefs"})
def prefs_simp_imp(r, params=()):
    """prefs_simp over pairs with at least one retrieved document."""
    return _prefs.simp(r, "imp")
