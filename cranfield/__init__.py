"""Cranfield as a Python library: trec_eval-exact evaluation for notebooks and training loops.

`import cranfield` is the public name of the engine (the code lives in the `engine` package; the
command line is `cranfield.cli`).
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

from engine.util.lazy import lazy_exports
from engine.version import __version__

_EXPORTS = {
    "evaluate": "engine.evaluation.api", "Evaluator": "engine.evaluation.api", "measures": "engine.evaluation.api",
    "InputWarning": "engine.evaluation.adapters", "register_ir_measures": "engine.evaluation.irm_provider",
    "unregister_ir_measures": "engine.evaluation.irm_provider",
    "as_qrels": "engine.evaluation.adapters", "as_runs": "engine.evaluation.adapters",
    "Issues": "engine.evaluation.adapters",
    "summarize": "engine.evaluation.evaluate", "trec_eval_lines": "engine.evaluation.evaluate",
    "per_topic_table": "engine.evaluation.evaluate",
    "read_qrels": "engine.formats.qrels", "read_run": "engine.formats.runs", "read_runs": "engine.formats.runs",
    "write_qrels": "engine.formats.qrels", "write_run": "engine.formats.runs",
    "load_campaign": "engine.campaign.campaign", "evaluate_campaign": "engine.evaluation.seam",
    "EvalOptions": "engine.ranking.ranked", "CranfieldError": "engine.errors", "FormatError": "engine.errors",
    "Warnings": "engine.errors",
    "compare": "engine.campaign.pt_experiment", "Experiment": "engine.campaign.pt_experiment",
    "ExperimentError": "engine.campaign.pt_experiment",
    "RelevanceEvaluator": "engine.evaluation.pytrec", "compute_aggregated_measure": "engine.evaluation.pytrec",
}
__all__ = sorted(_EXPORTS) + ["__version__"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
