"""Rndcg: ndcg averaged at the ranks where the ideal gain changes (the R levels)."""
import numpy as np

from ..ranking.gains import gain_model, group_value_at, results_dcg
from .registry import measure
from .specs import GRADE_GAINS


def _boundaries(m) -> tuple[np.ndarray, np.ndarray]:
    """Per topic (CSR offsets, positions k): ideal positions where the gain changes, plus L itself.

    A boundary at k compares the run's DCG over its first k documents with the ideal's first k.
    """
    n_t = len(m.t_len)
    g = m.ideal_gain
    pos = np.arange(len(g)) - np.repeat(m.t_off[:-1], m.t_len)
    change = np.zeros(len(g), bool)
    if len(g):
        change[1:] = g[1:] != g[:-1]
    change &= pos >= 1
    t_of = np.repeat(np.arange(n_t), m.t_len)
    ks_t = np.concatenate((t_of[change], np.flatnonzero(m.t_len > 0)))
    ks = np.concatenate((pos[change], m.t_len[m.t_len > 0]))
    srt = np.lexsort((ks, ks_t))
    ks_t, ks = ks_t[srt], ks[srt]
    counts = np.bincount(ks_t, minlength=n_t)
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64), ks


@measure("Rndcg", params=(), param_kind="pairs", param_specs=(GRADE_GAINS,), nicknames={"all_trec"})
def Rndcg(r, params=()):
    """Mean over the R-level boundaries of DCG@k / ideal DCG@k, plus one more at the end of the
    ranking when it runs at least two documents past the positive ideal prefix (as trec_eval).

    0 when the topic has no relevant documents; NaN (as trec_eval) when there is no boundary.
    """
    m = gain_model(r, params)
    cum = results_dcg(r, m)
    b_off, b_k = _boundaries(m)
    nb = np.diff(b_off)[r.g_topic]
    grp = np.repeat(np.arange(r.n_groups), nb)
    start = np.repeat(b_off[r.g_topic], nb)
    k = b_k[start + np.arange(len(grp)) - np.repeat(np.cumsum(nb) - nb, nb)]
    t = r.g_topic[grp]
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = group_value_at(r, cum, grp, k) / m.ideal_at(t, k)
        s = np.bincount(grp, weights=vals, minlength=r.n_groups)
        L = m.t_len[r.g_topic]
        extra = (L >= 1) & (r.num_ret >= L + 2)
        end = r.at_rank(cum, r.num_ret)
        s = np.where(extra, s + end / m.t_idcg[r.g_topic], s)
        cnt = nb + extra
        val = s / cnt
    return np.where(r.num_rel > 0, val, 0.0)
