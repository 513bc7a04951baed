"""Building a pool: the strategies' names, `build_pool` and its budgets, the `Pool` it returns, and
which of a pool's documents are already judged."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .candidates import group_codes, pool_candidates, rank_within, ranked_runs
from .online import SELECTORS
from .static import SAMPLING, STATIC
from .fusion import FUSION_POOLS, fusion_pool


STRATEGIES = tuple(STATIC) + FUSION_POOLS + tuple(SELECTORS)
ONLINE = frozenset(SELECTORS)
POOL_COLUMNS = ["topic", "doc", "stratum", "prob", "method", "order"]


@dataclass
class Pool:
    """A built pool: the per-document table and the specification that reproduces it."""

    table: pd.DataFrame
    spec: dict = field(default_factory=dict)

    def selected(self) -> pd.DataFrame:
        """Rows to judge (order >= 1), in judging order."""
        t = self.table
        return t[t["order"] > 0].sort_values(["topic", "order"], kind="mergesort").reset_index(drop=True)

    def sizes(self) -> pd.Series:
        """Documents to judge per topic."""
        return self.selected().groupby("topic", sort=False).size()


def resolve_budgets(budget, pool_sizes: pd.Series) -> pd.Series | None:
    """Per-topic budgets (int) from an int (same for every topic), a fraction in (0, 1) of each
    topic's depth pool, or a mapping topic -> int (every pooled topic needs one)."""
    if budget is None:
        return None
    idx = pool_sizes.index
    if isinstance(budget, (dict, pd.Series)):
        m = pd.Series(budget)
        m.index = m.index.astype(str)
        missing = [t for t in idx if t not in m.index]
        if missing:
            raise CranfieldError(f"no budget for topic(s) {', '.join(map(str, missing[:10]))}"
                                 + (" ..." if len(missing) > 10 else "")
                                 + "; give every pooled topic a budget or target")
        out = m.reindex(idx).astype(float)
    else:
        b = float(budget)
        if b <= 0:
            raise CranfieldError(f"budget must be positive, got {budget}")
        if b < 1:
            out = pd.Series(np.maximum(1, np.round(b * pool_sizes.to_numpy(float))), index=idx)
        else:
            if b != int(b):
                raise CranfieldError(f"budget {budget}: give a whole number of documents or a fraction below 1")
            out = pd.Series(b, index=idx)
    if (out < 0).any() or out.isna().any():
        raise CranfieldError("budgets must be non-negative integers")
    return out.astype(np.int64)


def parse_budget(text: str | None):
    """CLI budget text: '50' (per topic), '0.05' or '5%' (of each depth pool)."""
    if text is None:
        return None
    t = str(text).strip()
    try:
        if t.endswith("%"):
            return float(t[:-1]) / 100.0
        v = float(t)
    except ValueError:
        raise CranfieldError(f"--budget {text!r}: use a count per topic (50), a fraction (0.05) or a "
                             f"percentage (5%), or 'targets' for the campaign's per-topic targets") from None
    return int(v) if v >= 1 and v == int(v) else v


def build_pool(runs: pd.DataFrame, strategy: str, budget=None, *, depth: int = 100, seed: int = 0,
               pooled: list[str] | None = None, oracle: pd.DataFrame | None = None, rel_level: int = 1,
               topics: list[str] | None = None, candidates: pd.DataFrame | None = None, **params) -> Pool:
    """Build a pool of the `pooled` runs (default: all) cut at `depth` with `strategy` and per-topic
    `budget` (see `resolve_budgets`). Reproducible from (runs, strategy, budget, depth, seed, params).
    `candidates` (static strategies) is `pool_candidates` computed elsewhere, e.g. streamed over the
    run store by `engine.pooling.store.pool_candidates_store`; `runs` is then not read."""
    if strategy not in STRATEGIES:
        raise CranfieldError(f"unknown pool strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if depth is None or int(depth) < 1:
        raise CranfieldError("pool depth must be a positive integer")
    depth = int(depth)
    _check_params(strategy, params)
    if candidates is not None and strategy in STATIC:
        cand = candidates
        rr = pd.DataFrame({"run": sorted(pooled) if pooled else []})
    else:
        rr = ranked_runs(runs, depth, pooled, topics)
        cand = pool_candidates(rr, depth)
    codes, uniq = group_codes(cand["topic"])
    sizes = pd.Series(np.bincount(codes, minlength=len(uniq)), index=pd.Index(uniq, name="topic"))
    budgets = resolve_budgets(budget, sizes)
    rng = np.random.default_rng(seed)
    spec = {"strategy": strategy, "budget": jsonable(budget), "depth": depth, "seed": int(seed),
            "params": jsonable(params), "pooled": sorted(rr["run"].unique().tolist()) if pooled else None,
            "rel_level": rel_level}
    if strategy in FUSION_POOLS:
        if budgets is None:
            raise CranfieldError(f"strategy {strategy} needs a budget (--budget N per topic)")
        sel = fusion_pool(rr, strategy, budgets, **params)
        table = pd.DataFrame({"topic": sel["topic"].to_numpy(object), "doc": sel["doc"].to_numpy(object),
                              "stratum": np.int64(1), "prob": 1.0, "method": strategy,
                              "order": (sel.groupby("topic", sort=False).cumcount() + 1).to_numpy(np.int64)})
        return Pool(table[POOL_COLUMNS], spec)
    if strategy in STATIC:
        row_budget = None if budgets is None else budgets.reindex(uniq).to_numpy(np.int64)[codes]
        sel, stratum, prob = STATIC[strategy](cand, row_budget, rng=rng, **params)
        order = _selected_order(codes, sel)
        keep = sel | (strategy in SAMPLING)
        table = pd.DataFrame({"topic": _text(cand["topic"]), "doc": _text(cand["doc"]),
                              "stratum": np.asarray(stratum, np.int64), "prob": np.asarray(prob, np.float64),
                              "method": _repeated(strategy, len(cand)), "order": order.astype(np.int64)},
                             copy=False)
        if not keep.all():
            table = table[keep]
        return Pool(table.reset_index(drop=True), spec)
    if oracle is None:
        raise CranfieldError(f"strategy {strategy} is online: it needs judgments as they arrive. Judge with "
                             f"`cranfield judgments next`, or replay known judgments (--oracle truth)")
    if budgets is None:
        budgets = sizes
    known = _grade_lookup(oracle)
    frames = []
    for topic, rows in rr.groupby("topic", sort=False):
        sel_ = SELECTORS[strategy](rows, depth, **params)
        grades = known.get(topic, {})
        picked = []
        for _ in range(int(budgets.get(topic, 0))):
            i = sel_.next()
            if i is None:
                break
            d = sel_.docs[i]
            sel_.update(i, grades.get(d, 0) >= rel_level)
            picked.append(d)
        frames.append(pd.DataFrame({"topic": topic, "doc": np.asarray(picked, dtype=object)}))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"topic": [], "doc": []})
    table["stratum"] = np.int64(1)
    table["prob"] = 1.0
    table["method"] = strategy
    table["order"] = (table.groupby("topic", sort=False).cumcount() + 1).astype(np.int64)
    return Pool(table[POOL_COLUMNS], spec)


