"""The ranked-list kernel: trec_eval's order (`order`), the join of runs with judgments (`join`), the columnar
`Ranked` structure (`ranked`) built once for every measure (`build`), and trec_eval's gain tables (`gains`).
"""
from __future__ import annotations

from ..util.lazy import lazy_exports

# public names, loaded from their module on first use (`from engine.ranking import NAME` works)
_EXPORTS = {
    "RELVALUE_NONPOOL": "engine.ranking.ranked", "RELVALUE_UNJUDGED": "engine.ranking.ranked",
    "BOGUS_DOCNO": "engine.ranking.ranked", "cached_property": "engine.ranking.ranked",
    "EvalOptions": "engine.ranking.ranked", "LazyDocs": "engine.ranking.ranked",
    "Ranked": "engine.ranking.ranked", "ArrowDocs": "engine.ranking.ranked",
    "byte_rank": "engine.ranking.order", "vocab_tie_order": "engine.ranking.order",
    "rank_tie_order": "engine.ranking.order", "list_tie_order": "engine.ranking.order",
    "arrow_tie_order": "engine.ranking.order", "trec_order": "engine.ranking.order",
    "order_rows": "engine.ranking.order", "arrow_run_order": "engine.ranking.order",
    "apply_order": "engine.ranking.order", "lookup_rel": "engine.ranking.join",
    "dict_codes": "engine.ranking.join", "ranked_rows": "engine.ranking.join",
    "judgment_keys": "engine.ranking.join", "run_grades": "engine.ranking.join",
    "judged_at": "engine.ranking.join", "judged_share_at": "engine.ranking.join",
    "ranked_judgment_rows": "engine.ranking.join", "rename_runs": "engine.ranking.join",
    "build_ranked": "engine.ranking.build", "ranked_from_codes": "engine.ranking.build",
    "DENSE_LEVELS": "engine.ranking.build", "topic_judgments": "engine.ranking.build",
    "ranked_from_arrow": "engine.ranking.build",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
