"""statAP_var: estimated variance of statAP per topic (linearization under Poisson sampling)."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statAP_var", extension=True)
def statAP_var(r, params=()):
    """Variance of statAP (ratio-estimator linearization plus precision-estimate variance)."""
    return statap_terms(r)["statAP_var"]
