"""statP: precision at cut-offs estimated from inclusion probabilities (Million Query rules)."""
import numpy as np

from ..estimators.statap import statap_terms, valid_topics
from .registry import measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("statP", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: estimated precision after k documents"),
         extension=True, nicknames={"incomplete"}, aggregate="validmean")
def statP(r, params):
    """(1/k) sum over sampled relevant documents ranked <= k of 1/pi (methods 0, 2: pi = 1; valid topics)."""
    v = statap_terms(r, tuple(params), reference=True)["P"]
    return np.where(valid_topics(r)[r.g_topic][:, None], v, np.nan)
