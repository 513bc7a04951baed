"""statAP: AP estimated from judgments with inclusion probabilities (thesis 3.2.1.2; Pavlu and Aslam).

Judgments need a `prob` column (prels: `topic doc grade method probability`); absent means 1.
See engine/estimators/statap.py for the estimators. statAP_var is the per-topic variance; the mean's
interval comes from engine.estimators.mean_ci(df, "statAP") or `cranfield ci ... -m statAP`.
"""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statAP", order=220, extension=True, nicknames={"incomplete"})
def statAP(r, params=()):
    """Estimated AP: generalized ratio estimate (sum of PC_hat/pi over sampled relevant / R_hat), bias-corrected."""
    return statap_terms(r)["statAP"]
