"""prefs_pair_imp: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_pair_imp", nicknames={"all_prefs"})
def prefs_pair_imp(r, params=()):
    """prefs_pair over pairs with at least one retrieved document."""
    return _prefs.pair(r, "imp")
