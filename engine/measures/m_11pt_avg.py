"""11pt_avg: interpolated precision averaged over recall levels 0.0, 0.1, ..., 1.0."""
import numpy as np

from .registry import measure


@measure("11pt_avg", params=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
         param_kind="float_params", nicknames={"all_trec"})
def pt11_avg(r, params):
    """Mean of iprec_at_recall over the given recall levels (kept in the order given, as trec_eval)."""
    vals = r.interpolated_at_recall_cutoffs(r.recall_cutoffs(params))
    # trec_eval adds the levels from the last one back to the first
    return np.add.accumulate(vals[:, ::-1], axis=1)[:, -1] / len(params)
