"""Joins of per-document judgment attributes (stratum, inclusion probability) onto ranked rows."""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..ranking.ranked import Ranked
from ..ranking.join import ranked_judgment_rows

pd = lazy_module("pandas")


def _qrels(r: Ranked) -> pd.DataFrame:
    q = getattr(r, "qrels", None)
    if q is None:
        raise AttributeError("this Ranked has no qrels attached (use engine.evaluation.evaluate.compute)")
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
    out = ranked_judgment_rows(r, topic_codes(r), q["doc"].astype(str).to_numpy(object))
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
