"""statP: precision at cut-offs estimated from inclusion probabilities (Million Query rules)."""
import numpy as np

from ..estimators.statap import statap_terms, valid_topics
from .registry import measure


@measure("statP", params=(5, 10, 15, 20, 30, 100, 200, 500, 1000), param_kind="int_cut",
         extension=True, nicknames={"incomplete"}, aggregate="validmean")
def statP(r, params):
    """(1/k) sum over sampled relevant documents ranked <= k of 1/pi (methods 0, 2: pi = 1; valid topics)."""
    v = statap_terms(r, tuple(params), reference=True)["P"]
    return np.where(valid_topics(r)[r.g_topic][:, None], v, np.nan)
