"""Pool builders: which documents to judge, per topic, under a budget.

`build_pool(runs, strategy, budget, depth=..., seed=...)` returns a `Pool` whose table has one row
per document: topic, doc, stratum, prob (inclusion probability), method (selecting strategy), order
(1.. = judging order; 0 = in the sampling frame, not selected). Strategies:

  depth       depth-k pool (k = `k`, default the pool depth); a budget keeps the best-ranked first
  take_n      round-robin over runs, rank by rank, to the budget
  uniform     simple random sample of the depth pool (infAP)
  stratified  stratified random sample, strata by rank depth (xinfAP / infNDCG; thesis 3.1.5)
  statap      unequal-probability sample, prior from AP, exact inclusion probabilities (statAP)
  rrf         take@N by reciprocal-rank-fusion weight sum 1/(k + rank) over the pooled runs (k = 60)
  rbp         take@N by rank-biased-precision weight sum (1 - p) p^(rank - 1) (p = 0.8)
  mtf         move-to-front (online)          hedge   Hedge (online)          mtc   MTC (online)

Online strategies need the judgments as they arrive: `build_pool(..., oracle=qrels)` replays them
(simulation); interactive judging asks `engine.judging.workflow.next_document`.
"""
from __future__ import annotations

from .candidates import ap_prior, group_codes, pool_candidates, rank_within, ranked_runs
from .online import SELECTORS
from .static import SAMPLING, STATIC
from .fusion import FUSION_POOLS, fusion_pool
from .build import (ONLINE, POOL_COLUMNS, STRATEGIES, Pool, build_pool, judged_in_pool, jsonable, parse_budget,
                    resolve_budgets)
from .targets import MQ_TARGETS, assign_targets, derive_targets
from .files import PENDING, list_pools, pool_log, pool_path, read_pool, recover_pools, write_pool

__all__ = ["Pool", "build_pool", "resolve_budgets", "parse_budget", "assign_targets", "derive_targets",
           "write_pool", "read_pool", "list_pools", "pool_log", "recover_pools", "pool_path", "STRATEGIES", "ONLINE", "MQ_TARGETS",
           "POOL_COLUMNS", "ap_prior", "ranked_runs", "pool_candidates",
           "SELECTORS", "STATIC", "SAMPLING", "FUSION_POOLS", "fusion_pool", "group_codes", "rank_within",
           "judged_in_pool", "jsonable", "PENDING"]
