"""Cranfield engine: formats, measures, pooling, judgments, stability and cost. No UI imports."""
from __future__ import annotations

from .errors import CranfieldError, FormatError, Problem, Warnings
from .evaluate import compute, evaluate, evaluate_files, per_topic_table, summarize, trec_eval_lines
from .formats import read_qrels, read_run, read_runs, write_qrels, write_run
from .ranking import EvalOptions, build_ranked
from .store import RunStore
from .blocks import evaluate_store
from .pooling.store import pool_candidates_store

__all__ = [
    "CranfieldError", "FormatError", "Problem", "Warnings", "EvalOptions", "build_ranked",
    "compute", "evaluate", "evaluate_files", "per_topic_table", "summarize", "trec_eval_lines",
    "read_qrels", "read_run", "read_runs", "write_qrels", "write_run",
    "RunStore", "evaluate_store", "pool_candidates_store",
]
__version__ = "0.1.0"
