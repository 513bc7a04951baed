"""prefs_avgjg: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_avgjg", nicknames={"all_prefs", "prefs"})
def prefs_avgjg(r, params=()):
    """Preferences fulfilled / possible within each judgment group, averaged over the groups."""
    return _prefs.avgjg(r, "all")
