"""num_rel: number of relevant documents in the judgments."""
import numpy as np

from .registry import measure


@measure("num_rel", value_kind="long", aggregate="sum",
         nicknames={"official", "all_trec", "set"})
def num_rel(r, params=()):
    """Number of relevant documents (grade >= -l level) judged for the topic."""
    return r.num_rel.astype(np.float64)
