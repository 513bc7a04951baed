"""Preference judgments (trec_eval's `-R prefs` and `-R qrels_prefs`) and their pair counts.

A preference file has lines `topic jg jsg doc level` (trec_eval's `prefs.test` layout): within one judgment
subgroup (jsg) of a judgment group (jg, one assessor), a document with a higher level is preferred to a
document with a lower one; the preferences of all subgroups of a group are joined and closed transitively
(a > b and b > c give a > c); a preference stated twice in a group counts once. `-R qrels_prefs` reads an
ordinary qrels file as one group whose subgroup is the whole topic (higher grade preferred).

For every (run, topic) the counts of each group are formed as trec_eval's `form_prefs_counts` does: a
preference a > b is "ret" when both documents are retrieved (fulfilled when a is ranked above b),
"imp" when only one is (fulfilled when a is the retrieved one) and "notoccur" when neither is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import Warnings

PREFS_COLUMNS = ["topic", "jg", "jsg", "doc", "level"]


def read_prefs(path, warnings: Warnings | None = None) -> pd.DataFrame:
    """A trec_eval preference file (`topic jg jsg doc level`, level a number) as a table."""
    from .fieldlines import read_fields
    rows = read_fields(path, ["topic", "jg", "jsg", "docno", "rel_level"], {"rel_level": float}, "trec_eval -R prefs")
    return pd.DataFrame(rows, columns=PREFS_COLUMNS)


def prefs_from_qrels(qrels: pd.DataFrame) -> pd.DataFrame:
    """trec_eval's `-R qrels_prefs`: one judgment group per topic, higher grade preferred (rows with a
    negative grade, pooled but not judged, state no preference)."""
    q = qrels[qrels["grade"] >= 0]
    return pd.DataFrame({"topic": q["topic"].astype(str).to_numpy(), "jg": "0", "jsg": "0",
                         "doc": q["doc"].astype(str).to_numpy(),
                         "level": q["grade"].astype(np.float64).to_numpy()})


def pseudo_qrels(prefs: pd.DataFrame) -> pd.DataFrame:
    """A judgments table naming every document of the preferences (grade 0), so that the evaluator
    knows the judged topics and documents."""
    q = prefs[["topic", "doc"]].drop_duplicates().reset_index(drop=True)
    return q.assign(grade=np.zeros(len(q), dtype=np.int64))


@dataclass
class JudgmentGroup:
    """One group's preferences over its documents: `pref[i, j]` is True when doc i is preferred to j;
    `level`/`single` keep the levels when the group has one subgroup (trec_eval's equivalence classes)."""

    docs: np.ndarray
    pref: np.ndarray
    level: np.ndarray
    single: bool


def _closure(p: np.ndarray) -> np.ndarray:
    """Transitive closure of a boolean relation (repeated squaring)."""
    p = p.copy()
    n = len(p)
    while True:
        nxt = p | ((p.astype(np.uint8) @ p.astype(np.uint8)) > 0) if n else p
        if (nxt == p).all():
            return p
        p = nxt


def topic_groups(prefs: pd.DataFrame) -> dict[str, list[JudgmentGroup]]:
    """Per topic, its judgment groups in trec_eval's order (group names sorted as strings)."""
    out: dict[str, list[JudgmentGroup]] = {}
    for (topic, _jg), g in prefs.groupby(["topic", "jg"], sort=True):
        docs = np.array(sorted(set(g["doc"])), dtype=object)
        idx = {d: i for i, d in enumerate(docs)}
        n = len(docs)
        pref = np.zeros((n, n), dtype=bool)
        level = np.full(n, np.nan)
        subs = list(g.groupby("jsg", sort=True))
        for _, s in subs:
            ii = np.array([idx[d] for d in s["doc"]])
            lv = s["level"].to_numpy(np.float64)
            pref[np.ix_(ii, ii)] |= lv[:, None] > lv[None, :]
            level[ii] = lv
        single = len(subs) == 1
        if not single:
            pref = _closure(pref)
        out.setdefault(str(topic), []).append(JudgmentGroup(docs, pref, level, single))
    return out


COUNT_FIELDS = ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur")


def group_counts(jg: JudgmentGroup, rank_of: dict) -> dict[str, int]:
    """Pair counts of one judgment group against one ranked list (`rank_of`: doc -> 0-based rank)."""
    big = np.iinfo(np.int64).max
    rank = np.array([rank_of.get(d, big) for d in jg.docs], dtype=np.int64)
    ret = rank < big
    p = jg.pref
    both = ret[:, None] & ret[None, :]
    one = ret[:, None] ^ ret[None, :]
    above = rank[:, None] < rank[None, :]
    return {
        "ful_ret": int((p & both & above).sum()),
        "poss_ret": int((p & both).sum()),
        "ful_imp": int((p & one & ret[:, None]).sum()),
        "poss_imp": int((p & one).sum()),
        "notoccur": int((p & ~ret[:, None] & ~ret[None, :]).sum()),
    }
