"""accuracy: the share of (relevant, non-relevant) pairs of retrieved documents ranked in that order
(ir_measures' Accuracy, a diagnostic for learned rankers)."""
import numpy as np

from .registry import MeasureError, measure
from .specs import Param


@measure("accuracy", params=(), param_kind="pairs", extension=True, aggregate="validmean",
         param_specs=(Param("k", "int", None, "over the first k documents", default_text="whole ranking",
                            minimum=1),))
def accuracy(r, params=()):
    """1 - (non-relevant documents above each relevant one, summed) / (relevant x non-relevant retrieved),
    over the first k documents (`accuracy.k=10`; default all); unjudged documents count as non-relevant;
    not evaluated (NaN, left out of the mean, as ir_measures leaves the topic out) when no relevant
    document is retrieved; 1 when every retrieved document is relevant."""
    k = None
    for name, v in params:
        if name != "k":
            raise MeasureError(f"accuracy: unknown parameter {name!r} (takes k)")
        if v < 1:
            raise MeasureError(f"accuracy: k must be at least 1 (got {v:g})")
        k = v
    top = np.ones(r.n_rows, bool) if k is None else r.rank <= k
    rel = r.is_rel & top
    non = ~r.is_rel & top
    above = r.seg_cumsum(non) - non            # non-relevant documents ranked above
    s = r.seg_sum(np.where(rel, above, 0.0))
    n_rel, n_non = r.seg_sum(rel.astype(np.float64)), r.seg_sum(non.astype(np.float64))
    out = np.full(r.n_groups, np.nan)
    both = (n_rel > 0) & (n_non > 0)
    out[both] = 1.0 - s[both] / (n_rel[both] * n_non[both])
    out[(n_rel > 0) & (n_non == 0)] = 1.0
    return out
