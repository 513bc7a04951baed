"""statP: precision at cut-offs estimated from inclusion probabilities (Horvitz-Thompson)."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statP", order=221, params=(5, 10, 15, 20, 30, 100, 200, 500, 1000), param_kind="int_cut",
         extension=True, nicknames={"incomplete"})
def statP(r, params):
    """(1/k) sum over sampled relevant documents ranked <= k of 1/pi."""
    return statap_terms(r, tuple(params))["P"]
