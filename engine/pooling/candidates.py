"""The candidate documents of a pool: per (topic, doc) best rank over the pooled runs and priors.

Ranks are recomputed in trec_eval order (score descending, ties by document id descending), so a
run file's own rank column is never trusted.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..ranking.join import ranked_rows
from ..ranking.order import text_codes, text_values


def ranked_runs(runs: pd.DataFrame, depth: int | None = None,
                pooled: list[str] | None = None, topics: list[str] | None = None) -> pd.DataFrame:
    """Run rows (run, topic, doc, rank) with trec_eval-order ranks, cut at `depth`, pooled runs only
    (and only `topics` when given)."""
    rc, rn = text_codes(runs["run"])            # names compared per distinct value, not per row
    tc, tn = text_codes(runs["topic"])
    keep = np.ones(len(runs), bool)
    if pooled is not None:
        present = set(rn[np.bincount(rc, minlength=len(rn)) > 0]) if len(rc) else set()
        missing = sorted(set(pooled) - present)
        if missing:
            raise CranfieldError(f"pooled runs not found among the runs: {', '.join(missing[:10])}")
        want = set(pooled)
        keep &= np.fromiter((n in want for n in rn), bool, len(rn))[rc]
    if topics is not None:
        want = set(map(str, topics))
        keep &= np.fromiter((n in want for n in tn), bool, len(tn))[tc]
    if not keep.any():
        raise CranfieldError("no run results to pool (check the runs and the pooled-run selection)")
    whole = bool(keep.all())
    df = runs if whole else runs[keep]
    order, rank = ranked_rows(df, depth)
    if not whole:
        rc, tc = rc[keep], tc[keep]
    return pd.DataFrame({"run": rn[rc[order]], "topic": tn[tc[order]], "doc": text_values(df["doc"])[order],
                         "rank": rank})


def ap_prior(rank: np.ndarray, depth: int) -> np.ndarray:
    """The average-precision prior of a rank in a list of length `depth`: (1 + H_depth - H_{rank-1}) / (2 depth).

    It sums to 1 over ranks 1..depth and decreases with rank (Aslam, Pavlu and Yilmaz).
    """
    h = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, depth + 1))))
    r = np.asarray(rank, dtype=np.int64)
    return (1.0 + h[depth] - h[r - 1]) / (2.0 * depth)


def pool_candidates(rr: pd.DataFrame, depth: int) -> pd.DataFrame:
    """Per (topic, doc) of the depth pool: best rank, runs retrieving it, the run order index of
    the first run reaching the best rank, and the statAP prior (mean AP prior over pooled runs)."""
    n_runs = rr.groupby("topic", sort=False)["run"].nunique()
    run_idx, _ = pd.factorize(rr["run"], sort=True)
    tmp = rr.assign(_prior=ap_prior(rr["rank"].to_numpy(), depth), _run=run_idx)
    tmp = tmp.sort_values(["topic", "doc", "rank", "_run"], kind="mergesort")
    g = tmp.groupby(["topic", "doc"], sort=False)
    cand = pd.DataFrame({"best_rank": g["rank"].first(), "first_run": g["_run"].first(),
                         "n_runs": g["run"].size(), "prior": g["_prior"].sum()}).reset_index()
    cand["prior"] = cand["prior"] / cand["topic"].map(n_runs).to_numpy(np.float64)
    # canonical order: topic, best rank, round-robin over runs, doc
    cand = cand.sort_values(["topic", "best_rank", "first_run", "doc"], kind="mergesort")
    return cand.reset_index(drop=True)


def group_codes(topics: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer topic codes (in order of appearance) and the unique topics."""
    fast = _run_codes(topics)
    if fast is not None:
        return fast
    codes, uniq = pd.factorize(topics.astype(str), sort=False)     # no Python string per row
    return codes.astype(np.int64), np.asarray(uniq, dtype=object)


def _run_codes(topics: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """`group_codes` of Arrow-backed text in sorted runs (a candidate table): codes from where the
    value changes, no hashing; None when the runs are not in strictly increasing order (a value could
    come back), so factorize decides."""
    if not isinstance(topics.dtype, pd.StringDtype) or topics.dtype.storage != "pyarrow" or len(topics) < 2:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    arr = pa.array(topics.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        return None
    change = pc.not_equal(arr.slice(1), arr.slice(0, len(arr) - 1)).to_numpy(zero_copy_only=False)
    first = np.flatnonzero(np.concatenate(([True], change)))
    uniq = np.asarray(arr.take(pa.array(first)).to_pylist(), dtype=object)
    if len(uniq) > 1 and not all(a < b for a, b in zip(uniq[:-1], uniq[1:])):
        return None
    return np.cumsum(np.concatenate(([False], change)), dtype=np.int64), uniq


def rank_within(codes: np.ndarray) -> np.ndarray:
    """0-based position of each row within its (contiguous or not) group, in row order."""
    order = np.argsort(codes, kind="stable")
    c = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1]))) if len(c) else np.zeros(0, np.int64)
    lens = np.diff(np.concatenate((starts, [len(c)])))
    pos = np.empty(len(codes), np.int64)
    pos[order] = np.arange(len(c)) - np.repeat(starts, lens)
    return pos
