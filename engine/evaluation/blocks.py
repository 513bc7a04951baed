"""Evaluation streamed over the run store, one block of topics at a time (pooling over the store:
engine.pooling.store; which path a campaign takes: engine.evaluation.seam).

Every measure of a (run, topic) depends on that ranking and that topic's judgments only, so the
judged topics are cut into blocks of about `block_rows` run rows; a block task reads its rows from
the Parquet parts, evaluates them with the in-memory kernels and returns a small long table. Memory
is bounded by the block size times the number of workers, whatever the campaign's size, and the
joined result is identical to `engine.evaluation.evaluate` on the whole table.

A block task is a pure function of file paths and small tables (`BlockTask`), so any
`concurrent.futures.Executor` runs it: a local process pool (default, one process per core), a thread
pool, or a cluster's executor such as Dask's `Client.get_executor()` (`engine.evaluation.distributed`) when the
parts sit on storage every worker sees.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import uuid
from concurrent.futures import Executor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Callable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from ..ranking.ranked import EvalOptions
from ..ranking.join import judged_at
from ..util.parallel import SafeProcessPool, map_tasks
from .store import RunStore, read_parts, to_frame

BLOCK_ROWS = 1_500_000   # run rows per topic block (a task), cut where row groups end (RunStore.topic_blocks): at MQ size 0.83M-row blocks, 1.35 GB peak (2M: 1.65M-row blocks, same speed, 1.93 GB); the Parquet row groups: store.ROW_GROUP_ROWS


@dataclass(frozen=True)
class BlockTask:
    """One block: per run (tag, part path, row groups), the block's topics and their judgments."""

    runs: tuple[tuple[str, str, tuple[int, ...]], ...]
    run_order: tuple[str, ...]
    topics: tuple[str, ...]
    qrels: pd.DataFrame | None        # None: shared with the worker (`shared`)
    measures: object
    options: EvalOptions
    extra: dict | None
    max_pos: int | None = None
    strings: bool = False
    extras: bool = False
    judged: object = None        # ranking.build.ArrowJudgments(qrels), shared by blocks run in one process
    shared: str | None = None    # qrels None: the judgments `share_judgments` gave this process under this token


_SHARED: dict[str, list] = {}


def share_judgments(token: str, qrels: pd.DataFrame) -> None:
    """The judgments the tasks of `token` use, in this process (a worker's setup: sent once per worker,
    not with every task); their `ArrowJudgments` are made at the first task."""
    _SHARED.clear()
    _SHARED[token] = [qrels, None]


def _with_judgments(task: BlockTask) -> BlockTask:
    """`task` with its judgments in place (those shared with this process under its token)."""
    if task.shared is None:
        return task
    got = _SHARED.get(task.shared)
    if got is None:
        raise RuntimeError(f"evaluate_block: no judgments were shared under {task.shared!r} in this process")
    if got[1] is None:
        from ..ranking.build import ArrowJudgments
        got[1] = ArrowJudgments(got[0])
    return replace(task, qrels=got[0], judged=got[1], shared=None)


def read_block(task: BlockTask, columns: list[str] | None = None) -> pd.DataFrame:
    """The block's run rows as a run table (categorical run/topic/doc), runs in `run_order`."""
    return to_frame(read_block_table(task, columns))


def read_block_table(task: BlockTask, columns: list[str] | None = None, others: bool = False) -> pa.Table:
    """The block's run rows as an Arrow table (run dictionary column first, topic dictionary-encoded),
    runs in `run_order`. `others`: also the rows of other topics in the row groups read (for a caller
    that drops the topics not in its judgments anyway)."""
    return read_parts(task.runs, None if others else task.topics, columns or ["topic", "doc", "score"],
                      task.max_pos)


def evaluate_block(task: BlockTask) -> tuple[pd.DataFrame, dict, pd.DataFrame | None]:
    """Evaluate one block: (long table run, topic, measure, value; notes; text-valued measures)."""
    from .evaluate import compute, to_long, to_long_str
    from ..util.memory import keep_freed_memory

    if mp.parent_process() is not None:
        keep_freed_memory()    # a worker process evaluates block after block: freed memory reused, not faulted in again
    task = _with_judgments(task)
    runs = read_block_table(task, others=True)      # the join leaves out topics the block's judgments lack
    c = compute(task.qrels, runs, task.measures, task.options, run_order=list(task.run_order), extra=task.extra,
                judged=task.judged)
    if task.extras:
        c.notes["extras"] = group_facts(c.ranked)
    return to_long(c), c.notes, (to_long_str(c) if task.strings else None)


