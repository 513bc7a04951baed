"""trec_eval's `-R qrels_jg`: one qrels file holding several judgment groups (the second field names the
group, e.g. several assessors of the same documents). The `*_avgjg` measures compute the base measure
against each group's judgments and average the values over the groups judging the topic.
"""
from __future__ import annotations

import pandas as pd

from ..errors import Warnings


def read_qrels_jg(path, warnings: Warnings | None = None) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """(union judgments for the evaluator's topic set, {group: that group's judgments})."""
    from ..formats.fieldlines import read_fields
    w = warnings if warnings is not None else Warnings()
    rows: dict[str, dict] = {}
    for line, t, jg, d, grade in read_fields(path, ["topic", "judgment_group", "docno", "grade"], {"grade": int},
                                             "-R qrels_jg", lines=True):
        g = rows.setdefault(jg, {})
        if (t, d) in g:
            w.add(str(path), line, f"document {d} judged twice for topic {t} in group {jg}; the last judgment is kept")
        g[(t, d)] = grade
    groups = {jg: pd.DataFrame([(t, d, v) for (t, d), v in g.items()], columns=["topic", "doc", "grade"])
              for jg, g in sorted(rows.items())}
    union = pd.concat(list(groups.values()), ignore_index=True).drop_duplicates(["topic", "doc"], keep="last")
    return union.reset_index(drop=True), groups
