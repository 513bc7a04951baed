"""statR: estimated number of relevant documents, R_hat = sum over sampled relevant of 1/pi."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statR", extension=True, aggregate="sum")
def statR(r, params=()):
    """Horvitz-Thompson estimate of the number of relevant documents (Million Query rules; summed over topics)."""
    return statap_terms(r, reference=True)["R_hat"]
