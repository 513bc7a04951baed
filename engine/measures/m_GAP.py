"""GAP: graded average precision (Robertson, Kanoulas and Yilmaz; thesis 5.2.1).

g_j is the probability that a user's relevance threshold is grade j (j = 1..c). With G(i) = g_1+..+g_i:
GAP = sum over ranks n with grade i_n > 0 of (1/n) sum_{m <= n, i_m > 0} G(min(i_n, i_m))
      / sum_i R_i G(i).
Parameter: g=g1:g2:... (threshold probabilities of grades 1, 2, ...; default uniform over 1..max grade).
Binary judgments (max grade 1, g1 = 1) give AP.
"""
import numpy as np

from .params import as_dict, get_list, kv_measure
from .registry import MeasureError
from .specs import Param
from ..ranking.build import DENSE_LEVELS


@kv_measure("GAP", (Param("g", "list", None, "probability that the user's threshold is grade 1, 2, ... (g1:g2:...)",
                          default_text="uniform over grades 1..max"),), nicknames={"incomplete"})
def GAP(r, params=()):
    """Graded average precision with threshold probabilities g."""
    d = as_dict(params)
    if r.t_level_grades is not None:       # its thresholds run over every grade 1..max
        raise MeasureError(f"GAP: the highest grade {r.max_grade} is above {DENSE_LEVELS - 1}; GAP sums over "
                           f"every grade 1..max (use grades 0..{DENSE_LEVELS - 1})")
    c = max(r.max_grade, 1)
    g = get_list("GAP", d, "g")
    if g is None:
        g = np.full(c, 1.0 / c)
    if np.any(g < 0):
        raise MeasureError("GAP: threshold probabilities g must be >= 0")
    G = np.concatenate(([0.0], np.cumsum(g)))          # G[i] = g_1 + ... + g_i
    cap = len(G) - 1
    grade = np.clip(np.where(r.rel > 0, r.rel, 0), 0, None)
    gi = np.minimum(grade, cap)
    num_terms = np.zeros(r.n_rows)
    for lvl in range(1, int(grade.max()) + 1 if r.n_rows and grade.max() > 0 else 1):
        cnt = r.seg_cumsum(grade == lvl)                 # documents of grade lvl at or above each rank
        num_terms += cnt * G[np.minimum(np.minimum(gi, lvl), cap)]
    contrib = np.where(grade > 0, num_terms / r.rank, 0.0)
    num = r.seg_sum(contrib)
    lv = r.t_levels                                       # topics x grades
    Gt = G[np.minimum(np.arange(lv.shape[1]), cap)]
    den_t = (lv * Gt[None, :]).sum(axis=1)
    den = den_t[r.g_topic]
    return np.divide(num, den, out=np.zeros(r.n_groups), where=den > 0)
