"""statRprec: R-precision at the estimated number of relevant documents round(R_hat)."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statRprec", order=222, extension=True, nicknames={"incomplete"})
def statRprec(r, params=()):
    """Estimated precision at rank round(R_hat)."""
    return statap_terms(r)["Rprec"]
