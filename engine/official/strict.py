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
| a judged topic without results in a run (without -c)          | 4    |

The last row is what the binary does (docs/trec_eval-compat.md, deviation 1: its message reads
`result qid '<qid>' not found in qrels`, but the loop fails for a judged topic the run lacks); a run
topic absent from the judgments is ignored by the binary, so it is ignored here too.
"""
from __future__ import annotations

from ..errors import FormatError, Warnings

EXIT_USAGE, EXIT_REL_INFO, EXIT_RESULTS, EXIT_EVAL = 1, 2, 3, 4

_DUPLICATE_MARKERS = ("retrieved twice", "repeated documents")


def input_error_code(exc: FormatError, judgments_path: str) -> int:
    """The binary's exit code for an unreadable input: 2 for the judgments file, 3 for a run file."""
    paths = {str(p.path) for p in getattr(exc, "problems", [])}
    return EXIT_REL_INFO if str(judgments_path) in paths else EXIT_RESULTS


def eval_failure(warnings: Warnings, complete: bool, judged_topics=None, runs=None) -> str | None:
    """The message of the first condition on which trec_eval stops (exit 4), or None."""
    for p in warnings:
        if any(m in p.message for m in _DUPLICATE_MARKERS):
            return f"duplicate document in results: {p}"
    if complete or judged_topics is None or runs is None:
        return None
    judged = sorted(set(map(str, judged_topics)))
    for run, g in runs.groupby("run", sort=False, observed=True):
        have = set(g["topic"].astype(str))
        lacking = [t for t in judged if t not in have]
        if lacking:
            return (f"result qid '{lacking[0]}' not found in qrels (run {run} has no results for judged topic "
                    f"{lacking[0]}, {len(lacking)} such topic(s); use -c, or drop --strict-trec-eval to skip them)")
    return None
