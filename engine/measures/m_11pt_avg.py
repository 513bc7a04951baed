"""11pt_avg: interpolated precision averaged over recall levels 0.0, 0.1, ..., 1.0."""
import numpy as np

from .registry import measure
from .specs import RECALL_LEVELS, Param


@measure("11pt_avg", param_kind="float_params",
         param_specs=(Param("levels", "floats", RECALL_LEVELS, "recall levels averaged (order kept)"),),
         nicknames={"all_trec"})
def pt11_avg(r, params):
    """Mean of iprec_at_recall over the given recall levels (kept in the order given, as trec_eval)."""
    vals = r.interpolated_at_recall_cutoffs(r.recall_cutoffs(params))
    # trec_eval adds the levels from the last one back to the first
    return np.add.accumulate(vals[:, ::-1], axis=1)[:, -1] / len(params)
