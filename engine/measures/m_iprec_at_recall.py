"""iprec_at_recall: interpolated precision at recall levels (the recall-precision graph)."""

from .registry import measure


@measure("iprec_at_recall", params=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
         param_kind="float_cut", nicknames={"official", "all_trec"})
def iprec_at_recall(r, params):
    """Highest precision at any rank at or below the point where recall reaches each level.

    A level is a number of relevant documents, fraction * R rounded (trec_eval 10.0: to nearest;
    9.x: + 0.9 then truncated; EvalOptions.trec_eval_version selects).
    """
    return r.interpolated_at_recall_cutoffs(r.recall_cutoffs(params))
