"""compat: compatibility (Clarke, Vtyurina and Smucker 2021), rank-biased overlap of the ranking with an
ideal ranking, as ir_measures' compat provider computes it (its Compat)."""
import numpy as np

from ..ranking.order import ascending_tie_rank
from ..ranking.gains import pair_param
from .registry import MeasureError, measure
from .specs import Param


@measure("compat", params=(), param_kind="pairs", extension=True, requires={"grade"},
         param_specs=(Param("p", "float", 0.95, "persistence of rank-biased overlap, in (0, 1]"),
                      Param("normalize", "int", 1, "1: divided by the ideal ranking's own overlap; 0: raw",
                            choices=(0, 1))))
def compat(r, params=()):
    """RBO(ranking, ideal, p) to depth max(retrieved, ideal), divided by RBO(ideal, ideal) unless
    `normalize=0`; `compat.p=0.95,normalize=1` are the defaults. The ideal ranking: the documents judged
    above grade 0, by grade descending, then the run's score (0 if not retrieved), then the judgments'
    order; the ranking: score descending, ties by document id ascending (as ir_measures' provider)."""
    for k, _ in params:
        if k not in ("p", "normalize"):
            raise MeasureError(f"compat: unknown parameter {k!r} (takes p, normalize)")
    p = pair_param(params, "p", 0.95)
    normalize = bool(pair_param(params, "normalize", 1.0))
    if not 0 < p <= 1:
        raise MeasureError(f"compat: p must be in (0, 1] (got {p:g})")
    import pandas as pd

    q = r.qrels
    tindex = pd.Index(r.topic_names)
    q_t = tindex.get_indexer(q["topic"].astype(str).to_numpy(object))
    q_g = q["grade"].to_numpy(np.int64)
    ideal = (q_t >= 0) & (q_g > 0)
    q_t, q_g = q_t[ideal], q_g[ideal]
    q_doc = q["doc"].astype(str).to_numpy(object)[ideal]
    q_pos = np.flatnonzero(ideal)                                   # the judgments' order
    # documents of rows and judgments in one code space
    r_doc = np.asarray(r.doc, dtype=object)
    codes, _ = pd.factorize(np.concatenate((r_doc, q_doc)))
    r_code, q_code = codes[:len(r_doc)].astype(np.int64), codes[len(r_doc):].astype(np.int64)
    nd = int(codes.max(initial=0)) + 1
    # every (group, ideal document) pair: the topic's ideal documents repeated per group of that topic
    by_t = np.argsort(q_t, kind="stable")
    t_start = np.searchsorted(q_t[by_t], np.arange(len(r.topic_names) + 1))
    g_len = t_start[r.g_topic + 1] - t_start[r.g_topic]
    pg = np.repeat(np.arange(r.n_groups), g_len)
    within = np.arange(len(pg)) - np.repeat(np.cumsum(g_len) - g_len, g_len)
    pj = by_t[t_start[r.g_topic][pg] + within]                      # index into the ideal judgments
    # where each pair's document was retrieved (rank, score), via a sorted (group, doc) key
    rank = ascending_tie_rank(r)
    rkey = r.row_group * nd + r_code
    srt = np.argsort(rkey, kind="stable")
    pkey = pg * nd + q_code[pj]
    pos = np.minimum(np.searchsorted(rkey[srt], pkey), max(len(srt) - 1, 0))
    hit = (rkey[srt][pos] == pkey) if len(srt) else np.zeros(len(pkey), bool)
    row = srt[pos]
    a = np.where(hit, rank[row] if len(srt) else 0, np.iinfo(np.int64).max // 4)
    score = np.where(hit, r.score[row] if len(srt) else 0.0, 0.0)
    # ideal position: grade descending, score descending, the judgments' order
    order = np.lexsort((q_pos[pj], -score, -q_g[pj], pg))
    b = np.empty(len(pg), np.int64)
    b[order] = np.arange(len(order)) - np.repeat(np.cumsum(g_len) - g_len, g_len) + 1   # groups stay in place
    depth = np.maximum(r.num_ret, g_len).astype(np.int64)
    top = int(depth.max(initial=0))
    i = np.arange(1, top + 1, dtype=np.float64)
    w = p ** (i - 1)
    H = np.concatenate(([0.0], np.cumsum(w / i)))                    # H[n] = sum_{i<=n} p^(i-1) / i
    W = np.concatenate(([0.0], np.cumsum(w)))
    m = np.maximum(a, b)
    counted = m <= depth[pg]
    contrib = np.where(counted, H[depth[pg]] - H[np.minimum(m, top) - 1], 0.0)
    rbo = np.bincount(pg, weights=contrib, minlength=r.n_groups)
    out = np.divide(rbo, W[depth], out=np.zeros(r.n_groups), where=depth > 0)
    if normalize:
        L = g_len
        best = (W[np.minimum(L, depth)] + L * (H[depth] - H[np.minimum(L, depth)]))
        best = np.divide(best, W[depth], out=np.zeros(r.n_groups), where=depth > 0)
        out = np.divide(out, best, out=out.copy(), where=best > 0)
    return out
