"""relstring: the relevance of the first N retrieved documents as a string (per topic only)."""
import numpy as np

from .registry import measure
from .specs import Param

_DIGITS = np.array(list("0123456789"))      # a grade's character (numpy.char would cost its import)


@measure("relstring", param_kind="float_params",
         param_specs=(Param("n", "float", 10.0, "documents shown (the first n)"),), value_kind="str",
         aggregate="none", summary=False, complete_fill="", text_format="'{}'",
         nicknames={"all_trec"})
def relstring(r, params):
    """One character per document: its grade (0-9, '>' above 9), '-' not judged, '.' pooled unjudged."""
    n = max(int(params[0]), 0)
    if r.n_groups == 0:
        return np.zeros(0, dtype=object)
    if n == 0:
        return np.full(r.n_groups, "", dtype=object)
    sel = r.rank <= n
    rel = r.rel[sel]
    ch = np.where(rel > 9, ">", np.where(rel >= 0, _DIGITS[np.clip(rel, 0, 9)],
                  np.where(rel == -1, "-", np.where(rel == -2, ".", "<"))))
    grid = np.zeros((r.n_groups, n), dtype="<U1")
    grid[r.row_group[sel], r.rank[sel] - 1] = ch
    return np.ascontiguousarray(grid).view(f"<U{n}").ravel().astype(object)
