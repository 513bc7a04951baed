"""Rprec_mult: precision at multiples of R."""
import numpy as np

from .registry import measure
from .specs import Param


@measure("Rprec_mult", param_kind="float_cut",
         param_specs=(Param("m", "floats", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                            "precision after m x R documents"),), nicknames={"all_trec"})
def Rprec_mult(r, params):
    """Precision after m * R documents, m * R + 0.9 truncated (missing documents non-relevant)."""
    out = np.zeros((r.n_groups, len(params)))
    for j, m in enumerate(params):
        k = np.trunc(m * r.num_rel.astype(np.float64) + 0.9).astype(np.int64)
        ok = k >= 1
        out[ok, j] = r.at_rank(r.cum_rel, k)[ok] / k[ok]
    return out
