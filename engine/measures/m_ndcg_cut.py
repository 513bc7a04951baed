"""ndcg_cut: ndcg at fixed cut-offs, gains = the judged grades (no gain parameters)."""
import numpy as np

from ..ranking.gains import log2_of, rank_log2, seg_cumsum_float, seg_cumsum_rows
from .registry import contributes, measure
from .specs import TREC_CUTOFFS, cutoffs


def _ideal_grade_dcg(r) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per topic (offsets, cumulative ideal DCG, number of positive grades) of the grades sorted down."""
    c = r.caches.setdefault("judgments", {})       # derived from the judgments alone (see Ranked.caches)
    if "ideal_grades" not in c:
        g = r.t_grades.astype(np.float64)
        n_t = len(r.topic_names)
        t_of = np.repeat(np.arange(n_t), np.diff(r.t_grades_offsets))
        keep = g > 0
        g, t_of = g[keep], t_of[keep]
        n_pos = np.bincount(t_of, minlength=n_t).astype(np.int64)
        off = np.concatenate(([0], np.cumsum(n_pos))).astype(np.int64)
        pos = np.arange(len(g)) - np.repeat(off[:-1], n_pos)
        c["ideal_grades"] = (off, seg_cumsum_float(g / log2_of(pos + 2), off), n_pos)
    return c["ideal_grades"]


@measure("ndcg_cut", param_kind="int_cut",
         param_specs=cutoffs(TREC_CUTOFFS, "cut-offs: ndcg over the first k documents"),
         nicknames={"all_trec"})
def ndcg_cut(r, params):
    """DCG of the first k documents over the DCG of the first k ideal documents (grade as gain)."""
    gain = np.where(r.rel > 0, r.rel, 0).astype(np.float64)
    cum = seg_cumsum_rows(r, gain / rank_log2(r))
    out = np.empty((r.n_groups, len(params)))
    for j, k in enumerate(params):
        dcg = r.at_rank(cum, k)
        ideal = _ideal_at(r, k)
        out[:, j] = np.divide(dcg, ideal, out=dcg.copy(), where=ideal > 0)
    return out


def _ideal_at(r, k: int) -> np.ndarray:
    """Per group: the ideal DCG of its topic's first k grades (per topic made once per judgments)."""
    c = r.caches.setdefault("judgments", {})
    per_topic = c.get(("ideal_at", k))
    if per_topic is None:
        off, icum, n_pos = _ideal_grade_dcg(r)
        eff = np.minimum(k, n_pos)
        per_topic = np.zeros(len(n_pos))
        ok = eff >= 1
        per_topic[ok] = icum[off[:-1][ok] + eff[ok] - 1]
        c[("ideal_at", k)] = per_topic
    return per_topic[r.g_topic]


@contributes("ndcg_cut")
def ndcg_cut_contributions(r, params):
    """Each top-k document's gain (its grade) / log2(rank + 1), over the ideal DCG at k."""
    per_row = np.where(r.rel > 0, r.rel, 0).astype(np.float64) / rank_log2(r)
    out = np.zeros((r.n_rows, len(params)))
    for j, k in enumerate(params):
        ideal = _ideal_at(r, k)[r.row_group]
        share = np.where(r.rank <= k, per_row, 0.0)
        out[:, j] = np.divide(share, ideal, out=share.copy(), where=ideal > 0)
    return out
