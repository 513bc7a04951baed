"""iprec_at_recall: interpolated precision at recall levels (the recall-precision graph)."""

from .registry import measure
from .specs import RECALL_LEVELS, Param


@measure("iprec_at_recall", param_kind="float_cut",
         param_specs=(Param("levels", "floats", RECALL_LEVELS, "recall levels (fractions of R)"),),
         nicknames={"official", "all_trec"})
def iprec_at_recall(r, params):
    """Highest precision at any rank at or below the point where recall reaches each level.

    A level is a number of relevant documents, fraction * R rounded (trec_eval 10.0: to nearest;
    9.x: + 0.9 then truncated; EvalOptions.trec_eval_version selects).
    """
    return r.interpolated_at_recall_cutoffs(r.recall_cutoffs(params))
