"""trec_eval's `-R` judgment formats beyond plain qrels: what `cranfield eval -R FORMAT` reads.

`load_rel_info(kind, path)` returns the judgments table the evaluator ranks against and the extra data
the format's measures read (`Ranked.extra`): preference groups for `prefs` / `qrels_prefs`, the per-group
judgments for `qrels_jg`.
"""
from __future__ import annotations

import pandas as pd

from ..errors import CranfieldError, Warnings

REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")


def load_rel_info(kind: str, path, warnings: Warnings | None = None) -> tuple[pd.DataFrame, dict]:
    """(judgments table, extra for the measures) of a `-R kind` judgments file."""
    from ..formats.detect import read_judgments
    from ..formats.prefs import prefs_from_qrels, pseudo_qrels, read_prefs, topic_groups

    w = warnings if warnings is not None else Warnings()
    if kind == "prefs":
        prefs = read_prefs(path, w)
        return pseudo_qrels(prefs), {"prefs_groups": topic_groups(prefs)}
    if kind == "qrels_prefs":
        qrels = read_judgments(path, w)
        return qrels, {"prefs_groups": topic_groups(prefs_from_qrels(qrels))}
    if kind == "qrels_jg":
        from .qrels_jg import read_qrels_jg
        qrels, groups = read_qrels_jg(path, w)
        return qrels, {"qrels_jg": groups}
    if kind == "qrels":
        return read_judgments(path, w), {}
    raise CranfieldError(f"unknown judgments format -R {kind!r} (one of {', '.join(REL_FORMATS)})")
