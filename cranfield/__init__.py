"""Cranfield as a Python library: trec_eval-exact evaluation for notebooks and training loops.

`import cranfield` is the public name of the engine (the code lives in the `engine` package).
Names load on first use, so the import itself costs almost nothing.

>>> import cranfield
>>> qrels = {"q1": {"d1": 1, "d2": 0}}
>>> run = {"q1": {"d1": 1.2, "d2": 3.4}}
>>> cranfield.Evaluator(qrels, ["AP", "P@1"]).evaluate(run)
{'q1': {'AP': 0.5, 'P@1': 0.0}}
>>> df = cranfield.evaluate(qrels, run, ["map", "P.1"])
>>> cranfield.summarize(df).round(4).to_dict("records")
[{'map': 0.5, 'P_1': 0.0}]
"""
from __future__ import annotations

from engine._lazy import lazy_exports
from engine.version import __version__

_EXPORTS = {
    "evaluate": "engine.api", "Evaluator": "engine.api", "measures": "engine.api",
    "as_qrels": "engine.adapters", "as_runs": "engine.adapters", "Issues": "engine.adapters",
    "summarize": "engine.evaluate", "trec_eval_lines": "engine.evaluate", "per_topic_table": "engine.evaluate",
    "read_qrels": "engine.formats", "read_run": "engine.formats", "read_runs": "engine.formats",
    "write_qrels": "engine.formats", "write_run": "engine.formats",
    "load_campaign": "engine.campaign", "evaluate_campaign": "engine.evaluation",
    "EvalOptions": "engine.ranking", "CranfieldError": "engine.errors", "FormatError": "engine.errors",
    "Warnings": "engine.errors",
    "compare": "engine.tables",
}
__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
