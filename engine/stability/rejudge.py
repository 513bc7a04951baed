"""Re-evaluate the same runs under many subsets of one judgment set, fast.

The runs are sorted and joined with the judgments once (`engine.ranking.build_ranked`); a subset of
the judgments is a boolean mask over the qrels rows, and each evaluation only rewrites the per-row
relevance and the per-topic judgment counts before running the registered measures. Topics are those
of the full judgments: a topic left without judgments keeps scoring (0 for most measures), and a
(run, topic) the run did not retrieve scores 0 (trec_eval -c).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..measures import load_all, resolve
from ..ranking.ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED, EvalOptions
from ..ranking.build import build_ranked, topic_judgments
from ..ranking.join import ranked_judgment_rows


class Rejudger:
    """Evaluates `measures` for all runs against masks of `qrels`."""

    def __init__(self, qrels: pd.DataFrame, runs: pd.DataFrame, measures, options: EvalOptions | None = None):
        load_all()
        self.qrels = qrels.reset_index(drop=True)
        self.requests = resolve(measures)
        self.names = [n for req in self.requests for n in req.names
                      if req.measure.value_kind != "str"]
        base, notes = build_ranked(self.qrels, runs, options)
        if base.n_groups == 0:
            raise CranfieldError("no (run, topic) pairs with both results and judgments to evaluate")
        self.base = base
        self.notes = notes
        self.runs = list(base.run_names)
        self.topics = list(base.topic_names)
        tindex = {t: i for i, t in enumerate(self.topics)}
        q_t = self.qrels["topic"].astype(str).map(tindex).to_numpy(np.int64)
        q_doc = self.qrels["doc"].astype(str).to_numpy(object)
        self.row_q = ranked_judgment_rows(base, q_t, q_doc)          # per ranked row: qrels row or -1
        self.q_topic = q_t
        self.q_grade = self.qrels["grade"].to_numpy(np.int64)
        self.n_topics = len(self.topics)

    def ranked(self, keep: np.ndarray | None = None, removed_as: str = "absent"):
        """The `Ranked` structure for the judgments selected by `keep` (bool per qrels row).

        Removed judgments become documents outside the pool (`removed_as="absent"`) or pooled but
        unjudged documents (`"unjudged"`, as a random sample of a pool: what infAP expects)."""
        b = self.base
        if keep is None:
            keep = np.ones(len(self.qrels), bool)
        keep = np.asarray(keep, bool)
        qg = self.q_grade
        has = self.row_q >= 0
        kept_row = np.zeros(len(self.row_q), bool)
        kept_row[has] = keep[self.row_q[has]]
        if removed_as not in ("absent", "unjudged"):
            raise CranfieldError(f"removed_as must be 'absent' or 'unjudged', got {removed_as!r}")
        dropped = RELVALUE_UNJUDGED if removed_as == "unjudged" else RELVALUE_NONPOOL
        g = np.where(kept_row, qg[np.maximum(self.row_q, 0)], np.where(has, dropped, RELVALUE_NONPOOL))
        rel = np.where(kept_row & (g < 0), RELVALUE_UNJUDGED, g).astype(np.int64)
        max_grade = int(qg[qg >= 0].max()) if (qg >= 0).any() else 0
        t_levels, offs, t_grades, lg = topic_judgments(self.n_topics, self.q_topic[keep], qg[keep], max_grade)
        r = dataclasses.replace(b, rel=rel, t_levels=t_levels, t_grades=t_grades, t_grades_offsets=offs,
                                t_level_grades=lg)
        if removed_as == "unjudged" and not keep.all():
            q = self.qrels.copy()
            q.loc[~keep, "grade"] = -1
            r.qrels = q
        else:
            r.qrels = self.qrels[keep]
        return r

    def evaluate(self, keep: np.ndarray | None = None, removed_as: str = "absent") -> dict[str, np.ndarray]:
        """Measure name -> topics x runs matrix for the judgments selected by `keep`."""
        r = self.ranked(keep, removed_as)
        out: dict[str, np.ndarray] = {}
        nr = len(self.runs)
        for req in self.requests:
            if req.measure.value_kind == "str":
                continue
            res = np.asarray(req.measure.compute(r, req.params), dtype=np.float64)
            if res.ndim == 1:
                res = res[:, None]
            for j, name in enumerate(req.names):
                m = np.zeros((self.n_topics, nr))
                m[r.g_topic, r.g_run] = res[:, j]
                out[name] = m
        return out

    def frame(self, matrix: np.ndarray) -> pd.DataFrame:
        """A topics x runs matrix as a labelled DataFrame."""
        return pd.DataFrame(matrix, index=pd.Index(self.topics, name="topic"), columns=self.runs)
