"""infAP_varlin: linearization (delta-method) variance of infAP per topic.

Keeps the covariances Appendix A drops (precision estimates and cut-off choice share the sampled
documents); in simulation its intervals come closer to the observed spread (docs/incomplete-judgments.md).
Mean CI: engine.estimators.mean_ci(df, "infAP", "infAP_varlin") or `cranfield ci ... --variance linear`.
"""
from ..estimators.infap import infap_variance_linearized
from .registry import measure


@measure("infAP_varlin", extension=True)
def infAP_varlin(r, params=()):
    """Variance of infAP by linearization: (1 - p)/R^2 * sum of squared influence values."""
    return infap_variance_linearized(r)
