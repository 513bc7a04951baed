"""Pooling over the run store: candidates and pools streamed by topic blocks (engine.evaluation.blocks plans them)."""
from __future__ import annotations

from concurrent.futures import Executor
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..evaluation.blocks import BLOCK_ROWS, BlockTask, plan_blocks, read_block, read_block_table, sorted_topics
from ..util.parallel import map_tasks
from ..ranking.ranked import EvalOptions
from ..ranking.join import rename_runs
from ..evaluation.store import RunStore

HEAD_BLOCK_ROWS = 1_000_000   # rows kept per block when the runs' heads are read (every row read is kept): at MQ size ~26 blocks
POOL_BLOCK_ROWS = 4_000_000   # run rows read per candidate block (whole row groups, every rank; 10% kept at depth 100 of 1,000): at MQ size ~4 row groups per run, ~75 blocks; per topic a quarter less CPU than 1.5M-row blocks (fewer part opens and reads)


def candidates_from_table(tab: pa.Table, run_rank: dict[str, int], depth: int,
                          topics: tuple[str, ...] | list[str] | None = None) -> pd.DataFrame:
    """`pooling.candidates.pool_candidates` of run rows in store order (`pos` = trec_eval rank, all
    <= depth): per (topic, doc) best rank, first run (index in `run_rank`), runs retrieving it and the
    mean AP prior over the topic's runs, in the pool's canonical order. Only `topics` when given.
    Text stays in Arrow (topics and documents are ordered by their ranks among the distinct values)."""
    from .candidates import ap_prior
    cols = ["topic", "doc", "best_rank", "first_run", "n_runs", "prior"]
    if len(tab) == 0:
        return pd.DataFrame({c: [] for c in cols})
    rcol = tab.column("run").combine_chunks()
    rlut = np.asarray([run_rank[str(x)] for x in rcol.dictionary.to_pylist()], np.int64)
    run = rlut[rcol.indices.to_numpy()]
    tdict, tc = _sorted_codes(tab.column("topic"))
    # documents by their codes in order of appearance (not sorted): within a topic, (best rank, first run)
    # is one document's alone (a run holds one document at a rank), so document order never decides
    dcol = pc.dictionary_encode(tab.column("doc")).combine_chunks()
    ddict, dc = dcol.dictionary, dcol.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    pos = tab.column("pos").to_numpy().astype(np.int64)
    if topics is not None:
        inside = np.isin(np.asarray(tdict.to_pylist(), dtype=object), list(topics))
        if not inside.all():
            keep = inside[tc]
            run, tc, dc, pos = run[keep], tc[keep], dc[keep], pos[keep]
            if not len(tc):
                return pd.DataFrame({c: [] for c in cols})
    nd, nr, npos = max(len(ddict), 1), max(len(rlut), 1), int(pos.max()) + 1
    key = tc * nd + dc
    # the in-memory order (topic, doc, rank, run) within each (topic, doc), then pandas' grouped sums;
    # one integer key (unique: a run holds a document once and a rank once per topic)
    order = np.argsort((key * npos + pos) * nr + run)
    key, run, pos, tc = key[order], run[order], pos[order], tc[order]
    first = np.concatenate(([True], key[1:] != key[:-1]))
    grp = np.cumsum(first) - 1
    prior = pd.Series(ap_prior(pos, depth)).groupby(grp, sort=False).sum().to_numpy()
    n_runs_row = np.diff(np.append(np.flatnonzero(first), len(key)))
    pairs = np.unique(tc * nr + run)                                 # the runs retrieving for each topic
    t_runs = np.bincount(pairs // nr, minlength=len(tdict))
    g_t, g_d, best, first_run = tc[first], key[first] % nd, pos[first], run[first]
    prior = prior / t_runs[g_t].astype(np.float64)
    # canonical order: topic, best rank, round-robin over runs, doc (ranks order the text as sorting it would)
    out = np.lexsort((g_d, first_run, best, g_t))
    return pd.DataFrame({"topic": pd.Series(tdict.take(pa.array(g_t[out])), dtype="str"),
                         "doc": pd.Series(ddict.take(pa.array(g_d[out])), dtype="str"),
                         "best_rank": best[out], "first_run": first_run[out],
                         "n_runs": n_runs_row[out].astype(np.int64), "prior": prior[out]})


def _sorted_codes(col) -> tuple[pa.Array, np.ndarray]:
    """A text column as (its distinct values in byte order, each row's index among them)."""
    if isinstance(col, pa.ChunkedArray):
        col = (col.unify_dictionaries() if pa.types.is_dictionary(col.type) else col).combine_chunks()
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    values = col.dictionary
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    sort = pc.array_sort_indices(values).to_numpy()
    rank = np.empty(len(sort), np.int64)
    rank[sort] = np.arange(len(sort))
    return values.take(pa.array(sort)), rank[col.indices.to_numpy(zero_copy_only=False)]


def _candidates_block(args) -> pd.DataFrame:
    task, run_rank, depth, columns = args
    out = candidates_from_table(read_block_table(task, ["topic", "doc", "pos"], others=True), run_rank, depth,
                                task.topics)
    return out if columns is None else out[list(columns)]


def pool_candidates_store(store: RunStore, depth: int, pooled: list[str] | None = None,
                          topics: list[str] | None = None, *, block_rows: int = POOL_BLOCK_ROWS,
                          workers: int | None = None, executor: Executor | None = None,
                          progress: Callable[[int, int], None] | None = None,
                          columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """`pooling.candidates.pool_candidates(ranked_runs(runs, depth, pooled, topics), depth)` over the
    store, streamed by topic blocks: only the first `depth` documents of each ranking are read.
    `columns`: only these (in the same rows and order), the others dropped where they are made."""
    from ..errors import CranfieldError
    run_order = list(store.runs if pooled is None else pooled)
    missing = sorted(set(run_order) - set(store.runs))
    if missing:
        raise CranfieldError(f"pooled runs not found among the runs: {', '.join(missing[:10])}")
    all_topics = store.topics() if topics is None else sorted_topics(topics)
    ix = store.index
    ix = ix[ix["run"].isin(set(run_order)) & ix["topic"].isin(set(all_topics))]
    present = sorted(set(ix["run"].tolist()))
    run_rank = {r: i for i, r in enumerate(present)}
    tasks = [(BlockTask(parts, tuple(run_order), tuple(b), pd.DataFrame(), None, EvalOptions(), None,
                        max_pos=depth), run_rank, depth, columns)
             for b, parts in _plan(store, all_topics, run_order, block_rows, depth)]
    # blocks sized by the rows read (whole row groups, every rank), not by the `depth` rows kept: a
    # worker's memory is bounded by what it reads
    frames = [f for f in map_tasks(_candidates_block, tasks, workers, executor, progress) if len(f)]
    if not frames:
        raise CranfieldError("no run results to pool (check the runs and the pooled-run selection)")
    out = pd.concat(frames, ignore_index=True)
    return out


def _plan(store: RunStore, topics: list[str], run_order: list[str], block_rows: int, depth: int,
          cap: int | None = None) -> list:
    """Topic blocks of the first `depth` rows of each ranking: from the runs' heads where they serve
    (blocks of about `block_rows`, at most `HEAD_BLOCK_ROWS`, rows kept), else from the parts (`block_rows` rows read, or
    kept with `cap`)."""
    from ..evaluation.store.heads import head_plan
    heads = head_plan(store, run_order, depth)
    if not heads:
        return plan_blocks(store, topics, run_order, block_rows, cap=cap)
    return plan_blocks(store, topics, run_order, min(block_rows, HEAD_BLOCK_ROWS), cap=depth, heads=heads)


def _pool_block(args) -> pd.DataFrame | None:
    task, strategy, budget, depth, seed, pooled, oracle, rel_level, params, renames = args
    from . import build_pool
    runs = read_block(task, ["topic", "doc", "score", "rank"])
    if len(runs) == 0:
        return None
    if renames:
        rename_runs(runs, renames)
    present = set(runs["run"].astype(str))
    use = [r for r in pooled if r in present] if pooled else None
    if pooled and not use:
        return None
    pool = build_pool(runs, strategy, budget, depth=depth, seed=seed, pooled=use, oracle=oracle,
                      rel_level=rel_level, topics=list(task.topics), **params)
    return pool.table


def build_pool_store(store: RunStore, strategy: str, budget=None, *, depth: int = 100, seed: int = 0,
                     pooled: list[str] | None = None, oracle: pd.DataFrame | None = None, rel_level: int = 1,
                     renames: dict[str, str] | None = None, block_rows: int | None = None,
                     workers: int | None = None, executor: Executor | None = None,
                     progress: Callable[[int, int], None] | None = None, **params):
    """`pooling.build_pool` over the run store, streamed by topic blocks (only the first `depth`
    documents of each ranking are read). Static strategies draw from the streamed candidates with one
    random generator, as in memory; online strategies (judgments replayed from `oracle`) select per
    topic, block by block. `renames` maps store tags to the names `pooled` uses. Same pool as
    `build_pool` on the whole run table."""
    from ..errors import CranfieldError
    from . import POOL_COLUMNS, STATIC, STRATEGIES, Pool, build_pool
    from .static import READS
    if strategy not in STRATEGIES:
        raise CranfieldError(f"unknown pool strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    renames = renames or {}
    back = {v: k for k, v in renames.items()}
    stored = [back.get(r, r) for r in pooled] if pooled else None
    if strategy in STATIC:
        cand = pool_candidates_store(store, depth, stored, block_rows=block_rows or POOL_BLOCK_ROWS, workers=workers,
                                     executor=executor, progress=progress,
                                     columns=("topic", "doc", *READS.get(strategy, ())))
        return build_pool(None, strategy, budget, depth=depth, seed=seed, pooled=pooled, rel_level=rel_level,
                          candidates=cand, oracle=oracle, **params)
    if oracle is None:
        raise CranfieldError(f"strategy {strategy} is online: it needs judgments as they arrive. Judge with "
                             f"`cranfield judgments next`, or replay known judgments (--oracle truth)")
    run_order = list(store.runs if stored is None else stored)
    missing = sorted(set(run_order) - set(store.runs))
    if missing:
        raise CranfieldError(f"pooled runs not found among the runs: {', '.join(missing[:10])}")
    ot = oracle["topic"].astype(str)
    tasks = []
    for bb, parts in _plan(store, store.topics(), list(store.runs), block_rows or BLOCK_ROWS, depth, cap=depth):
        tasks.append((BlockTask(parts, tuple(store.runs), tuple(bb), pd.DataFrame(), None, EvalOptions(), None,
                                max_pos=depth), strategy, budget, depth, seed, pooled, oracle[ot.isin(set(bb))],
                      rel_level, params, renames))
    tables = [t for t in map_tasks(_pool_block, tasks, workers, executor, progress) if t is not None]
    if not tables:
        raise CranfieldError("no run results to pool (check the runs and the pooled-run selection)")
    table = pd.concat(tables, ignore_index=True)[POOL_COLUMNS]
    from . import jsonable
    present = sorted({renames.get(r, r) for r in set(store.index["run"])})
    spec = {"strategy": strategy, "budget": jsonable(budget), "depth": int(depth), "seed": int(seed),
            "params": jsonable(params), "pooled": sorted(set(pooled) & set(present)) if pooled else None,
            "rel_level": rel_level}
    return Pool(table, spec)
