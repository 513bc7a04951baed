"""yaap: Yet Another Average Precision (not in all_trec, as trec_eval)."""
import numpy as np

from .registry import measure


@measure("yaap")
def yaap(r, params=()):
    """log((1 + S) / (1 + R - S)) with S the sum of precision at each relevant retrieved document."""
    s = r.rel_precision_sum
    return np.log((1.0 + s) / (1.0 + r.num_rel.astype(np.float64) - s))
