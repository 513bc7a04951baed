"""gdeval's nDCG@k and ERR@k per (run, topic) (TREC Web 2010-2014), the kernel of gd_ndcg@k and gd_err@k
(`engine.official.gdeval` prints them as gdeval.pl does)."""
from __future__ import annotations

import numpy as np

MAX_GRADE = 4


def gd_values(r, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per (run, topic) group of a Ranked structure: (nDCG@k, ERR@k) as gdeval."""
    if r.max_grade > 1023:                 # 2^g overflows a double: gdeval.pl would print inf/nan
        from ..errors import CranfieldError
        raise CranfieldError(f"gdeval: grade {r.max_grade} is too large for its gain 2^g - 1 (at most 1023; "
                             f"gdeval's grades are 0-4)")
    g = np.maximum(r.rel, 0).astype(np.float64)
    gain = np.where(r.rel > 0, 2.0 ** g - 1.0, 0.0)
    rank = r.rank.astype(np.float64)
    inside = rank <= k
    dcg = r.seg_sum(np.where(inside, gain / np.log2(rank + 1.0), 0.0))
    # ideal DCG per topic from the judged grades (sorted descending)
    off, tg = r.t_grades_offsets, r.t_grades.astype(np.float64)
    n_t = len(off) - 1
    idcg_t = np.zeros(n_t)
    for t in range(n_t):
        gr = tg[off[t]:off[t + 1]][:k]
        gr = gr[gr > 0]
        if len(gr):
            idcg_t[t] = float(np.sum((2.0 ** gr - 1.0) / np.log2(np.arange(2, len(gr) + 2))))
    idcg = idcg_t[r.g_topic]
    ndcg = np.divide(dcg, idcg, out=np.zeros(r.n_groups), where=idcg > 0)
    R = np.where(inside, gain / 2.0 ** MAX_GRADE, 0.0)
    # prod_{i<r}(1 - R_i) per group: exclusive cumulative product via cumulative log would fail at R = 1
    err = np.zeros(r.n_groups)
    for gi in range(r.n_groups):
        a, b = int(r.offsets[gi]), int(r.offsets[gi + 1])
        rr = R[a:b]
        if not rr.any():
            continue
        keep = np.concatenate(([1.0], np.cumprod(1.0 - rr)[:-1]))
        err[gi] = float(np.sum(rr * keep / np.arange(1, len(rr) + 1)))
    return ndcg, err