def group_facts(r) -> pd.DataFrame:
    """Per (run, topic) ranking: results, top-10 documents judged and unjudged, judged depth (deepest k
    with the whole top k judged), and whether the run had no results for the topic (-c fill)."""
    judged10, top10 = judged_at(r.row_group, r.rank, r.rel, 10, r.n_groups)
    unj = r.rel < 0
    first = np.full(r.n_groups, np.iinfo(np.int64).max)
    if r.n_rows:
        rows = np.flatnonzero(unj)
        np.minimum.at(first, r.row_group[rows], r.rank[rows])
    return pd.DataFrame({"run": np.asarray(r.run_names, dtype=object)[r.g_run],
                         "topic": np.asarray(r.topic_names, dtype=object)[r.g_topic],
                         "num_ret": r.num_ret.astype(np.int64),
                         "top10_judged": judged10, "top10_unjudged": top10 - judged10,
                         "depth": np.minimum(first - 1, r.num_ret).astype(np.int64),
                         "missing": np.asarray(r.g_missing, bool) if r.g_missing is not None
                         else np.zeros(r.n_groups, bool)})


def plan_blocks(store: RunStore, topics: list[str], run_order: list[str], block_rows: int = BLOCK_ROWS,
                cap: int | None = None, heads: dict | None = None
                ) -> list[tuple[list[str], tuple[tuple[str, str, tuple[int, ...]], ...]]]:
    """Blocks of `topics` (kept in order) with, per run, its part and the row groups holding them;
    `cap`: only the first `cap` rows of each ranking will be read (blocks are sized by those). `heads`
    (`store.heads.head_plan`): the runs whose head is read instead, with its row group of each topic."""
    ix = store.index
    ix = ix[ix["run"].isin(set(run_order))]
    blocks = store.topic_blocks(topics, block_rows, runs=run_order, cap=cap)
    block_of = {t: i for i, b in enumerate(blocks) for t in b}
    ix = ix.assign(block=ix["topic"].map(block_of))
    ix = ix[ix["block"].notna()].astype({"block": np.int64})
    if heads:
        ix = ix.assign(row_group=np.fromiter(
            (heads[r][1][t] if r in heads else g for r, t, g in
             zip(ix["run"].tolist(), ix["topic"].tolist(), ix["row_group"].tolist())), np.int64, len(ix)))
    rg = ix.groupby(["block", "run"], sort=False)["row_group"].agg(lambda s: tuple(sorted(set(s.tolist()))))
    rg_of = rg.to_dict()
    parts = {r: heads[r][0] if heads and r in heads else str(store.part(r)) for r in run_order}
    out = []
    for i, b in enumerate(blocks):
        out.append((b, tuple((r, parts[r], rg_of.get((i, r), ())) for r in run_order)))
    return out


def plan_run_blocks(store: RunStore, run_order: list[str], block_rows: int) -> list[list[str]]:
    """`run_order` cut into consecutive groups of whole runs of at most ~`block_rows` rows (a larger run
    alone): each part is read once, whole, with no topic filter per row group."""
    per = store.index.groupby("run")["rows"].sum()
    blocks: list[list[str]] = []
    acc = 0
    for r in run_order:
        n = int(per.get(r, 0))
        if not blocks or (blocks[-1] and acc + n > block_rows):
            blocks.append([])
            acc = 0
        blocks[-1].append(r)
        acc += n
    return blocks


def sorted_topics(topics) -> list[str]:
    return sorted({str(t) for t in topics}, key=lambda s: s.encode("utf-8"))


def block_rows_of(plan: list, topics: pd.Series) -> list[np.ndarray]:
    """Per block of `plan`: the positions of the rows whose topic is in it (e.g. a qrels' rows)."""
    codes, names = pd.factorize(topics)
    block_of = {x: i for i, (b, _) in enumerate(plan) for x in b}
    lut = np.asarray([block_of.get(str(x), -1) for x in names] + [-1], np.int64)
    qb = lut[codes]                                          # (code -1, a missing topic: the trailing -1)
    order = np.argsort(qb, kind="stable")
    bounds = np.searchsorted(qb[order], np.arange(len(plan) + 1))
    return [order[bounds[i]:bounds[i + 1]] for i in range(len(plan))]


