"""statRprec: estimated R-precision as the Million Query script computes it."""
import numpy as np

from ..estimators.statap import statap_terms, valid_topics
from .registry import measure


@measure("statRprec", order=222, extension=True, nicknames={"incomplete"}, aggregate="validmean")
def statRprec(r, params=()):
    """Sampled relevant weight (1/pi) in the top round(R_hat), divided by the unrounded R_hat (valid topics)."""
    v = statap_terms(r, reference=True)["Rprec_unrounded"]
    return np.where(valid_topics(r)[r.g_topic], v, np.nan)
