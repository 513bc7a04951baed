"""statRprec_round: estimated precision at rank round(R_hat), the file's probabilities, every topic."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statRprec_round", extension=True)
def statRprec_round(r, params=()):
    """Estimated precision at rank round(R_hat) (divides by round(R_hat))."""
    return statap_terms(r)["Rprec"]
