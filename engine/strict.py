"""`cranfield eval --strict-trec-eval`: fail where the trec_eval 10.0 binary fails, with its exit codes.

Cranfield's default is lenient and documented (docs/trec_eval-compat.md): a document retrieved twice is
kept once with a warning, a run topic without judgments is reported and skipped. Scripts that rely on the
binary's exit status get it with this switch:

| condition                                                    | exit |
|--------------------------------------------------------------|------|
| usage error (unknown measure, bad option)                     | 1    |
| the judgments file cannot be read or has a malformed line     | 2    |
| a run file cannot be read or has a malformed line             | 3    |
| a document retrieved twice for a topic                        | 4    |
| a run topic absent from the judgments (without -c)            | 4    |
"""
from __future__ import annotations

from .errors import FormatError, Warnings

EXIT_USAGE, EXIT_REL_INFO, EXIT_RESULTS, EXIT_EVAL = 1, 2, 3, 4

_DUPLICATE_MARKERS = ("retrieved twice", "repeated documents")


def input_error_code(exc: FormatError, judgments_path: str) -> int:
    """The binary's exit code for an unreadable input: 2 for the judgments file, 3 for a run file."""
    paths = {str(p.path) for p in getattr(exc, "problems", [])}
    return EXIT_REL_INFO if str(judgments_path) in paths else EXIT_RESULTS


def eval_failure(warnings: Warnings, notes: dict, complete: bool) -> str | None:
    """The message of the first condition on which trec_eval stops (exit 4), or None."""
    for p in warnings:
        if any(m in p.message for m in _DUPLICATE_MARKERS):
            return f"duplicate document in results: {p}"
    missing = notes.get("topics_without_judgments") or []
    if missing and not complete:
        return (f"run topic {missing[0]} has no judgments ({len(missing)} such topic(s)); "
                "trec_eval stops here (use -c, or drop --strict-trec-eval to skip them)")
    return None
