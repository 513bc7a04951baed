"""Files in and out: the strict number grammar, readers and writers of runs, qrels, prels and sample_eval qrels
(format detection), topics, preference and auxiliary evaluator files, safe YAML/JSON, and the text/CSV/LaTeX
table writer.
"""
from __future__ import annotations

from ..util.lazy import lazy_exports

# public names, loaded from their module on first use (`from engine.formats import NAME` works)
_EXPORTS = {
    "PathLike": "engine.formats.files", "read_bytes": "engine.formats.files",
    "check_text": "engine.formats.files", "write_text": "engine.formats.files",
    "read_table": "engine.formats.files", "str_series": "engine.formats.files",
    "RUN_COLUMNS": "engine.formats.runs", "RUN_COLS": "engine.formats.runs", "RUN_LABEL": "engine.formats.runs",
    "read_run": "engine.formats.runs", "read_run_arrays": "engine.formats.runs",
    "warn_extra_fields": "engine.formats.runs", "warn_repeated_docs": "engine.formats.runs",
    "sorted_categorical": "engine.formats.runs", "grouped_categorical": "engine.formats.runs",
    "arrow_run": "engine.formats.runs", "read_runs": "engine.formats.runs", "write_run": "engine.formats.runs",
    "warn_unknown_topics": "engine.formats.runs", "QRELS_COLUMNS": "engine.formats.qrels",
    "JUDGMENT_EXTRA": "engine.formats.qrels", "CONFLICT_RULES": "engine.formats.qrels",
    "QRELS_COLS": "engine.formats.qrels", "QRELS_LABEL": "engine.formats.qrels",
    "rule_text": "engine.formats.qrels", "resolve_duplicate_judgments": "engine.formats.qrels",
    "read_qrels": "engine.formats.qrels", "write_qrels": "engine.formats.qrels",
    "PRELS_COLS": "engine.formats.sampled", "PRELS_LABEL": "engine.formats.sampled",
    "SAMPLE_COLS": "engine.formats.sampled", "SAMPLE_LABEL": "engine.formats.sampled",
    "read_prels": "engine.formats.sampled", "read_sample": "engine.formats.sampled",
    "stratum_probabilities": "engine.formats.sampled", "write_prels": "engine.formats.sampled",
    "write_sample": "engine.formats.sampled", "JUDGMENT_READERS": "engine.formats.detect",
    "JUDGMENT_SUFFIXES": "engine.formats.detect", "detect_judgment_kind": "engine.formats.detect",
    "read_judgments": "engine.formats.detect", "write_judgments": "engine.formats.detect",
    "READERS": "engine.formats.detect", "PlainTable": "engine.formats.plain",
    "plain_table": "engine.formats.plain", "strcmp_codes": "engine.formats.plain",
    "plain_run": "engine.formats.plain", "plain_qrels": "engine.formats.plain",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
