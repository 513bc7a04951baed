"""xinfAP: extended inferred AP for stratified samples (thesis 3.1.2), as NIST's sample_eval.pl.

Judgments need a stratum per document (qrels column `stratum`; `topic iter doc stratum grade` files,
grade -1 = pooled, not sampled). Without strata the whole pool is one stratum.
Parameter: cutoff=N (documents used per list; default 1000 as sample_eval.pl).
"""
from .params import as_dict, get_int, kv_measure
from .specs import Param
from ..estimators.xinfap import MAX_RESULT_SIZE, xinfap_terms


@kv_measure("xinfAP", (Param("cutoff", "int", MAX_RESULT_SIZE, "documents used per ranked list", minimum=1),),
            nicknames={"incomplete"})
def xinfAP(r, params=()):
    """Estimated AP from a stratified sample (per-stratum Lidstone-smoothed precision above each rank)."""
    d = as_dict(params)
    return xinfap_terms(r, cutoff=get_int("xinfAP", d, "cutoff", MAX_RESULT_SIZE))["xinfAP"]
