"""gd_err@k: gdeval's ERR@k (TREC Web 2010-2014: R = (2^g - 1)/16, maximum grade 4)."""
from .m_gd_ndcg import gd_hook
from .registry import register

register(gd_hook("gd_err@20"))
