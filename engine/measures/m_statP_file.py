"""statP_file: statP with the file's probability for every method, every topic."""
from ..estimators.statap import statap_terms
from .registry import measure
from .specs import TREC_CUTOFFS, cutoffs


@measure("statP_file", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: estimated precision after k documents"),
         extension=True)
def statP_file(r, params):
    """(1/k) sum over sampled relevant documents ranked <= k of 1/pi, pi as in the file."""
    return statap_terms(r, tuple(params))["P"]
