"""Joins of per-document judgment attributes (stratum, inclusion probability) onto ranked rows."""
from __future__ import annotations

import numpy as np

from .._lazy import lazy_module
from ..ranking import Ranked

pd = lazy_module("pandas")


def _qrels(r: Ranked) -> pd.DataFrame:
    q = getattr(r, "qrels", None)
    if q is None:
        raise AttributeError("this Ranked has no qrels attached (use engine.evaluate.compute)")
    return q


def row_index(r: Ranked) -> np.ndarray:
    """Per row: the index of its (topic, doc) judgment row in r.qrels, or -1 when not in the qrels."""
    cache = r.caches.setdefault("est", {})
    if "row_index" in cache:
        return cache["row_index"]
    if "row_index_sparse" in cache:       # set by ranking.ranked_from_arrow
        cache["row_index"] = cache.pop("row_index_sparse").dense()
        return cache["row_index"]
    q = _qrels(r)
    if r.n_rows == 0 or len(q) == 0:
        out = np.full(r.n_rows, -1, np.int64)
    else:
        qt = topic_codes(r)
        codes, uniq = pd.factorize(np.concatenate((np.asarray(r.doc, dtype=object),
                                                   q["doc"].astype(str).to_numpy(object))))
        nd = max(len(uniq), 1)
        rkey = r.g_topic[r.row_group].astype(np.int64) * nd + codes[: r.n_rows]
        qkey = np.where(qt >= 0, qt * nd + codes[r.n_rows:], -1)
        # duplicates keep the last row, as the qrels readers resolve them
        order = np.argsort(qkey, kind="stable")
        ks = qkey[order]
        last = np.concatenate((ks[1:] != ks[:-1], [True]))
        ks, pos_of = ks[last], order[last]
        p = np.searchsorted(ks, rkey)
        pc = np.minimum(p, len(ks) - 1)
        hit = ks[pc] == rkey
        out = np.where(hit, pos_of[pc], -1).astype(np.int64)
    cache["row_index"] = out
    return out


def qcol(r: Ranked, column: str) -> np.ndarray | None:
    """A judgment column (grade, stratum, prob) as an array aligned with r.qrels rows, None if absent.

    Sampling trials (estimators.trials) override columns through the cache without building frames.
    """
    over = r.caches.get("est", {}).get("qrels_arrays", {})
    if column in over:
        return over[column]
    q = _qrels(r)
    return q[column].to_numpy() if column in q.columns else None


def row_column(r: Ranked, column: str, default) -> np.ndarray:
    """Per row: the value of a qrels column (stratum, prob, ...), `default` when absent."""
    idx = row_index(r)
    vals = qcol(r, column)
    if vals is None:
        return np.full(r.n_rows, default)
    out = np.full(r.n_rows, default, dtype=np.result_type(vals.dtype, np.asarray(default).dtype)
                  if vals.dtype.kind in "if" else object)
    ok = idx >= 0
    out[ok] = vals[idx[ok]]
    if out.dtype.kind == "f":
        out[np.isnan(out)] = default
    return out


def topic_codes(r: Ranked, q: pd.DataFrame | None = None) -> np.ndarray:
    """Per qrels row: index of its topic in r.topic_names (-1 if the topic is unknown)."""
    own = q is None or q is getattr(r, "qrels", None)
    q = _qrels(r) if q is None else q
    cache = r.caches.setdefault("est", {})
    if own and "qrels_topics" in cache:
        return cache["qrels_topics"]
    m = {t: i for i, t in enumerate(r.topic_names)}
    out = q["topic"].astype(str).map(m).fillna(-1).to_numpy(np.int64)
    if own:
        cache["qrels_topics"] = out
    return out
