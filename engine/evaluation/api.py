"""The Python library surface: `Evaluator` (judgments prepared once, fast small calls), `evaluate` (any of
the ecosystem's input shapes), `measures()` (the table `cranfield measures` prints).

Measure names may be Cranfield's / trec_eval's (`map`, `P.10`, `P_5,10`), their output names (`P_10`), or
ir_measures' (`AP`, `nDCG@10`, `P(rel=2)@10`, `P(judged_only=True)@10`): see `engine.measures.names`, the one
request parser. Options that change the ranked list (judged_only, depth, relevance level, trec_eval version,
gains) belong to each name: measures asked together never share them.

>>> from engine.evaluation.api import Evaluator
>>> ev = Evaluator({"q1": {"d1": 1, "d2": 0, "d3": 1}}, ["AP", "P@2", "ndcg_cut.10"])
>>> r = ev.evaluate({"q1": {"d1": 3.0, "d2": 2.0, "d4": 1.0}})
>>> round(r["q1"]["AP"], 4), r["q1"]["P@2"]
(0.5, 0.5)
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .adapters import Issues, as_qrels, as_runs, surface
from ..measures.names import to_requests


@dataclass
class _Group:
    """Measures evaluated on one input: the options (and gains) that identify their ranked lists."""

    options: object
    gains: object          # None, a tuple of (grade, gain), ("exp",) or ("binary", k): grades relabelled
    requests: list
    names: dict            # cranfield output name -> the user's names for it


@dataclass
class _Rows:
    """One run joined with the judgments, in trec_eval's order, before -M / -J: per row topic index,
    score, grade (negative: unjudged) and document; topics with an empty ranking; -c's stand-in topics."""

    tc: np.ndarray
    score: np.ndarray
    rel: np.ndarray
    docs: object
    empty: np.ndarray
    missing: np.ndarray


