"""statP_file: statP with the file's probability for every method, every topic."""
from ..estimators.statap import statap_terms
from .registry import measure


@measure("statP_file", params=(5, 10, 15, 20, 30, 100, 200, 500, 1000), param_kind="int_cut",
         extension=True)
def statP_file(r, params):
    """(1/k) sum over sampled relevant documents ranked <= k of 1/pi, pi as in the file."""
    return statap_terms(r, tuple(params))["P"]