def _selected_order(codes: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """1, 2, ... for the selected rows of each group in row order, 0 for the others (by running
    counts when the groups are contiguous, as candidates are; else by a stable sort)."""
    if len(codes) and (np.diff(codes) < 0).any():
        return np.where(sel, rank_within(np.where(sel, codes, -1 - codes)) + 1, 0)
    at = np.flatnonzero(sel)                        # only the selected rows are counted
    c = codes[at]
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1]))) if len(c) else np.zeros(0, np.int64)
    order = np.zeros(len(codes), np.int64)
    order[at] = np.arange(len(c)) - np.repeat(starts, np.diff(np.append(starts, len(c)))) + 1
    return order


def _repeated(text: str, n: int):
    """A text column of `n` times `text`: Arrow chunks sharing one buffer (not a string per row)."""
    import pyarrow as pa
    step = 1 << 20
    if n <= step:
        return pd.Series([text] * n, dtype="str").array
    chunk = pa.array([text] * step, pa.large_string())
    k, r = divmod(n, step)
    return pd.Series(pa.chunked_array([chunk] * k + [chunk.slice(0, r)]), dtype="str").array


def _text(col: pd.Series):
    """A text column for a new table: its Arrow strings as they are (no Python string per row), else
    the values as objects."""
    if isinstance(col.dtype, pd.StringDtype):
        return col.array
    return col.to_numpy(object)


def _check_params(strategy: str, params: dict) -> None:
    """Unknown strategy parameters are an error, not silently ignored."""
    import inspect
    fn = (STATIC[strategy] if strategy in STATIC else fusion_pool if strategy in FUSION_POOLS
          else SELECTORS[strategy].__init__)
    names = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind is p.POSITIONAL_OR_KEYWORD or p.kind is p.KEYWORD_ONLY]
    known = set(names) - {"self", "cand", "budget", "rng", "rows", "depth", "rr", "kind", "budgets"}
    bad = sorted(set(params) - known)
    if bad:
        raise CranfieldError(f"strategy {strategy}: unknown parameter(s) {', '.join(bad)}; "
                             f"it takes {', '.join(sorted(known)) or 'none'}")


def _grade_lookup(qrels: pd.DataFrame) -> dict:
    out: dict = {}
    for t, g in qrels.groupby(qrels["topic"].astype(str), sort=False):
        out[t] = dict(zip(g["doc"].astype(str), g["grade"].astype(int)))
    return out


def jsonable(v):
    if isinstance(v, pd.Series):
        return {str(k): int(x) for k, x in v.items()}
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def judged_in_pool(table: pd.DataFrame, qrels: pd.DataFrame) -> pd.Series:
    """Per document to judge of a pool table (order > 0), whether `qrels` already holds a grade >= 0 for
    it (True) or it is new to the assessors (False); indexed like those rows."""
    sel = table[table["order"] > 0]
    judged = qrels[qrels["grade"] >= 0]
    key, have = _pair_text(sel), _pair_text(judged)
    if key is None or have is None:            # an id holding the separator: compare the pairs as pairs
        have = pd.MultiIndex.from_arrays([judged["topic"].astype(str), judged["doc"].astype(str)])
        key = pd.MultiIndex.from_arrays([sel["topic"].astype(str), sel["doc"].astype(str)])
        return pd.Series(key.isin(have), index=sel.index)
    import pyarrow.compute as pc
    return pd.Series(pc.is_in(key, value_set=have).to_numpy(zero_copy_only=False), index=sel.index)


def _pair_text(t: pd.DataFrame):
    """topic NUL doc per row as one Arrow text array (hashed in Arrow, no Python string per row);
    None when an id holds a NUL."""
    import pyarrow as pa
    import pyarrow.compute as pc
    cols = []
    for c in ("topic", "doc"):
        arr = pa.array(t[c].astype(str).array)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        arr = arr.cast(pa.large_string())
        if len(arr) and pc.any(pc.match_substring(arr, "\x00")).as_py():
            return None
        cols.append(arr)
    return pc.binary_join_element_wise(cols[0], cols[1], pa.scalar("\x00", pa.large_string()))
