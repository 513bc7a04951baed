"""statAP: AP estimated from judgments with inclusion probabilities, as the Million Query script computes it.

Judgments need a `prob` column (prels: `topic doc grade method probability`); absent means 1. With a
`method` column the reference rules apply (engine.formats.mq, docs/million-query.md): methods 0 and 2 count with
probability 1, per-topic AP is the ratio estimator sum(PC_hat/pi) / R_hat, and a topic with R_hat = 0 or
no statAP-sampled judgment is not evaluated (NaN; the summary, statMAP, is the mean over valid topics).
statAP_bc is the bias-corrected variant, statAP_ratio the ratio estimator with the file's probabilities.
statAP_var is the per-topic variance; the mean's interval: `cranfield ci ... -m statAP`.
"""
import numpy as np

from ..estimators.statap import statap_terms, valid_topics
from .registry import measure


@measure("statAP", extension=True, nicknames={"incomplete"}, aggregate="validmean")
def statAP(r, params=()):
    """Estimated AP (Million Query script): sum of PC_hat/pi over sampled relevant retrieved / R_hat."""
    v = statap_terms(r, reference=True)["statAP_ratio"]
    return np.where(valid_topics(r)[r.g_topic], v, np.nan)
