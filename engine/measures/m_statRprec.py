"""statRprec: estimated R-precision as the Million Query script computes it."""
import numpy as np

from ..estimators.statap import statap_terms, valid_topics
from .registry import measure


@measure("statRprec", extension=True, nicknames={"incomplete"}, aggregate="validmean")
def statRprec(r, params=()):
    """Sampled relevant weight (1/pi) in the top round(R_hat) over round(R_hat); for a list shorter than
    round(R_hat), its whole weight over the unrounded R_hat (statAP_MQ_eval v3; valid topics only)."""
    v = statap_terms(r, reference=True)["Rprec_script"]
    return np.where(valid_topics(r)[r.g_topic], v, np.nan)
