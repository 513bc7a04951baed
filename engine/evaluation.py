"""The one campaign-level evaluation seam.

`evaluate_campaign(campaign, measures)` is the only place that decides how a campaign is evaluated:
in memory on the campaign's run table (one pass, the ranked lists kept for drill-downs), or streamed
over its run store by topic blocks (bounded memory, all cores) when the campaign has more than
`LARGE_ROWS` run rows or an executor is given. Either way it applies the campaign's gains
(relevance.scale), its run renames and its evaluation options (depth, binary threshold), so every
caller (the CLI, the TUI, `Campaign.evaluate`) gets the same numbers. Callers never choose a path.
"""
from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from .errors import CranfieldError

LARGE_ROWS = 20_000_000
"""The one large-campaign threshold: above this many run rows a campaign's run table is never held
whole; evaluation, reductions and pool bias stream over the run store by topic blocks."""


@dataclass
class Evaluation:
    """A campaign's evaluation: the long table plus what some callers need besides it."""

    table: pd.DataFrame                    # run, topic, measure, value (runs under their campaign names)
    strings: pd.DataFrame | None = None    # text-valued measures (with `strings=True`)
    facts: pd.DataFrame | None = None      # per (run, topic) ranking facts (with `extras=True`)
    notes: dict = field(default_factory=dict)
    computed: object = None                # in memory: engine.evaluate.Computed (ranked lists); else None

    @property
    def streamed(self) -> bool:
        return self.computed is None


def is_large(campaign) -> bool:
    """Whether `campaign` has more than LARGE_ROWS run rows (its runs are then read per topic block)."""
    st = campaign.store()
    return st is not None and st.rows > LARGE_ROWS


def evaluate_campaign(campaign, measures=None, *, options=None, extras: bool = False, strings: bool = False,
                      executor: Executor | None = None,
                      progress: Callable[[int, int], None] | None = None,
                      qrels: pd.DataFrame | None = None) -> Evaluation:
    """Evaluate `measures` (default: the campaign's evaluation.measures) on the campaign's runs and
    merged judgments (or `qrels`, e.g. sources combined by engine.sources). `options`: an EvalOptions,
    or a dict of overrides of the campaign's options."""
    from .ranking import EvalOptions, rename_runs

    if measures is None:
        measures = campaign.measures() or None
    opt = options if isinstance(options, EvalOptions) else campaign.eval_options(**(options or {}))
    gains = campaign.gains()
    qrels = campaign.qrels() if qrels is None else qrels
    st = campaign.store()
    if st is not None and (st.rows > LARGE_ROWS or executor is not None):
        from .blocks import evaluate_store
        df = evaluate_store(st, qrels, measures, options=opt, gains=gains, strings=strings, extras=extras,
                            executor=executor, progress=progress)
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


def reduction_campaign(campaign, qrels: pd.DataFrame, measures=None, *, progress=None, **kw) -> pd.DataFrame:
    """`stability.reduction.reduction_experiment` on a campaign's runs against `qrels` (its judgments
    or its truth), streamed over the run store for a large campaign; options as the campaign's
    (no depth cut). `kw`: method, levels, trials, seed."""
    from .stability.reduction import reduction_experiment, reduction_experiment_store

    measures = measures or campaign.measures()
    opt = campaign.eval_options(max_depth=None)
    kw.setdefault("rel_level", campaign.binary_threshold())
    if is_large(campaign):
        return reduction_experiment_store(campaign.store(), qrels, measures, options=opt, progress=progress, **kw)
    return reduction_experiment(qrels, campaign.runs(), measures, options=opt, progress=progress, **kw)


def pool_bias_campaign(campaign, measures=None, *, mode: str = "group", depth: int | None = None,
                       complete=None, progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Leave-one-group-out or leave-manual-out (`mode`) on a campaign at pool depth `depth` (default
    campaign.yaml pool.depth, else 50): (summary, per-run detail). With `complete` (a list of none, kld,
    svm) the reduced judgments are also completed by predicted relevance (engine.completion), one summary
    row per completion and measure."""
    from .stability.poolbias import leave_group_out, leave_manual_out, pool_bias_store
    from .stability.rejudge import Rejudger

    measures = measures or campaign.measures()
    depth = depth or int((campaign.config.get("pool") or {}).get("depth") or 50)
    q, meta, opt = campaign.qrels(), campaign.run_meta(), campaign.eval_options(max_depth=None)
    if complete:
        from .completion.experiment import completion_poolbias
        from .docstore import DocStore
        store = DocStore.for_campaign(campaign.root)
        if store is None and any(c != "none" for c in complete):
            raise CranfieldError(f"{campaign.root}: completion needs document text (cranfield docs import)")
        return completion_poolbias(q, campaign.runs(), meta, measures, store, mode=mode, depth=depth,
                                   complete_with=complete, rel_level=campaign.binary_threshold(), options=opt,
                                   progress=progress)
    if is_large(campaign) and not campaign.run_renames():
        return pool_bias_store(campaign.store(), q, meta, measures, mode=mode, depth=depth, options=opt,
                               progress=progress)
    runs = campaign.runs()
    fn = leave_group_out if mode == "group" else leave_manual_out
    return fn(q, runs, meta, measures, depth=depth, rejudger=Rejudger(q, runs, measures, opt), progress=progress)


def pool_campaign(campaign, strategy: str, budget=None, **kw):
    """`pooling.build_pool` over a campaign's runs (read from the run store by topic blocks, only the
    first `depth` documents of each ranking, when the campaign has one). `kw` as build_pool's."""
    from .pooling.fusion import FUSION_POOLS
    st = campaign.store()
    if st is not None and strategy not in FUSION_POOLS:   # fusion pools weigh whole rankings: in memory
        from .pooling.store import build_pool_store
        return build_pool_store(st, strategy, budget, renames=campaign.run_renames(), **kw)
    from .pooling import build_pool
    return build_pool(campaign.runs(), strategy, budget, **kw)
