"""prefs_num_prefs_ful_ret: trec_eval's preference measure (-R prefs / -R qrels_prefs)."""
from . import _prefs
from .registry import measure


@measure("prefs_num_prefs_ful_ret", value_kind="long", aggregate="sum", nicknames={"all_prefs", "prefs"})
def prefs_num_prefs_ful_ret(r, params=()):
    """Number of preferences fulfilled among retrieved documents (both retrieved, preferred one ranked higher)."""
    return _prefs.count(r, "ful_ret")
