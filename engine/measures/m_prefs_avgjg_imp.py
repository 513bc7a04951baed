"""prefs_avgjg_imp: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_avgjg_imp", nicknames={"all_prefs"})
def prefs_avgjg_imp(r, params=()):
    """prefs_avgjg over pairs with at least one retrieved document."""
    return _prefs.avgjg(r, "imp")
