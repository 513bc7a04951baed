"""statAP_ratio: the plain generalized ratio estimate of AP (statAP without its bias correction)."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statAP_ratio", extension=True)
def statAP_ratio(r, params=()):
    """(sum over sampled relevant retrieved of PC_hat / pi) / R_hat, no second-order bias correction."""
    return statap_terms(r)["statAP_ratio"]
