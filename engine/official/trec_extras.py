"""`cranfield eval` on files with trec_eval's -R formats, -Z or --strict-trec-eval: one evaluation over
the judgments and run tables (the format's data reach the measures through `Ranked.extra`)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..errors import Warnings


@dataclass
class Special:
    """The evaluation and what the CLI reports about it."""

    computed: object            # engine.evaluation.evaluate.Computed
    qrels: pd.DataFrame
    runs: pd.DataFrame
    notes: dict
    n_groups: int


def evaluate_special(args, measures, options, warnings: Warnings) -> Special:
    """Read `args.files` as `-R args.rel_format` judgments and runs, evaluate, standardize with -Z."""
    from ..evaluation.evaluate import compute
    from ..formats.runs import read_runs
    from .relinfo import load_rel_info
    qrels, extra = load_rel_info(args.rel_format, args.files[0], warnings)
    runs = read_runs(args.files[1:], warnings)
    c = compute(qrels, runs, measures, options, extra=extra or None)
    if args.zscores:
        from .zscores import apply_zscores, read_zscores
        c = apply_zscores(c, read_zscores(args.zscores))
    return Special(c, qrels, runs, c.notes, c.ranked.n_groups)


def special_lines(c, args) -> list[str]:
    """trec_eval's text output of a `Special` evaluation (Z-prefixed names with -Z)."""
    from ..evaluation.evaluate import trec_eval_lines
    lines = trec_eval_lines(c, per_query=args.per_query)
    if args.zscores:
        from .zscores import zscore_lines
        lines = zscore_lines(lines, c)
    return lines