def evaluate_store(store: RunStore, qrels: pd.DataFrame, measures=None, *, options: EvalOptions | None = None,
                   gains: dict | None = None, runs: list[str] | None = None, block_rows: int = BLOCK_ROWS,
                   workers: int | None = None, executor: Executor | None = None,
                   progress: Callable[[int, int], None] | None = None, strings: bool = False,
                   extras: bool = False, by_runs: bool = False) -> pd.DataFrame:
    """`engine.evaluate(qrels, runs, measures)` over the store's runs, streamed by topic blocks.

    Same long table (run, topic, measure, value; same order and attrs) as the in-memory call on the
    whole run table. `runs` selects runs (default all, in store order). With `strings`, the
    text-valued measures (relstring) are in `df.attrs["strings"]`; notes in `df.attrs["notes"]`; with
    `extras`, `group_facts` of every (run, topic) in `df.attrs["extras"]`. `by_runs`: a block is a group
    of whole runs with every judgment (each part read once, whole; in local worker processes the
    judgments are sent once to each worker, not with every task) instead of a block of topics across the
    runs (row groups holding topics of several blocks are read once per block)."""
    from .evaluate import to_long_empty

    opt = options or EvalOptions()
    extra = {"gains": dict(gains)} if gains else None
    run_order = list(store.runs if runs is None else runs)
    q = qrels
    topics = sorted_topics(pd.unique(q["topic"]))
    tasks: list[BlockTask] | Iterator[BlockTask] = []
    with ExitStack() as stack:
        if by_runs:
            groups = plan_run_blocks(store, run_order, block_rows)
            k = min(workers or os.cpu_count() or 1, len(groups))
            if executor is None and k >= 2:
                # worker processes: the judgments go once to each, not with every task
                token, qt, judged = uuid.uuid4().hex, None, None
                executor = stack.enter_context(SafeProcessPool(k, setup=(share_judgments, (token, q))))
            else:                     # threads or this process: one ArrowJudgments shared by every block
                from ..ranking.build import ArrowJudgments
                token, qt, judged = None, q, ArrowJudgments(q)
            # each block's parts are checked as it is sent (the workers start on the first meanwhile)
            tasks = (BlockTask(tuple((r, str(store.part(r)), None) for r in group), tuple(group), tuple(topics),
                               qt, measures, opt, extra, strings=strings, extras=extras, judged=judged, shared=token)
                     for group in groups)                                      # -c fills only this block's runs
        else:
            plan = plan_blocks(store, topics, run_order, block_rows)
            for (b, parts), rows in zip(plan, block_rows_of(plan, q["topic"])):
                sub = q.iloc[rows].reset_index(drop=True)
                tasks.append(BlockTask(parts, tuple(run_order), tuple(b), sub, measures, opt, extra, strings=strings,
                                       extras=extras))
        results = map_tasks(evaluate_block, tasks, workers, executor, progress,
                            total=len(groups) if by_runs else None)
    frames = [df for df, _, _ in results if len(df)]
    notes: dict = {}
    ix = store.index
    unjudged = sorted(set(ix.loc[ix["run"].isin(set(run_order)), "topic"].tolist()) - set(topics))
    if unjudged:
        notes["topics_without_judgments"] = unjudged
    filled = sum(n.get("topics_filled_by_c", 0) for _, n, _ in results)
    if filled:
        notes["topics_filled_by_c"] = filled
    if not frames:
        out = to_long_empty()
        out.attrs["notes"] = notes
        return out
    out = join_blocks(frames, run_order, notes)
    if strings:
        sf = [s for _, _, s in results if s is not None and len(s)]
        out.attrs["strings"] = pd.concat(sf, ignore_index=True) if sf else None
    if extras:
        ef = [n["extras"] for _, n, _ in results if "extras" in n]
        out.attrs["extras"] = pd.concat(ef, ignore_index=True) if ef else None
    return out


def join_blocks(frames: list[pd.DataFrame], run_order: list[str], notes: dict | None = None) -> pd.DataFrame:
    """Long tables (run, topic, measure, value) of consecutive topic blocks joined in the in-memory order
    (measure, run, topic). Run and measure codes are mapped through each block's categories (no string
    per row is hashed again)."""
    measures = list(frames[0]["measure"].cat.categories)
    present = {r for f in frames for r in f["run"].cat.categories}
    runs = [r for r in run_order if r in present]
    r_index = {r: i for i, r in enumerate(runs)}
    m_index = {m: i for i, m in enumerate(measures)}

    def recode(col: pd.Series, index: dict) -> np.ndarray:
        lut = np.asarray([index.get(x, -1) for x in col.cat.categories] + [-1], np.int64)
        return lut[col.cat.codes.to_numpy(np.int64)]           # code -1 (missing) -> the trailing -1

    rc = np.concatenate([recode(f["run"], r_index) for f in frames])
    mc = np.concatenate([recode(f["measure"], m_index) for f in frames])
    value = np.concatenate([f["value"].to_numpy(np.float64) for f in frames])
    order = np.argsort(mc * (len(runs) + 1) + rc, kind="stable")
    tdt = frames[0]["topic"].dtype
    if all(f["topic"].dtype == tdt for f in frames) and isinstance(tdt, pd.StringDtype):
        # Arrow-backed text: joined and reordered in Arrow, no Python string per value
        topic = pd.array(pa.concat_arrays([pa.array(f["topic"]) for f in frames]).take(pa.array(order)),
                         dtype=tdt)
    else:
        topic = np.concatenate([f["topic"].to_numpy(object) for f in frames])[order]
    df = pd.DataFrame({"run": pd.Categorical.from_codes(rc[order], categories=runs),
                       "topic": topic,
                       "measure": pd.Categorical.from_codes(mc[order], categories=measures),
                       "value": value[order]})
    df.attrs["aggregates"] = dict(frames[0].attrs.get("aggregates", {}))
    if notes:
        df.attrs["notes"] = notes
    return df
