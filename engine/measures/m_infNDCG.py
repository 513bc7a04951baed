"""infNDCG: inferred nDCG for stratified samples (thesis 3.1.4), as NIST's sample_eval.pl.

Gain = grade (sample_eval.pl's default) unless gains=g0:g1:... is given (its -G mapping);
discount 1/log2(rank + 1); estimated optimal DCG from rounded per-grade counts; cut-off 1000.
"""
from .params import as_dict, get_int, get_list, kv_measure
from .specs import Param
from ..estimators.xinfap import MAX_RESULT_SIZE, xinfap_terms


@kv_measure("infNDCG", (Param("cutoff", "int", MAX_RESULT_SIZE, "documents used per ranked list", minimum=1),
                        Param("gains", "list", None, "gain per grade g0:g1:... (sample_eval's -G)",
                              default_text="the grade")), nicknames={"incomplete"})
def infNDCG(r, params=()):
    """Estimated DCG / estimated optimal DCG from a stratified sample."""
    d = as_dict(params)
    return xinfap_terms(r, cutoff=get_int("infNDCG", d, "cutoff", MAX_RESULT_SIZE),
                        gains=get_list("infNDCG", d, "gains"))["infNDCG"]
