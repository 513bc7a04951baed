"""The one campaign-level evaluation seam: a campaign's runs and judgments evaluated in memory, or streamed by
topic blocks over the run store when large; trec_eval's text (`cranfield eval --campaign`) run by run from
the store's parts by the file path's kernel (`campaign_trec_lines`).
"""
from __future__ import annotations

import os
from concurrent.futures import Executor
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import pandas as pd


LARGE_ROWS = 20_000_000

"""The one large-campaign threshold: above this many run rows a campaign's run table is never held
whole; evaluation, reductions and pool bias stream over the run store by topic blocks."""

PARALLEL_ROWS = 2_000_000
"""From this many run rows, an evaluation that needs no ranked lists (`ranked=False`, e.g. `cranfield eval
--campaign`) reads the store's parts by blocks of whole runs (up to THREAD_BLOCK_ROWS rows a block, a
larger run alone) in one thread per core instead of building the whole pandas run table; trec_eval's text
is then made run by run in worker processes (`campaign_trec_lines`) when the judgments are one plain file."""
THREAD_BLOCK_ROWS = 100_000

PROCESS_BLOCK_ROWS = 500_000
"""Run rows per block of whole runs when a large campaign is evaluated by runs in worker processes
(`evaluate_campaign(by_runs=True)`): a few blocks per worker per second, small results to send back."""

RUN_ROWS = 2_000_000
"""Runs of at most this many rows are evaluated one run per worker process whatever the store's size (memory
follows the largest run; a thousand runs of 50 topics are read once each, not once per topic block); a
store above LARGE_ROWS with a larger run is read by topic blocks."""


def block_rows_for(rows: int, large: bool) -> int | None:
    """Run rows per topic block for a store of `rows` rows, or None for the whole table in memory."""
    from .blocks import BLOCK_ROWS
    if large:
        return BLOCK_ROWS
    cores = os.cpu_count() or 1
    if rows < PARALLEL_ROWS or cores < 2:
        return None
    return min(THREAD_BLOCK_ROWS, -(-rows // cores))


@dataclass
class Evaluation:
    """A campaign's evaluation: the long table plus what some callers need besides it."""

    table: pd.DataFrame                    # run, topic, measure, value (runs under their campaign names)
    strings: pd.DataFrame | None = None    # text-valued measures (with `strings=True`)
    facts: pd.DataFrame | None = None      # per (run, topic) ranking facts (with `extras=True`)
    notes: dict = field(default_factory=dict)
    computed: object = None                # in memory: engine.evaluation.evaluate.Computed (ranked lists); else None

    @property
    def streamed(self) -> bool:
        return self.computed is None


def is_large(campaign) -> bool:
    """Whether `campaign` has more than LARGE_ROWS run rows (its runs are then read per topic block)."""
    st = campaign.store()
    return st is not None and st.rows > LARGE_ROWS


def campaign_trec_lines(campaign, measures=None, *, options: dict | None = None, per_query: bool = False
                        ) -> tuple[list[str], list[str]] | None:
    """trec_eval's text for the campaign's runs (store order, campaign names) and the runs' topics without
    judgments, each run read from its run store part and evaluated by the file path's kernel in worker
    processes (`plain.trec_eval_lines_streamed`); None when the campaign needs `evaluate_campaign` (no
    store, a store above LARGE_ROWS with a run above RUN_ROWS, judgments other than one plain qrels file,
    anything the kernel leaves to the full path) or evaluates in memory (fewer than PARALLEL_ROWS rows). The same bytes either way; the
    same warnings and errors (store checks, run checks)."""
    from .plain import PartRun, judgment_grades, trec_eval_lines_streamed

    st = campaign.store()
    if st is None or st.rows < PARALLEL_ROWS or (st.rows > LARGE_ROWS and st.largest_run_rows > RUN_ROWS):
        return None
    qrels_path = campaign.judgment_file()
    grades = judgment_grades(qrels_path) if qrels_path is not None else None
    if grades is None:
        return None
    campaign.check_grades(grades)     # the warnings in the order of the other paths: store, judgments, runs
    opt = campaign.eval_options(**(options or {}))
    rename = campaign.run_renames()
    gains = tuple(sorted(campaign.gains().items()))
    parts = [PartRun(rename.get(r, r), str(st.part(r)), gains) for r in st.runs]
    # the run checks (warnings from the store's index and topics/, pandas) run beside the runs
    return trec_eval_lines_streamed(qrels_path, parts, measures, opt, per_query=per_query,
                                    meanwhile=lambda: campaign.check_runs(st))


def evaluate_campaign(campaign, measures=None, *, options=None, extras: bool = False, strings: bool = False,
                      executor: Executor | None = None,
                      progress: Callable[[int, int], None] | None = None,
                      qrels: pd.DataFrame | None = None, ranked: bool = True, by_runs: bool = False) -> Evaluation:
    """Evaluate `measures` (default: the campaign's evaluation.measures) on the campaign's runs and
    merged judgments (or `qrels`, e.g. sources combined by engine.judgments.sources). `options`: an EvalOptions,
    or a dict of overrides of the campaign's options. `ranked=False`: the caller needs no ranked lists
    (`Evaluation.computed`), so a campaign of PARALLEL_ROWS rows or more is evaluated from the store's
    parts by topic blocks across the cores (the same table). `by_runs` (with `ranked=False`): a large
    campaign is read by blocks of whole runs (PROCESS_BLOCK_ROWS rows, a larger run alone) in one worker
    process per core, each part read once (the same table), for callers that want the table soon (the TUI)."""
    from ..ranking.ranked import EvalOptions
    from ..ranking.join import rename_runs

    if measures is None:
        measures = campaign.measures() or None
    opt = options if isinstance(options, EvalOptions) else campaign.eval_options(**(options or {}))
    gains = campaign.gains()
    qrels = campaign.qrels() if qrels is None else qrels
    st = campaign.store()
    large = st is not None and (st.rows > LARGE_ROWS or executor is not None)
    if large and by_runs and not ranked and executor is None:
        # blocks of whole runs in worker processes (the judgments sent once to each): never in memory,
        # each part read once, all cores busy (threads would share one interpreter lock)
        block_rows, threads, whole_runs = PROCESS_BLOCK_ROWS, False, True
    else:
        block_rows = block_rows_for(st.rows, large) if st is not None and (large or not ranked) else None
        threads = whole_runs = not large
    if block_rows is not None:
        from .blocks import evaluate_store
        campaign.check_runs(st)
        with ExitStack() as stack:
            if threads:        # threads: the kernel runs in numpy and Arrow; no worker start-up, no pickling
                from concurrent.futures import ThreadPoolExecutor
                executor = stack.enter_context(ThreadPoolExecutor(os.cpu_count() or 1))
            df = evaluate_store(st, qrels, measures, options=opt, gains=gains, strings=strings, extras=extras,
                                executor=executor, progress=progress, block_rows=block_rows, by_runs=whole_runs)
        rename = campaign.run_renames()
        text = df.attrs.pop("strings", None)
        facts = df.attrs.pop("extras", None)
        rename_runs(df, rename)
        rename_runs(text, rename)
        rename_runs(facts, rename)
        return Evaluation(df, text, facts, dict(df.attrs.get("notes", {})))
    from .blocks import group_facts
    from .evaluate import compute, to_long, to_long_str
    c = compute(qrels, campaign.runs(), measures, opt, extra={"gains": dict(gains)} if gains else None)
    if progress is not None:
        progress(1, 1)
    return Evaluation(to_long(c), to_long_str(c) if strings else None, group_facts(c.ranked) if extras else None,
                      c.notes, c)

