"""statAP_bc: statAP with a second-order correction of the ratio estimator's bias (file probabilities)."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statAP_bc", extension=True)
def statAP_bc(r, params=()):
    """Ratio estimate minus its estimated bias (N V / R^3 - C / R^2), every topic, the file's probabilities."""
    return statap_terms(r)["statAP"]
