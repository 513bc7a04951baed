"""The columnar ranked-list structure every measure is computed from.

All runs and topics are laid out in one flat array sorted by (run, topic, score desc, doc desc),
exactly trec_eval's order (ties on score broken by document id in decreasing strcmp order), with
CSR-style offsets per (run, topic) group. Measures are vectorized segment operations over it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

RELVALUE_NONPOOL = -1   # retrieved, not in the judgments
RELVALUE_UNJUDGED = -2  # in the pool (qrels grade < 0), not judged


@dataclass(frozen=True)
class EvalOptions:
    """trec_eval's evaluation flags."""

    rel_level: int = 1             # -l: minimum grade that counts as relevant
    max_depth: int | None = None   # -M: documents per topic used (after sorting)
    judged_only: bool = False      # -J: drop unjudged documents before evaluation
    complete: bool = False         # -c: average over every judged topic (missing topics score 0)
    num_docs_in_coll: int | None = None  # -N
    trec_eval_version: str = "10.0"      # "9" reproduces 9.x cut-off rounding (iprec_at_recall, 11pt_avg)


def _seg_starts(group_ids: np.ndarray) -> np.ndarray:
    if len(group_ids) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], group_ids[1:] != group_ids[:-1])))


@dataclass
class Ranked:
    """All (run, topic) ranked lists joined with their judgments, ready for vectorized measures."""

    options: EvalOptions
    run_names: list[str]
    topic_names: list[str]              # judged topics, in trec_eval's (strcmp) order
    g_run: np.ndarray                   # per group: run index
    g_topic: np.ndarray                 # per group: topic index
    offsets: np.ndarray                 # per group start into the row arrays; len n_groups + 1
    rel: np.ndarray                     # per row: grade, or RELVALUE_NONPOOL / RELVALUE_UNJUDGED
    doc: np.ndarray                     # per row: document id (object array)
    score: np.ndarray                   # per row: score
    t_levels: np.ndarray                # per topic x grade (0..max): number of judged docs
    t_grades_offsets: np.ndarray        # CSR per topic into t_grades
    t_grades: np.ndarray                # per topic: judged grades (>= 0) sorted descending
    g_missing: np.ndarray = field(default=None)  # per group: True when the run had no results (-c fill)

    # ------------------------------------------------------------------ sizes and indexing
    @property
    def n_groups(self) -> int:
        return len(self.g_run)

    @property
    def n_rows(self) -> int:
        return len(self.rel)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def row_group(self) -> np.ndarray:
        """Per row: its group index."""
        return np.repeat(np.arange(self.n_groups), self.num_ret)

    @cached_property
    def rank(self) -> np.ndarray:
        """Per row: 1-based rank within its group."""
        return np.arange(self.n_rows) - np.repeat(self.offsets[:-1], self.num_ret) + 1

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.rel >= self.options.rel_level

    @cached_property
    def is_judged(self) -> np.ndarray:
        return self.rel >= 0

    @cached_property
    def is_nonrel_judged(self) -> np.ndarray:
        return (self.rel >= 0) & (self.rel < self.options.rel_level)

    @cached_property
    def max_grade(self) -> int:
        return self.t_levels.shape[1] - 1

    # ------------------------------------------------------------------ per-topic judgment facts
    @cached_property
    def t_num_rel(self) -> np.ndarray:
        lv = max(self.options.rel_level, 0)
        return self.t_levels[:, lv:].sum(axis=1) if lv < self.t_levels.shape[1] else np.zeros(len(self.topic_names), np.int64)

    @cached_property
    def t_num_nonrel(self) -> np.ndarray:
        lv = max(self.options.rel_level, 0)
        return self.t_levels[:, :lv].sum(axis=1)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """Per group: relevant documents in the judgments of its topic."""
        return self.t_num_rel[self.g_topic]

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """Per group: judged non-relevant documents of its topic."""
        return self.t_num_nonrel[self.g_topic]

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return self.seg_sum(self.is_rel)

    # ------------------------------------------------------------------ segment primitives
    def seg_sum(self, values: np.ndarray) -> np.ndarray:
        """Per group sum of a per-row array (0 for empty groups), accumulated in rank order."""
        v = np.asarray(values)
        if v.dtype == bool:
            return np.bincount(self.row_group[v], minlength=self.n_groups).astype(np.int64)
        if self.n_rows == 0:
            return np.zeros(self.n_groups, dtype=np.float64 if v.dtype.kind == "f" else np.int64)
        if v.dtype.kind == "f":
            return np.bincount(self.row_group, weights=v, minlength=self.n_groups)
        return np.bincount(self.row_group, weights=v.astype(np.float64), minlength=self.n_groups).astype(np.int64)

    def seg_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Per row cumulative sum restarting at every group."""
        v = np.asarray(values)
        if v.dtype == bool:
            v = v.astype(np.int64)
        if self.n_rows == 0:
            return v.copy()
        c = np.cumsum(v)
        base = np.concatenate(([0], c))[self.offsets[:-1]]
        return c - np.repeat(base, self.num_ret)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Per row: relevant documents at or above this rank."""
        return self.seg_cumsum(self.is_rel)

    def at_rank(self, per_row: np.ndarray, k: np.ndarray | int, fill_before: float = 0.0,
                extend_last: bool = True) -> np.ndarray:
        """Per group value of a per-row cumulative array at rank k (clipped to the list length).

        For k beyond the list, the value at the last rank is used when `extend_last`; for k < 1 or an
        empty list, `fill_before`.
        """
        k = np.broadcast_to(np.asarray(k, dtype=np.int64), (self.n_groups,))
        eff = np.minimum(k, self.num_ret) if extend_last else k
        idx = self.offsets[:-1] + eff - 1
        ok = (eff >= 1) & (eff <= self.num_ret)
        out = np.full(self.n_groups, fill_before, dtype=np.float64)
        if self.n_rows:
            out[ok] = per_row[idx[ok]]
        return out

    def topic_ideal_gains(self, gains_per_grade: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per topic ideal ranking as (offsets, gains): judged grades sorted descending mapped to gains."""
        g = gains_per_grade[self.t_grades] if len(self.t_grades) else np.zeros(0)
        return self.t_grades_offsets, g


def build_ranked(qrels: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None,
                 run_order: list[str] | None = None) -> tuple[Ranked, dict]:
    """Join runs with qrels into a `Ranked` structure.

    Returns the structure and a notes dict (topics ignored because they have no judgments, etc.)
    so the caller can report what was left out.
    """
    opt = options or EvalOptions()
    notes: dict = {}
    q_topic = qrels["topic"].astype(str).to_numpy(object)
    q_doc = qrels["doc"].astype(str).to_numpy(object)
    q_grade = qrels["grade"].to_numpy(np.int64)
    topic_names = sorted(set(q_topic.tolist()), key=lambda s: s.encode("utf-8"))
    topic_index = {t: i for i, t in enumerate(topic_names)}
    n_topics = len(topic_names)

    r_run = runs["run"].astype(str).to_numpy(object)
    r_topic = runs["topic"].astype(str).to_numpy(object)
    r_doc = runs["doc"].astype(str).to_numpy(object)
    r_score = runs["score"].to_numpy(np.float64)

    if run_order is None:
        run_names = list(dict.fromkeys(r_run.tolist()))
    else:
        run_names = list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}

    # topics of runs that have no judgments are not evaluated (as trec_eval)
    rt_codes = pd.Series(r_topic).map(topic_index)
    known = rt_codes.notna().to_numpy()
    if not known.all():
        notes["topics_without_judgments"] = sorted(set(r_topic[~known].tolist()))
        r_run, r_topic, r_doc, r_score = r_run[known], r_topic[known], r_doc[known], r_score[known]
        rt_codes = rt_codes[known]
    t_code = rt_codes.to_numpy(np.int64) if len(rt_codes) else np.zeros(0, np.int64)
    run_code = pd.Series(r_run).map(run_index).to_numpy(np.int64) if len(r_run) else np.zeros(0, np.int64)

    # one document vocabulary in strcmp order, shared by runs and qrels
    all_docs = np.concatenate((r_doc, q_doc))
    codes, uniques = pd.factorize(all_docs, sort=False)
    # strcmp order == UTF-8 byte order == Python code point order
    order_u = np.argsort(np.asarray(uniques, dtype=object).astype(str), kind="stable") if len(uniques) else np.zeros(0, np.int64)
    rank_of_u = np.empty(len(uniques), np.int64)
    rank_of_u[order_u] = np.arange(len(uniques))
    dcodes = rank_of_u[codes] if len(codes) else codes.astype(np.int64)
    r_dcode, q_dcode = dcodes[: len(r_doc)], dcodes[len(r_doc):]
    n_docs = max(len(uniques), 1)

    # trec_eval order: score desc, then docno desc
    order = np.lexsort((-r_dcode, -r_score, t_code, run_code))
    run_code, t_code, r_dcode, r_score = run_code[order], t_code[order], r_dcode[order], r_score[order]
    r_doc = r_doc[order]

    gid = run_code * n_topics + t_code
    starts = _seg_starts(gid)
    # -M: keep the first max_depth documents of each group
    if opt.max_depth is not None and len(gid):
        lens = np.diff(np.concatenate((starts, [len(gid)])))
        pos = np.arange(len(gid)) - np.repeat(starts, lens)
        keep = pos < opt.max_depth
        run_code, t_code, r_dcode, r_score, r_doc, gid = (a[keep] for a in (run_code, t_code, r_dcode, r_score, r_doc, gid))
        starts = _seg_starts(gid)

    # relevance per row: look up (topic, doc) in the judgments
    q_tcode = pd.Series(q_topic).map(topic_index).to_numpy(np.int64)
    q_key = q_tcode * n_docs + q_dcode
    q_sort = np.argsort(q_key, kind="stable")
    q_key_s, q_grade_s = q_key[q_sort], q_grade[q_sort]
    r_key = t_code * n_docs + r_dcode
    pos = np.searchsorted(q_key_s, r_key)
    pos_c = np.minimum(pos, max(len(q_key_s) - 1, 0))
    found = (len(q_key_s) > 0) & (q_key_s[pos_c] == r_key) if len(r_key) else np.zeros(0, bool)
    rel = np.full(len(r_key), RELVALUE_NONPOOL, dtype=np.int64)
    if len(r_key):
        g = q_grade_s[pos_c]
        rel[found] = np.where(g[found] < 0, RELVALUE_UNJUDGED, g[found])

    g_gid = gid[starts] if len(gid) else np.zeros(0, np.int64)
    # -J: drop unjudged documents; groups keep existing even if emptied
    offsets = np.concatenate((starts, [len(gid)])).astype(np.int64)
    if opt.judged_only and len(rel):
        keep = rel >= 0
        row_g = np.repeat(np.arange(len(starts)), np.diff(offsets))
        rel, r_doc, r_score = rel[keep], r_doc[keep], r_score[keep]
        counts = np.bincount(row_g[keep], minlength=len(starts))
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    g_run = g_gid // max(n_topics, 1)
    g_topic = g_gid % max(n_topics, 1)
    g_missing = np.zeros(len(g_gid), bool)

    # -c: every (run, judged topic) pair is evaluated; missing ones get an empty list
    if opt.complete and n_topics and run_names:
        all_gid = np.arange(len(run_names) * n_topics, dtype=np.int64)
        missing = np.setdiff1d(all_gid, g_gid, assume_unique=True)
        if len(missing):
            counts = np.diff(offsets)
            new_gid = np.concatenate((g_gid, missing))
            new_counts = np.concatenate((counts, np.zeros(len(missing), np.int64)))
            srt = np.argsort(new_gid, kind="stable")
            # rows are already ordered by gid; empty groups slot in without moving rows
            new_gid, new_counts = new_gid[srt], new_counts[srt]
            offsets = np.concatenate(([0], np.cumsum(new_counts))).astype(np.int64)
            g_missing = np.concatenate((g_missing, np.ones(len(missing), bool)))[srt]
            g_gid = new_gid
            g_run = g_gid // n_topics
            g_topic = g_gid % n_topics
            notes["topics_filled_by_c"] = int(len(missing))

    # per-topic judgment levels and sorted grades (for ideal rankings)
    judged = q_grade >= 0
    max_grade = int(q_grade[judged].max()) if judged.any() else 0
    t_levels = np.zeros((n_topics, max_grade + 1), dtype=np.int64)
    np.add.at(t_levels, (q_tcode[judged], q_grade[judged]), 1)
    jt, jg = q_tcode[judged], q_grade[judged]
    srt = np.lexsort((-jg, jt))
    t_grades = jg[srt]
    t_counts = np.bincount(jt, minlength=n_topics)
    t_grades_offsets = np.concatenate(([0], np.cumsum(t_counts))).astype(np.int64)

    ranked = Ranked(options=opt, run_names=run_names, topic_names=topic_names,
                    g_run=g_run.astype(np.int64), g_topic=g_topic.astype(np.int64), offsets=offsets,
                    rel=rel, doc=r_doc, score=r_score, t_levels=t_levels,
                    t_grades_offsets=t_grades_offsets, t_grades=t_grades, g_missing=g_missing)
    return ranked, notes