class Evaluator:
    """Judgments prepared once; `evaluate(run)` gives per-topic values of `measures` for one run.

    Runs may be a pytrec_eval-style dict {topic: {doc: score}} (the fast path: no pandas), or anything
    `engine.evaluation.adapters.as_runs` accepts (then every run in it is evaluated). Results are a dict
    {topic: {measure: value}} (one run) or, with `frame=True`, a long DataFrame run, topic, measure, value.
    ir_measures measure objects key the dicts (objects in, objects out); frames label them by their names.
    Options follow trec_eval: `rel_level` (-l), `max_depth` (-M), `judged_only` (-J), `complete` (-c),
    `trec_eval_version` ("9": 9.x's recall cut-off rounding, as pytrec_eval). A topic given with an empty
    ranking is evaluated as an empty list (as pytrec_eval does). Input warnings go to `issues` when given,
    else to Python's `warnings`. `trec_labels`: label Cranfield / trec_eval names by their output names
    (`P.10` -> `P_10`), as `evaluate` does.

    >>> ev = Evaluator({"1": {"a": 2, "b": 0}}, ["P@1", "RR"])
    >>> ev.evaluate({"1": {"a": 0.5, "b": 0.9}})
    {'1': {'P@1': 0.0, 'RR': 0.5}}
    """

    def __init__(self, qrels, measures, *, rel_level: int = 1, max_depth: int | None = None,
                 judged_only: bool = False, complete: bool = False, gains: dict | None = None,
                 trec_eval_version: str = "10.0", issues: Issues | None = None, trec_labels: bool = False,
                 relevance_level: int | None = None, judged_docs_only_flag: bool | None = None):
        from ..measures.registry import reads_judgment_table
        from ..ranking.ranked import EvalOptions
        from ..ranking.build import _check_options, _judged_topics
        from .dialects import request

        if relevance_level is not None:            # pytrec_eval's spelling of rel_level / judged_only
            rel_level = relevance_level
        if judged_docs_only_flag is not None:
            judged_only = bool(judged_docs_only_flag)
        self.issues = issues if issues is not None else Issues()
        self._warn = issues is None
        from .dialects import for_version
        self._request = req = request(measures)
        measures = for_version(req.names, _version(trec_eval_version))
        base = EvalOptions(rel_level=rel_level, max_depth=max_depth, judged_only=judged_only, complete=complete,
                           trec_eval_version=_version(trec_eval_version))
        _check_options(base)
        self.options = base
        self.groups: list[_Group] = []
        for (opt, gkey), reqs, names in to_requests(measures, base, trec_labels=trec_labels):
            self.groups.append(_Group(opt, gkey, reqs, names))
        labels = list(dict.fromkeys(u for g in self.groups for us in g.names.values() for u in us))
        self.measure_names = labels if req.plain else list(dict.fromkeys(
            [k for u in labels for k in req.key_of(u)] + [d[0] for d in req.derived]))
        self._rekey = not req.plain and bool(req.derived)
        if not req.plain and not req.derived:      # the caller's keys in the groups: no cost per call
            from .dialects import hash_once, is_measure_object
            # measure objects key the results hashed once each (ir_measures builds a repr per hash)
            keyed = {id(k): hash_once(k) for u in labels for k in req.key_of(u) if is_measure_object(k)}
            self.measure_names = [keyed.get(id(k), k) for k in self.measure_names]
            for g in self.groups:
                g.names = {n: list(dict.fromkeys(keyed.get(id(k), k) for u in us for k in req.key_of(u)))
                           for n, us in g.names.items()}
        self.extra = {"gains": dict(gains)} if gains else None
        # measures reading the judgment table itself (estimators) get it as a DataFrame (pandas)
        self.needs_table = any(reads_judgment_table(req.measure) for g in self.groups if not _is_diversity(g)
                               for req in g.requests)
        self._subtopics = None
        try:
            if any(_is_diversity(g) for g in self.groups):
                # diversity measures: subtopic judgments; a document's grade elsewhere is its best one
                from .adapters import as_subtopic_qrels
                self._subtopics = as_subtopic_qrels(qrels, issues=self.issues)
                qrels = (self._subtopics.groupby(["topic", "doc"], sort=False, as_index=False)["grade"].max())
            if isinstance(qrels, Mapping) and all(isinstance(v, Mapping) for v in qrels.values()):
                # a pytrec_eval-style dict: prepared without pandas (the small-call path)
                self._qrels_df = None
                self.topic_names, self._q_tcode, self._q_grade, self._q_doc = _dict_judgments(qrels)
            else:
                self._qrels_df = as_qrels(qrels, issues=self.issues)
                self.topic_names, self._q_tcode, self._q_grade = _judged_topics(self._qrels_df)
                self._q_doc = self._qrels_df["doc"].astype(str).tolist()
        finally:
            self._surface()
        self._tindex = {t: i for i, t in enumerate(self.topic_names)}
        grades: list[dict] = [{} for _ in self.topic_names]
        for t, d, g in zip(self._q_tcode.tolist(), self._q_doc, self._q_grade.tolist()):
            grades[t][d] = g if g >= 0 else -2          # RELVALUE_UNJUDGED
        self._grades = grades
        from ..ranking.build import topic_judgments
        self._topic_arrays = topic_judgments(len(self.topic_names), self._q_tcode, self._q_grade)
        self._judgment_caches: dict = {}    # per (options, gains): Ranked.caches["judgments"], kept across runs
        self._relabelled: dict = {}         # per gains: (grade lookup, judgments' grades, topic arrays)
        self._frame_keys = None             # judged (topic, doc) keys for frame inputs (built on first use)
        self._small = None                  # the small-call path's plan (engine.ranking.small), when it serves
        if not self._rekey and not self.needs_table and self.extra is None:
            from ..ranking.small import plan
            self._small = plan(grades, self.groups)

    def _surface(self) -> None:
        if self._warn:
            surface(self.issues, stacklevel=4)

    @property
    def qrels(self):
        """The judgments as a DataFrame (topic, doc, grade)."""
        if self._qrels_df is None:
            import pandas as pd
            self._qrels_df = pd.DataFrame({"topic": pd.Series([self.topic_names[t] for t in self._q_tcode.tolist()],
                                                              dtype=object),
                                           "doc": pd.Series(self._q_doc, dtype=object), "grade": self._q_grade})
        return self._qrels_df

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, run, *, frame: bool = False):
        """Per-topic values for `run` (see the class docstring)."""
        try:
            if isinstance(run, dict) and not frame and all(isinstance(v, dict) for v in run.values()):
                if self._small is not None:      # a small run: plain Python, the kernel's values bit for bit
                    from ..ranking.small import evaluate_small
                    got = evaluate_small(self._small, self._tindex, self.topic_names, run)
                    if got is not None:
                        return got
                return self._collect(self.rows_dict(run))
            return self._evaluate_frame(run, frame)
        finally:
            self._surface()

    def _collect(self, rows: _Rows) -> dict:
        triples = list(self.values(rows))
        out: dict = {}
        if triples and all(tp == triples[0][1] for _, tp, _ in triples):
            # every measure on the same topics (one group, the usual case): each topic's dict made at once
            users = [u for u, _, _ in triples]
            for t, vals in zip(triples[0][1], zip(*[col.tolist() for _, _, col in triples])):
                out[t] = dict(zip(users, vals))
        else:
            for user, topics, col in triples:
                for t, v in zip(topics, col.tolist()):
                    out.setdefault(t, {})[user] = v
        names = self.topic_names
        return {names[t]: out[names[t]] for t in sorted(self._tindex[k] for k in out)}

    def rows_dict(self, run: dict) -> _Rows:
        """The rows of one run given as {topic: {doc: score}} (trec_eval's order: topics in byte order,
        score descending, ties by document id descending; with `complete`, a judged topic the run misses
        gets trec_eval's one stand-in document)."""
        from itertools import repeat

        from ..ranking.ranked import BOGUS_DOCNO, LazyDocs
        from ..ranking.order import list_tie_order, order_rows, trec_order

        tindex, grades, names = self._tindex, self._grades, self.topic_names
        present: dict = {}
        empty: list[int] = []
        unknown = False
        for qid, ranking in run.items():
            ti = tindex.get(qid if type(qid) is str else str(qid))
            if ti is None:
                unknown = True
            elif ranking:
                present[ti] = ranking
            else:
                empty.append(ti)
        if unknown:
            from .adapters import check_ids
            import pandas as pd
            check_ids(self.qrels, pd.DataFrame({"topic": [str(k) for k in run]}), self.issues)
        missing: list[int] = []
        if self.options.complete and len(present) + len(empty) < len(names):
            missing = sorted(set(range(len(names))) - set(present) - set(empty))
            for ti in missing:
                present[ti] = {BOGUS_DOCNO: 1.0}
        topics = sorted(present)
        lens, sc, ds, rl = [], [], [], []
        for ti in topics:
            ranking = present[ti]
            lens.append(len(ranking))
            sc += ranking.values()
            start = len(ds)
            ds += map(str, ranking)
            rl += map(grades[ti].get, ds[start:], repeat(-1))
        try:
            score_arr = np.asarray(sc, np.float64)
        except (TypeError, ValueError):
            raise self.issues.error("run: scores must be numbers") from None
        n = len(ds)
        tc = np.repeat(np.asarray(topics, np.int64), lens)
        if n and not np.isfinite(score_arr).all():
            bad = int(np.flatnonzero(~np.isfinite(score_arr))[0])
            raise self.issues.error(f"run: topic {names[tc[bad]]}, document {ds[bad]}: score {sc[bad]} "
                                    f"is not a finite number (a run file would be refused the same way)")
        order = order_rows(trec_order(np.zeros(n, np.int64), tc, score_arr, len(names), list_tie_order(ds)), n)
        return _Rows(tc[order], score_arr[order], np.asarray(rl, np.int64)[order] if n else np.zeros(0, np.int64),
                     LazyDocs(np.asarray(ds, dtype=object), order), np.asarray(sorted(empty), np.int64),
                     np.asarray(missing, np.int64))

    def rows_frame(self, tc: np.ndarray, dcode: np.ndarray, vocab: np.ndarray, judged: np.ndarray,
                   score: np.ndarray, empty=(), bogus: int | None = None) -> _Rows:
        """The rows of one run given as coded columns (`engine.evaluation.adapters.RunColumns`: judged-topic
        index per row, -1 for topics without judgments; document codes into `vocab`, `judged` = each vocab
        entry's code among the judged documents (`judged_codes`); `bogus`: the code of trec_eval's -c stand-in
        document, needed with `complete`): vectorized joins, no per-row Python."""
        from ..ranking.ranked import LazyDocs
        from ..ranking.order import apply_order, trec_order, vocab_tie_order

        names = self.topic_names
        keep = tc >= 0
        if not keep.all():
            tc, dcode, score = tc[keep], dcode[keep], score[keep]
        tc = tc.astype(np.int64)
        empty_t = np.unique(np.asarray([self._tindex[t] for t in empty if t in self._tindex], np.int64))
        missing = np.zeros(0, np.int64)
        if self.options.complete:
            have = np.zeros(len(names), bool)
            have[tc] = True
            have[empty_t] = True
            missing = np.flatnonzero(~have).astype(np.int64)
            if len(missing):                   # trec_eval -c: one stand-in document per missing topic
                tc = np.concatenate((tc, missing))
                dcode = np.concatenate((dcode, np.full(len(missing), bogus, np.int64)))
                score = np.concatenate((score, np.ones(len(missing))))
        rel = self._frame_grades(tc, judged[dcode] if len(dcode) else np.zeros(0, np.int64))
        score = np.array(score, np.float64)
        order = trec_order(np.zeros(len(tc), np.int64), tc, score, len(names), vocab_tie_order(vocab, dcode))
        tc, score, rel, dcode = apply_order(order, tc.copy(), score, rel, dcode.astype(np.int64, copy=True))
        return _Rows(tc, score, rel, LazyDocs(np.asarray(vocab, dtype=object), dcode), empty_t, missing)

    def _judged_keys(self):
        """(judged documents' index, dict, sorted (topic, judged document) keys, their grades), made once."""
        import pandas as pd
        if self._frame_keys is None:
            jcode, jvocab = pd.factorize(np.asarray(self._q_doc, dtype=object))
            key = self._q_tcode * max(len(jvocab), 1) + jcode
            srt = np.argsort(key, kind="stable")
            g = np.where(self._q_grade >= 0, self._q_grade, -2)
            jvocab = np.asarray(jvocab, dtype=object)
            self._frame_keys = (pd.Index(jvocab), {d: i for i, d in enumerate(jvocab.tolist())}, key[srt], g[srt])
        return self._frame_keys

    def judged_codes(self, vocab: np.ndarray) -> np.ndarray:
        """Per document of `vocab` its code among the judged documents (-1: judged nowhere)."""
        jindex, jmap, _, _ = self._judged_keys()
        if len(vocab) < 4096:                  # small calls: a dict beats building an index
            return np.fromiter(map(jmap.get, vocab.tolist(), [-1] * len(vocab)), np.int64, len(vocab))
        return np.asarray(jindex.get_indexer(vocab), np.int64)

    def _frame_grades(self, tc: np.ndarray, dj: np.ndarray) -> np.ndarray:
        """Per row its grade (-1: not judged), by a sorted-key join on (topic, judged document code `dj`)."""
        jindex, _, keys, grades = self._judged_keys()
        if not len(keys) or not len(tc):
            return np.full(len(tc), -1, np.int64)
        rk = tc * max(len(jindex), 1) + dj
        pos = np.minimum(np.searchsorted(keys, rk), len(keys) - 1)
        hit = (dj >= 0) & (keys[pos] == rk)
        return np.where(hit, grades[pos], -1).astype(np.int64)

    def ranked(self, rows: _Rows, opt, gains=None):
        """The `Ranked` lists of `rows` under options `opt` (-M, -J applied) and `gains` (grades relabelled)."""
        from ..ranking.build import _assemble

        rel, q_grade, arrays = rows.rel, self._q_grade, self._topic_arrays
        if gains is not None:
            lut, q_grade, arrays = self._relabel(gains)
            rel = np.where(rel >= 0, lut[np.clip(rel, 0, len(lut) - 1)], rel)
        tc, score, docs, drop = rows.tc, rows.score, rows.docs, None
        if len(rows.empty):                  # an empty ranking: one stand-in row, dropped after grouping
            from ..ranking.ranked import LazyDocs
            tc = np.concatenate((tc, rows.empty))
            order = np.argsort(tc, kind="stable")
            tc = tc[order]
            score = np.concatenate((score, np.zeros(len(rows.empty))))[order]
            rel = np.concatenate((rel, np.full(len(rows.empty), -1, np.int64)))[order]
            drop = np.concatenate((np.zeros(len(rows.tc), bool), np.ones(len(rows.empty), bool)))[order]
            codes = np.concatenate((docs.codes, np.zeros(len(rows.empty), np.int64)))[order]
            docs = LazyDocs(docs.vocab if len(docs.vocab) else np.asarray([""], dtype=object), codes)
        n = len(tc)
        return _assemble(opt, ["run"], self.topic_names, np.zeros(n, np.int64), tc, score, rel, docs,
                         self._q_tcode, q_grade, rows.missing, topic_arrays=arrays, drop=drop)

    def _relabel(self, gains):
        """(grade -> gain lookup, the judgments' relabelled grades, their topic arrays) for `gains`."""
        if gains not in self._relabelled:
            from ..ranking.build import topic_judgments
            top = int(self._q_grade.max(initial=0))
            lut = np.arange(top + 1, dtype=np.int64)
            table = gains[1] if gains[0] == "exp" and len(gains) > 1 else (gains if gains[0] not in ("exp", "binary")
                                                                          else ())
            for g, v in table:
                if 0 <= g <= top:
                    if float(v) != int(v):
                        from ..errors import CranfieldError
                        raise CranfieldError(f"gains: grade {g} -> {v}: gains must be integers (as pytrec_eval's)")
                    lut[g] = int(v)
            if gains[0] == "exp":
                lut = (2 ** lut - 1).astype(np.int64)
            elif gains[0] == "binary":
                lut = (np.arange(top + 1) >= int(gains[1])).astype(np.int64)
            q = np.where(self._q_grade >= 0, lut[np.clip(self._q_grade, 0, top)], self._q_grade)
            self._relabelled[gains] = (lut, q, topic_judgments(len(self.topic_names), self._q_tcode, q))
        return self._relabelled[gains]

    def values(self, rows: _Rows):
        """(user's measure name or object, topic names, values) for every requested measure on one run's
        `rows`, in the order asked; each group on its own ranked lists."""
        if not self._rekey:
            return self._values(rows)
        from .dialects import apply
        return apply(self._request, self._values(rows))

    def _values(self, rows: _Rows):
        from .evaluate import measure_values

        built: dict = {}
        for grp in self.groups:
            if _is_diversity(grp):
                yield from self._diversity_values(rows, grp)
                continue
            key = (grp.options, grp.gains)
            r = built.get(key)
            if r is None:
                r = built[key] = self.ranked(rows, grp.options, grp.gains)
                r.caches["judgments"] = self._judgment_caches.setdefault(key, {})
                if self.extra:
                    r.extra = self.extra
                if self.needs_table:
                    r.qrels = self.qrels
            topics = [self.topic_names[t] for t in r.g_topic.tolist()]
            values, _ = measure_values(r, grp.requests)      # as `compute` computes them (-c fill)
            for name, col in values.items():
                for u in grp.names.get(name, ()):
                    yield u, topics, col

    def _diversity_values(self, rows: _Rows, grp: _Group):
        """ndeval's measures (engine.measures.diversity) of one run's rows: per topic the ranking by score, ties by
        document id ascending (as pyndeval, ir_measures' provider), unjudged documents dropped with
        judged_only."""
        from ..measures.diversity import TopicJudgments, topic_measures

        opt = grp.options
        _, alpha, beta = grp.gains
        import dataclasses
        r = self.ranked(rows, dataclasses.replace(opt, ascending_ties=True), None)
        if "judgments" not in self._judgment_caches.setdefault(("ndeval", opt.rel_level), {}):
            self._judgment_caches[("ndeval", opt.rel_level)]["judgments"] = {
                str(t): TopicJudgments(g, opt.rel_level) for t, g in self._subtopics.groupby("topic", sort=False)}
        judg = self._judgment_caches[("ndeval", opt.rel_level)]["judgments"]
        cutoffs = sorted({int(n.rpartition("@")[2]) for n in grp.requests if "@" in n}) or [5]
        docs = np.asarray(r.doc, dtype=object)
        topics = [self.topic_names[t] for t in r.g_topic.tolist()]
        cols = {n: np.zeros(r.n_groups) for n in grp.requests}
        for gi, t in enumerate(topics):
            tj = judg.get(t)
            if tj is None:
                continue
            ranking = docs[r.offsets[gi]:r.offsets[gi + 1]].tolist()
            vals = topic_measures(tj, ranking, tuple(cutoffs), alpha, beta)
            for n in grp.requests:
                cols[n][gi] = vals[n]
        for n in grp.requests:
            for u in grp.names.get(n, ()):
                yield u, topics, cols[n]

    def _evaluate_frame(self, run, frame: bool):
        import pandas as pd

        from .adapters import check_topics, run_columns

        cols = run_columns(run, issues=self.issues)
        used = np.unique(cols.topic_code) if len(cols.topic_code) else np.zeros(0, np.int64)
        check_topics(self.topic_names, cols.topics[used].tolist() + [t for _, t in cols.empty], self.issues)
        t_lut = np.asarray([self._tindex.get(t, -1) for t in cols.topics.tolist()], np.int64)
        runs = cols.runs if len(cols.run_code) else (list(dict.fromkeys(r for r, _ in cols.empty)) or cols.runs
                                                     or ["run"])
        tc_all = t_lut[cols.topic_code] if len(cols.topic_code) else cols.topic_code
        parts, out = [], {}
        vocab, bogus = cols.docs, None
        if self.options.complete:                  # trec_eval -c's stand-in document, one code for every run
            from ..ranking.ranked import BOGUS_DOCNO
            vocab = np.append(np.asarray(vocab, dtype=object), BOGUS_DOCNO)
            bogus = len(vocab) - 1
        judged = self.judged_codes(vocab)
        # each run's rows: one stable sort by run, then slices (no pass over every row per run)
        by_run = np.argsort(cols.run_code, kind="stable")
        bounds = np.searchsorted(cols.run_code[by_run], np.arange(len(cols.runs) + 1))
        code_of = {r: i for i, r in enumerate(cols.runs)}
        empty_of: dict = {}
        for rr, t in cols.empty:
            empty_of.setdefault(rr, []).append(t)
        seen: set = set()
        for r in runs:
            i = code_of.get(r)
            sel = slice(None) if len(runs) == 1 else (by_run[bounds[i]:bounds[i + 1]] if i is not None
                                                       else np.zeros(0, np.int64))
            rows = self.rows_frame(tc_all[sel], cols.doc_code[sel], vocab, judged, cols.score[sel],
                                   empty_of.get(r, ()), bogus)
            for u, topics, col in self.values(rows):
                if frame and getattr(col, "dtype", np.dtype(float)).kind not in "fiub":
                    continue                   # runid / relstring: text, not a value of the long table
                if frame:
                    if not isinstance(u, str):       # a measure object: labelled by its name (pandas takes a
                        u = str(u)                   # callable column key for a function)
                        if (r, u) in seen:
                            continue
                    seen.add((r, u))
                    parts.append(pd.DataFrame({"run": r, "topic": pd.Series(topics, dtype=object),
                                               "measure": pd.Series([u] * len(topics), dtype=object),
                                               "value": np.asarray(col, np.float64)}))
                else:
                    d = out.setdefault(r, {})
                    for t, v in zip(topics, col.tolist()):
                        d.setdefault(t, {})[u] = v
        if frame:
            if not parts:
                return pd.DataFrame({"run": [], "topic": [], "measure": [], "value": []})
            return _sorted_long(pd.concat(parts, ignore_index=True), self.topic_names)
        out = {r: {t: d[t] for t in sorted(d, key=lambda s: s.encode("utf-8"))} for r, d in out.items()}
        return out[next(iter(out))] if len(out) == 1 else out


