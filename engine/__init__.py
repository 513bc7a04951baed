"""Cranfield engine: formats, measures, pooling, judgments, stability and cost. No UI imports.

Public names are loaded on first use (PEP 562), so `import engine` (and a command that needs little)
stays fast: pandas, pyarrow and scipy are imported by the modules that use them.
"""
from __future__ import annotations

from engine.util.lazy import lazy_exports
from engine.version import __version__

_EXPORTS = {
    "CranfieldError": "errors", "FormatError": "errors", "Problem": "errors", "Warnings": "errors",
    "compute": "evaluation.evaluate", "evaluate": "evaluation.evaluate", "evaluate_files": "evaluation.evaluate",
    "per_topic_table": "evaluation.evaluate", "summarize": "evaluation.evaluate",
    "trec_eval_lines": "evaluation.evaluate",
    "read_qrels": "formats.qrels", "read_run": "formats.runs", "read_runs": "formats.runs",
    "write_qrels": "formats.qrels", "write_run": "formats.runs",
    "EvalOptions": "ranking.ranked", "build_ranked": "ranking.build",
    "RunStore": "evaluation.store",
    "evaluate_store": "evaluation.blocks",
    "pool_candidates_store": "pooling.store",
    "evaluate_campaign": "evaluation.seam",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = lazy_exports(__name__, {k: f"{__name__}.{v}" for k, v in _EXPORTS.items()}, globals())

