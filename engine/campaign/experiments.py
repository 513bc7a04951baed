"""Campaign-level experiments (judgment reduction, pool bias, pool building), in memory or streamed over the
run store, as the evaluation seam decides.
"""
from __future__ import annotations

import pandas as pd

from ..errors import CranfieldError
from ..evaluation.seam import is_large


def reduction_campaign(campaign, qrels: pd.DataFrame, measures=None, *, progress=None, **kw) -> pd.DataFrame:
    """`stability.reduction.reduction_experiment` on a campaign's runs against `qrels` (its judgments
    or its truth), streamed over the run store for a large campaign; options as the campaign's
    (no depth cut). `kw`: method, levels, trials, seed."""
    from ..stability.reduction import reduction_experiment, reduction_experiment_store

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
    from ..stability.poolbias import leave_group_out, leave_manual_out, pool_bias_store
    from ..stability.rejudge import Rejudger

    measures = measures or campaign.measures()
    depth = depth or int((campaign.config.get("pool") or {}).get("depth") or 50)
    q, meta, opt = campaign.qrels(), campaign.run_meta(), campaign.eval_options(max_depth=None)
    if complete:
        from ..completion.experiment import completion_poolbias
        from ..documents.store import DocStore
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
    from ..pooling.fusion import FUSION_POOLS
    st = campaign.store()
    if st is not None and strategy not in FUSION_POOLS:   # fusion pools weigh whole rankings: in memory
        from ..pooling.store import build_pool_store
        return build_pool_store(st, strategy, budget, renames=campaign.run_renames(), **kw)
    from ..pooling import build_pool
    return build_pool(campaign.runs(), strategy, budget, **kw)

