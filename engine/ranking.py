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
import pyarrow as pa
import pyarrow.compute as pc

from .errors import CranfieldError

RELVALUE_NONPOOL = -1   # retrieved, not in the judgments
RELVALUE_UNJUDGED = -2  # in the pool (qrels grade < 0), not judged
BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval's stand-in document for -c topics without results


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

    def seg_cumsum_at(self, mask: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Count of `mask` rows at or above each row in `idx`, within its group."""
        c = np.cumsum(mask, dtype=np.int64)
        base = np.concatenate(([0], c))[self.offsets[:-1]]
        return c[idx] - base[self.row_group[idx]]

    @cached_property
    def rel_idx(self) -> np.ndarray:
        """Row indices of the relevant retrieved documents (rank order within each group)."""
        return np.flatnonzero(self.is_rel)

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

    def seg_max(self, values: np.ndarray, where: np.ndarray | None = None, fill: float = 0.0) -> np.ndarray:
        """Per group maximum of a per-row array over the rows selected by `where` (`fill` if none)."""
        v = np.asarray(values, dtype=np.float64)
        if where is not None:
            v = np.where(where, v, -np.inf)
        out = np.full(self.n_groups, -np.inf)
        nonempty = self.num_ret > 0
        if self.n_rows and nonempty.any():
            out[nonempty] = np.maximum.reduceat(v, self.offsets[:-1][nonempty])
        out[out == -np.inf] = fill
        return out

    @cached_property
    def num_nonpool(self) -> np.ndarray:
        """Per group: retrieved documents absent from the judgments."""
        return self.seg_sum(self.rel == RELVALUE_NONPOOL)

    @cached_property
    def num_unjudged_in_pool(self) -> np.ndarray:
        """Per group: retrieved documents in the pool but not judged (qrels grade < 0)."""
        return self.seg_sum(self.rel == RELVALUE_UNJUDGED)

    @cached_property
    def rel_prec_suffix_max(self) -> tuple[np.ndarray, np.ndarray]:
        """Interpolated precision at each relevant retrieved document, as (starts, values).

        values[starts[g] + L - 1] is the highest precision at or below the rank of group g's L-th
        relevant document (trec_eval's interpolation), for 1 <= L <= num_rel_ret[g].
        """
        idx = np.flatnonzero(self.is_rel)
        prec = self.cum_rel[idx] / self.rank[idx]
        grp = self.row_group[idx]
        n_rel = np.bincount(grp, minlength=self.n_groups)
        starts = np.concatenate(([0], np.cumsum(n_rel)))[:-1].astype(np.int64)
        if len(idx) == 0:
            return starts, np.zeros(0)
        rev = pd.Series(prec[::-1]).groupby(grp[::-1], sort=False).cummax().to_numpy()
        return starts, rev[::-1].copy()

    def interpolated_precision(self, levels: np.ndarray) -> np.ndarray:
        """Per group interpolated precision at the given number of relevant documents (0 if beyond)."""
        starts, suf = self.rel_prec_suffix_max
        n_rel = np.diff(np.append(starts, len(suf)))
        ok = (levels >= 1) & (levels <= n_rel)
        out = np.zeros(self.n_groups)
        out[ok] = suf[starts[ok] + levels[ok] - 1]
        return out

    def recall_cutoffs(self, fractions: tuple | list | np.ndarray) -> np.ndarray:
        """(n_groups, n) numbers of relevant documents at recall `fractions`, rounded as trec_eval.

        trec_eval 10.0 rounds to nearest (lround); 9.x truncated fraction * num_rel + 0.9.
        """
        x = np.asarray(fractions, dtype=np.float64)[None, :] * self.num_rel.astype(np.float64)[:, None]
        if self.options.trec_eval_version.startswith("9"):
            return np.trunc(x + 0.9).astype(np.int64)
        t = np.trunc(x)
        return (t + np.sign(x) * (np.abs(x - t) >= 0.5)).astype(np.int64)

    def interpolated_at_recall_cutoffs(self, cutoffs: np.ndarray) -> np.ndarray:
        """(n_groups, n) interpolated precision at relevant-document cutoffs, walking them as trec_eval.

        trec_eval serves cut-offs from the last one backwards while descending the ranking; a cut-off
        above the relevant retrieved count gets 0 if it leads, and any cut-off it cannot serve in
        order (or <= 0) gets the interpolated precision at the first relevant document.
        """
        n_g, n = cutoffs.shape
        nrr = self.num_rel_ret
        at_end = self.interpolated_precision(np.ones(n_g, np.int64))
        out = np.zeros((n_g, n))
        skipping = np.ones(n_g, bool)
        ended = np.zeros(n_g, bool)
        level = nrr.astype(np.int64).copy()
        for j in range(n - 1, -1, -1):
            c = cutoffs[:, j]
            skipping &= c > nrr
            served = ~skipping & ~ended & (c >= 1) & (c <= level)
            ended |= ~skipping & ~served
            level = np.where(served, c, level)
            out[:, j] = np.where(skipping, 0.0, np.where(served, self.interpolated_precision(c), at_end))
        return out

    def topic_ideal_gains(self, gains_per_grade: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per topic ideal ranking as (offsets, gains): judged grades sorted descending mapped to gains."""
        g = gains_per_grade[self.t_grades] if len(self.t_grades) else np.zeros(0)
        return self.t_grades_offsets, g


def _factorize_str(col) -> tuple[np.ndarray, list[str]]:
    """Per-row codes and the distinct values as strings, in order of first appearance."""
    codes, uniq = pd.factorize(col)
    names = [str(u) for u in uniq]
    if len(set(names)) != len(names):     # e.g. 1 and "1" in one column: same identifier
        canon: dict[str, int] = {}
        remap = np.array([canon.setdefault(n, len(canon)) for n in names], dtype=np.int64)
        return remap[codes], list(canon)
    return codes.astype(np.int64), names


def _trec_order(gid: np.ndarray, score: np.ndarray, dcode: np.ndarray, n_docs: int) -> np.ndarray:
    """Row order by group, then score descending, then document id descending (one integer sort)."""
    if len(gid) == 0:
        return np.zeros(0, np.int64)
    _, srank = np.unique(score, return_inverse=True)
    n_s = int(srank.max()) + 1
    span = n_s * n_docs
    if (int(gid.max()) + 1) * span < 2 ** 62:
        key = gid * span + (n_s - 1 - srank.astype(np.int64)) * n_docs + (n_docs - 1 - dcode)
        return np.argsort(key)          # keys are distinct unless a document repeats in a group
    return np.lexsort((-dcode, -score, gid))


def _doc_vocabulary(run_docs, qrel_docs) -> tuple[np.ndarray, np.ndarray]:
    """Sorted document ids (strcmp order) and the per-row codes of run rows then qrels rows."""
    def arr(col):
        a = pa.array(col.astype(str) if getattr(col, "dtype", None) != "str" else col, from_pandas=True)
        chunks = a.chunks if isinstance(a, pa.ChunkedArray) else [a]
        return [c.cast(pa.large_string()) for c in chunks]
    both = pa.concat_arrays([*arr(run_docs), *arr(qrel_docs)] or [pa.array([], pa.large_string())])
    enc = both.dictionary_encode()
    order = pc.array_sort_indices(enc.dictionary).to_numpy()   # byte order == strcmp order
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[enc.indices.to_numpy(zero_copy_only=False)] if len(both) else np.zeros(0, np.int64)
    vocab = enc.dictionary.take(pa.array(order)).to_numpy(zero_copy_only=False).astype(object)
    return vocab, codes


def build_ranked(qrels: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None,
                 run_order: list[str] | None = None) -> tuple[Ranked, dict]:
    """Join runs with qrels into a `Ranked` structure.

    Returns the structure and a notes dict (topics ignored because they have no judgments, etc.)
    so the caller can report what was left out.
    """
    opt = options or EvalOptions()
    if opt.rel_level < 0:
        raise CranfieldError(f"-l {opt.rel_level}: the relevance level must be >= 0 (grades below 0 mark "
                             "pooled-but-unjudged documents); use -l 0 to count every judged document")
    if opt.max_depth is not None and opt.max_depth < 0:
        raise CranfieldError(f"-M {opt.max_depth}: the evaluation depth must be >= 0")
    notes: dict = {}
    q_tc, q_tnames = _factorize_str(qrels["topic"])
    q_grade = qrels["grade"].to_numpy(np.int64)
    topic_names = sorted(q_tnames, key=lambda s: s.encode("utf-8"))   # strcmp order
    topic_index = {t: i for i, t in enumerate(topic_names)}
    n_topics = len(topic_names)
    q_tcode = np.array([topic_index[t] for t in q_tnames], dtype=np.int64)[q_tc] if len(q_tc) else q_tc

    rc, r_rnames = _factorize_str(runs["run"])
    rt, r_tnames = _factorize_str(runs["topic"])
    r_score = runs["score"].to_numpy(np.float64)
    run_names = list(r_rnames) if run_order is None else list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}
    run_code = np.array([run_index.get(r, -1) for r in r_rnames], dtype=np.int64)[rc] if len(rc) else rc
    t_code = np.array([topic_index.get(t, -1) for t in r_tnames], dtype=np.int64)[rt] if len(rt) else rt
    if (run_code < 0).any():
        raise CranfieldError(f"run {r_rnames[int(rc[np.argmax(run_code < 0)])]!r} is not in run_order")

    # one document vocabulary in strcmp (byte) order, shared by runs and qrels
    vocab, dcodes = _doc_vocabulary(runs["doc"], qrels["doc"])
    r_dcode, q_dcode = dcodes[: len(runs)], dcodes[len(runs):]
    n_docs = max(len(vocab), 1)

    # topics of runs that have no judgments are not evaluated (as trec_eval)
    known = t_code >= 0
    if not known.all():
        notes["topics_without_judgments"] = sorted({r_tnames[i] for i in np.unique(rt[~known])})
        run_code, t_code, r_dcode, r_score = run_code[known], t_code[known], r_dcode[known], r_score[known]

    # -c: a (run, judged topic) pair without results is evaluated on trec_eval's stand-in ranking,
    # one document BOGUS_DOCNO with score 1.0 (measures that count it are reset by `complete_fill`)
    missing = np.zeros(0, np.int64)
    if opt.complete and n_topics and run_names:
        present = np.unique(run_code * n_topics + t_code)
        missing = np.setdiff1d(np.arange(len(run_names) * n_topics, dtype=np.int64), present,
                               assume_unique=True)
        if len(missing):
            pos_b = int(np.searchsorted(vocab, BOGUS_DOCNO))
            if pos_b < len(vocab) and vocab[pos_b] == BOGUS_DOCNO:
                bogus_code = pos_b
            else:   # add it to the vocabulary, keeping codes in strcmp order
                vocab = np.insert(vocab, pos_b, BOGUS_DOCNO)
                r_dcode = r_dcode + (r_dcode >= pos_b)
                q_dcode = q_dcode + (q_dcode >= pos_b)
                bogus_code = pos_b
                n_docs = len(vocab)
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            r_dcode = np.concatenate((r_dcode, np.full(len(missing), bogus_code, dtype=np.int64)))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            notes["topics_filled_by_c"] = int(len(missing))

    # trec_eval order: score desc, then docno desc
    order = _trec_order(run_code * max(n_topics, 1) + t_code, r_score, r_dcode, n_docs)
    run_code, t_code, r_dcode, r_score = run_code[order], t_code[order], r_dcode[order], r_score[order]
    r_doc = vocab[r_dcode]

    gid = run_code * n_topics + t_code
    starts = _seg_starts(gid)
    g_gid = gid[starts] if len(gid) else np.zeros(0, np.int64)
    lens = np.diff(np.concatenate((starts, [len(gid)]))).astype(np.int64)

    # relevance per row: look up (topic, doc) in the judgments (a dense table when it is small)
    q_key = q_tcode * n_docs + q_dcode
    r_key = t_code * n_docs + r_dcode
    q_rel = np.where(q_grade < 0, RELVALUE_UNJUDGED, q_grade)
    if n_topics * n_docs <= 4 * len(r_key) + 1_000_000:
        table = np.full(n_topics * n_docs, RELVALUE_NONPOOL, dtype=np.int64)
        table[q_key[::-1]] = q_rel[::-1]            # the first judgment of a repeated pair wins
        rel = table[r_key]
    else:
        q_sort = np.argsort(q_key, kind="stable")
        q_key_s, q_rel_s = q_key[q_sort], q_rel[q_sort]
        pos = np.minimum(np.searchsorted(q_key_s, r_key), max(len(q_key_s) - 1, 0))
        rel = np.full(len(r_key), RELVALUE_NONPOOL, dtype=np.int64)
        if len(q_key_s) and len(r_key):
            found = q_key_s[pos] == r_key
            rel[found] = q_rel_s[pos[found]]

    # -M keeps the first max_depth documents, then -J drops unjudged ones (trec_eval's order);
    # groups keep existing even when emptied
    if (opt.max_depth is not None or opt.judged_only) and len(gid):
        keep = np.ones(len(gid), bool)
        if opt.max_depth is not None:
            pos_in = np.arange(len(gid)) - np.repeat(starts, lens)
            keep &= pos_in < opt.max_depth
        if opt.judged_only:
            keep &= rel >= 0
        row_g = np.repeat(np.arange(len(starts)), lens)
        rel, r_doc, r_score = rel[keep], r_doc[keep], r_score[keep]
        lens = np.bincount(row_g[keep], minlength=len(starts)).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)

    g_run = g_gid // max(n_topics, 1)
    g_topic = g_gid % max(n_topics, 1)
    g_missing = np.isin(g_gid, missing) if len(missing) else np.zeros(len(g_gid), bool)

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