def _is_diversity(grp: _Group) -> bool:
    return isinstance(grp.gains, tuple) and bool(grp.gains) and grp.gains[0] == "ndeval"


def _version(v) -> str:
    from ..errors import CranfieldError
    s = str(v)
    if s in ("9", "9.0", "9.x"):
        return "9"
    if s in ("10", "10.0"):
        return "10.0"
    raise CranfieldError(f"trec_eval_version must be '9' or '10.0', got {v!r}")


def _sorted_long(long, topic_names):
    """A long table in the order run, measure (as asked), topic (byte order)."""
    import pandas as pd
    runs = list(dict.fromkeys(long["run"]))
    meas = list(dict.fromkeys(long["measure"]))
    tpos = {t: i for i, t in enumerate(topic_names)}
    order = np.lexsort((long["topic"].map(tpos).to_numpy(), pd.Categorical(long["measure"], categories=meas).codes,
                        pd.Categorical(long["run"], categories=runs).codes))
    return long.iloc[order].reset_index(drop=True)


def _dict_judgments(d: Mapping) -> tuple[list[str], np.ndarray, np.ndarray, list[str]]:
    """(judged topics in byte order, per judgment its topic index, grade, document) of a nested dict."""
    from ..errors import CranfieldError

    topics = sorted((str(t) for t in d), key=lambda s: s.encode("utf-8"))
    index = {t: i for i, t in enumerate(topics)}
    tc, gr, docs = [], [], []
    for t, inner in d.items():
        ti = index[str(t)]
        for doc, g in inner.items():
            if type(g) is not int:
                if isinstance(g, bool) or not (isinstance(g, (int, np.integer)) or
                                               (isinstance(g, float) and g.is_integer())):
                    raise CranfieldError(f"judgments: topic {t}, document {doc}: grade {g!r} is not an integer "
                                         f"(grades are integers, as in a qrels file)")
                g = int(g)
            tc.append(ti)
            gr.append(g)
            docs.append(doc if type(doc) is str else str(doc))
    return topics, np.asarray(tc, np.int64), np.asarray(gr, np.int64), docs


