"""infAP_varjack: delete-one jackknife variance of infAP per topic (over the topic's judged documents).

In simulation (docs/incomplete-judgments.md) it matches the observed spread of infAP where Appendix A's
estimator is 25-30% low (its derivation takes the precision estimates as unbiased given the sampled
cut-offs, but both come from the same sampled relevant documents). Costs one infAP pass per judged
document of the largest topic. Mean CI: engine.estimators.mean_ci(df, "infAP", "infAP_varjack").
"""
from ..estimators.infap import infap_variance_jackknife
from .registry import measure


@measure("infAP_varjack", extension=True)
def infAP_varjack(r, params=()):
    """Jackknife variance of infAP: (1 - p)(n - 1)/n * sum_j (infAP_(j) - mean)^2, n judged documents."""
    return infap_variance_jackknife(r)
