"""Cranfield engine: formats, measures, pooling, judgments, stability and cost. No UI imports.

Public names are loaded on first use (PEP 562), so `import engine` (and a command that needs little)
stays fast: pandas, pyarrow and scipy are imported by the modules that use them.
"""
from __future__ import annotations

import sys
import types

from ._lazy import lazy_exports
from .version import __version__

_EXPORTS = {
    "CranfieldError": "errors", "FormatError": "errors", "Problem": "errors", "Warnings": "errors",
    "compute": "evaluate", "evaluate": "evaluate", "evaluate_files": "evaluate", "per_topic_table": "evaluate",
    "summarize": "evaluate", "trec_eval_lines": "evaluate",
    "read_qrels": "formats", "read_run": "formats", "read_runs": "formats", "write_qrels": "formats",
    "write_run": "formats",
    "EvalOptions": "ranking", "build_ranked": "ranking",
    "RunStore": "store",
    "evaluate_store": "blocks",
    "pool_candidates_store": "pooling.store",
    "evaluate_campaign": "evaluation",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = lazy_exports(__name__, {k: f"{__name__}.{v}" for k, v in _EXPORTS.items()}, globals())


class _Package(types.ModuleType):
    """`engine.evaluate` is the function (as it always was), although a submodule has the same name:
    loading the submodule does not replace the package attribute (the module stays in sys.modules)."""

    def __setattr__(self, name: str, value) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            self.__dict__.pop(name, None)      # resolved by __getattr__ to the exported name instead
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