def evaluate(qrels, runs, measures=None, *, rel_level: int = 1, max_depth: int | None = None,
             judged_only: bool = False, complete: bool = False, gains: dict | None = None,
             trec_eval_version: str = "10.0", issues: Issues | None = None, trec_labels: bool = True):
    """Per-topic values, long form (run, topic, measure, value), from inputs of any recognized shape
    (`engine.evaluation.adapters`) and measure names of any vocabulary (`engine.measures.names`). Names that are
    Cranfield's / trec_eval's give trec_eval's output names (`P.10` -> `P_10`); other names label their own
    values (`nDCG@10`; with `trec_labels=False` every name giving one value labels it as asked); measures in
    the order asked; ir_measures measure objects label their values (`engine.evaluation.dialects`). Warnings go to `issues` when given, else to Python's
    `warnings` (category `cranfield.InputWarning`).

    >>> from engine.evaluation.api import evaluate
    >>> df = evaluate({"1": {"a": 1}}, {"1": {"a": 0.3, "b": 0.9}}, ["P@1", "AP"])
    >>> df[["measure", "value"]].values.tolist()
    [['P@1', 0.0], ['AP', 0.5]]
    """
    import pandas as pd

    from .adapters import check_ids
    from .evaluate import evaluate as _evaluate
    from ..measures.names import NDEVAL, translate
    from ..ranking.ranked import EvalOptions

    w = issues if issues is not None else Issues()
    try:
        from .dialects import request
        from .dialects import for_version
        req = request(["official"] if measures is None else measures)
        names = for_version(req.names, _version(trec_eval_version))
        # diversity measures read subtopic judgments from the input itself (Evaluator)
        diversity = any(translate(n)[0].startswith(NDEVAL) for n in names)
        q = qrels if diversity else as_qrels(qrels, issues=w)
        r = as_runs(runs, issues=w)
        if not diversity:
            check_ids(q, r, w)
        if not names:
            return pd.DataFrame({"run": pd.Categorical([]), "topic": pd.Series([], dtype=object),
                                 "measure": pd.Categorical([]), "value": pd.Series([], dtype=np.float64)})
        if trec_labels and req.plain and all(translate(n) == (n, {}) for n in names) and not r.attrs.get("empty"):
            opt = EvalOptions(rel_level=rel_level, max_depth=max_depth, judged_only=judged_only, complete=complete,
                              trec_eval_version=_version(trec_eval_version))
            return _in_asked_order(_evaluate(q, r, names, options=opt, gains=gains), names)
        ev = Evaluator(q, measures if measures is not None and not req.plain else names, rel_level=rel_level, max_depth=max_depth, judged_only=judged_only,
                       complete=complete, gains=gains, trec_eval_version=trec_eval_version, issues=w,
                       trec_labels=trec_labels)
        if diversity:
            check_ids(ev.qrels, r, w)
        long = ev._evaluate_frame(r, True)
        aggs = {u: req.measure.aggregate for g in ev.groups if not _is_diversity(g) for req in g.requests
                for n in req.names for u in g.names.get(n, ())}
        aggs.update({u: "mean" for g in ev.groups if _is_diversity(g) for us in g.names.values() for u in us})
        if not req.plain:
            aggs = {k if isinstance(k, str) else str(k): a for u, a in aggs.items() for k in req.key_of(u)}
            aggs.update({d[0]: "mean" for d in req.derived})
        names_in = list(dict.fromkeys(list(r["run"].astype(str)) + [x for x, _ in r.attrs.get("empty", ())]))
        long["run"] = pd.Categorical(long["run"], categories=list(dict.fromkeys(list(long["run"]) + names_in)))
        long["measure"] = pd.Categorical(long["measure"], categories=list(dict.fromkeys(
            m if isinstance(m, str) else str(m) for m in ev.measure_names)))
        long.attrs["aggregates"] = aggs
        return long
    finally:
        if issues is None:
            surface(w, stacklevel=3)


def _in_asked_order(long, names: list[str]):
    """`long` with its measures in the order asked (a nickname's members in trec_eval's order)."""
    from ..measures.registry import resolve
    if not len(long) or not hasattr(long["measure"], "cat"):
        return long
    have = list(long["measure"].cat.categories)
    order = []
    for n in names:
        order += [o for req in resolve([n]) for o in req.names if o in have and o not in order]
    order += [o for o in have if o not in order]
    if order == have:
        return long
    long["measure"] = long["measure"].cat.reorder_categories(order)
    keys = [long["run"].cat.codes.to_numpy() if hasattr(long["run"], "cat") else np.zeros(len(long), np.int64),
            long["measure"].cat.codes.to_numpy()]
    idx = np.lexsort(keys[::-1])
    out = long.iloc[idx].reset_index(drop=True)
    out.attrs = long.attrs
    return out


def measures():
    """The table `cranfield measures` prints: name, parameters, nicknames, description (a DataFrame)."""
    from ..measures.registry import measures_table
    return measures_table()
