"""The Python library surface: `Evaluator` (judgments prepared once, fast small calls), `evaluate_any`
(any of the ecosystem's input shapes), `measures()` (the table `cranfield measures` prints).

Measure names may be Cranfield's / trec_eval's (`map`, `P.10`, `ndcg_cut.10`), their output names
(`P_10`), or ir_measures' (`AP`, `nDCG@10`, `P(rel=2)@10`): see `engine.measures.names`.

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

from .adapters import Issues, as_qrels, as_runs
from ..measures.names import to_requests


@dataclass
class _Group:
    """Measures evaluated under one set of options (ir_measures' `rel=` may differ per measure)."""

    options: object
    requests: list
    names: dict            # cranfield output name -> the user's names for it


class Evaluator:
    """Judgments prepared once; `evaluate(run)` gives per-topic values of `measures` for one run.

    Runs may be a pytrec_eval-style dict {topic: {doc: score}} (the fast path: no pandas), or anything
    `engine.evaluation.adapters.as_runs` accepts (then every run in it is evaluated). Results are a dict
    {topic: {measure: value}} (one run) or, with `frame=True`, a long DataFrame run, topic, measure, value.
    Options follow trec_eval: `rel_level` (-l), `max_depth` (-M), `judged_only` (-J), `complete` (-c).

    >>> ev = Evaluator({"1": {"a": 2, "b": 0}}, ["P@1", "RR"])
    >>> ev.evaluate({"1": {"a": 0.5, "b": 0.9}})
    {'1': {'P@1': 0.0, 'RR': 0.5}}
    """

    def __init__(self, qrels, measures, *, rel_level: int = 1, max_depth: int | None = None,
                 judged_only: bool = False, complete: bool = False, gains: dict | None = None,
                 issues: Issues | None = None):
        from ..measures.registry import reads_judgment_table
        from ..ranking.ranked import EvalOptions
        from ..ranking.build import _judged_topics

        self.issues = issues if issues is not None else Issues()
        base = EvalOptions(rel_level=rel_level, max_depth=max_depth, judged_only=judged_only, complete=complete)
        self.groups: list[_Group] = []
        for opt, reqs, names in to_requests(measures, base):
            self.groups.append(_Group(opt, reqs, names))
        self.measure_names = [u for g in self.groups for us in g.names.values() for u in us]
        self.extra = {"gains": dict(gains)} if gains else None
        # measures reading the judgment table itself (estimators) get it as a DataFrame (pandas)
        self.needs_table = any(reads_judgment_table(req.measure) for g in self.groups for req in g.requests)
        if isinstance(qrels, Mapping) and all(isinstance(v, Mapping) for v in qrels.values()):
            # a pytrec_eval-style dict: prepared without pandas (the small-call path)
            self._qrels_df = None
            self.topic_names, self._q_tcode, self._q_grade, self._q_doc = _dict_judgments(qrels)
        else:
            self._qrels_df = as_qrels(qrels, issues=self.issues)
            self.topic_names, self._q_tcode, self._q_grade = _judged_topics(self._qrels_df)
            self._q_doc = self._qrels_df["doc"].astype(str).tolist()
        self._tindex = {t: i for i, t in enumerate(self.topic_names)}
        grades: list[dict] = [{} for _ in self.topic_names]
        for t, d, g in zip(self._q_tcode.tolist(), self._q_doc, self._q_grade.tolist()):
            grades[t][d] = g if g >= 0 else -2          # RELVALUE_UNJUDGED
        self._grades = grades
        from ..ranking.build import topic_judgments
        self._topic_arrays = topic_judgments(len(self.topic_names), self._q_tcode, self._q_grade)
        self._judgment_caches: dict = {}    # per options: Ranked.caches["judgments"], kept across runs

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
        if isinstance(run, dict) and not frame and all(isinstance(v, dict) for v in run.values()):
            return self._evaluate_dict(run)
        return self._evaluate_frame(run, frame)

    def _evaluate_dict(self, run: dict) -> dict:
        names = self.topic_names
        ranked = self.ranked_dict(run)
        topic_of = [names[t] for t in ranked.g_topic.tolist()]
        out: dict = {t: {} for t in topic_of}
        for user, col in self.values(ranked):
            for t, v in zip(topic_of, col.tolist()):
                out[t][user] = v
        return out

    def ranked_dict(self, run: dict):
        """The `Ranked` lists of one run given as {topic: {doc: score}}, joined with the judgments
        (trec_eval's order: topics in byte order, score descending, ties by document id descending;
        with `complete`, a judged topic the run misses gets trec_eval's one stand-in document)."""
        from itertools import repeat

        from ..ranking.ranked import BOGUS_DOCNO, LazyDocs
        from ..ranking.build import _assemble
        from ..ranking.order import list_tie_order, order_rows, trec_order

        tindex, grades, names = self._tindex, self._grades, self.topic_names
        present: dict = {}
        unknown = False
        for qid, ranking in run.items():
            ti = tindex.get(qid if type(qid) is str else str(qid))
            if ti is None:
                unknown = True
            elif ranking:
                present[ti] = ranking
        if unknown:
            from .adapters import check_ids
            import pandas as pd
            check_ids(self.qrels, pd.DataFrame({"topic": [str(k) for k in run]}), self.issues)
        opt = self.groups[0].options if self.groups else None
        missing: list[int] = []
        if opt is not None and opt.complete and len(present) < len(names):
            missing = sorted(set(range(len(names))) - set(present))
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
        return _assemble(opt, ["run"], names, np.zeros(n, np.int64), tc[order], score_arr[order],
                         np.asarray(rl, np.int64)[order] if n else np.zeros(0, np.int64),
                         LazyDocs(np.asarray(ds, dtype=object), order), self._q_tcode, self._q_grade,
                         np.asarray(missing, np.int64), topic_arrays=self._topic_arrays)

    def values(self, ranked):
        """(user's measure name, per-group values) for every requested measure on `ranked` (as
        `ranked_dict` gives it), in the order asked."""
        from .evaluate import measure_values

        for grp in self.groups:
            r = ranked if grp.options is ranked.options or grp.options == ranked.options else \
                _with_options(ranked, grp.options)
            r.caches["judgments"] = self._judgment_caches.setdefault(grp.options, {})
            if self.extra:
                r.extra = self.extra
            if self.needs_table:
                r.qrels = self.qrels
            values, _ = measure_values(r, grp.requests)      # as `compute` computes them (-c fill)
            for name, col in values.items():
                for u in grp.names.get(name, ()):
                    yield u, col

    def _evaluate_frame(self, run, frame: bool):
        import pandas as pd

        from .adapters import check_ids
        from ..ranking.build import build_ranked

        runs = as_runs(run, issues=self.issues)
        check_ids(self.qrels, runs, self.issues)
        ranked, _ = build_ranked(self.qrels, runs, self.groups[0].options)
        runs_col = np.asarray(ranked.run_names, dtype=object)[ranked.g_run]
        topics_col = np.asarray(ranked.topic_names, dtype=object)[ranked.g_topic]
        parts = [pd.DataFrame({"run": runs_col, "topic": topics_col, "measure": u, "value": np.asarray(col, np.float64)})
                 for u, col in self.values(ranked)]
        long = pd.concat(parts, ignore_index=True)
        if frame:
            return long
        out: dict = {}
        for r, t, m, v in zip(long["run"], long["topic"], long["measure"], long["value"].tolist()):
            out.setdefault(r, {}).setdefault(t, {})[m] = v
        return out[next(iter(out))] if len(out) == 1 else out


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


def _with_options(ranked, opt):
    """The same lists under another relevance level (ir_measures' rel=), cheaply."""
    import dataclasses
    return dataclasses.replace(ranked, options=opt)


def evaluate(qrels, runs, measures=None, *, rel_level: int = 1, max_depth: int | None = None,
             judged_only: bool = False, complete: bool = False, gains: dict | None = None,
             issues: Issues | None = None):
    """Per-topic values, long form (run, topic, measure, value), from inputs of any recognized shape
    (`engine.evaluation.adapters`) and measure names of any vocabulary (`engine.measures.names`). Names that are
    Cranfield's / trec_eval's give trec_eval's output names (`P.10` -> `P_10`, trec_eval's rules when a
    measure is named twice); other names label their own values (`nDCG@10`). Warnings go to `issues`.

    >>> from engine.evaluation.api import evaluate
    >>> df = evaluate({"1": {"a": 1}}, {"1": {"a": 0.3, "b": 0.9}}, ["P@1", "AP"])
    >>> df[["measure", "value"]].values.tolist()
    [['P@1', 0.0], ['AP', 0.5]]
    """
    import pandas as pd

    from .evaluate import evaluate as _evaluate
    from .adapters import check_ids
    from ..measures.names import translate
    from ..ranking.ranked import EvalOptions

    w = issues if issues is not None else Issues()
    names = ["official"] if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    q = as_qrels(qrels, issues=w)
    r = as_runs(runs, issues=w)
    check_ids(q, r, w)
    if all(translate(n) == (n, {}) for n in names):
        opt = EvalOptions(rel_level=rel_level, max_depth=max_depth, judged_only=judged_only, complete=complete)
        return _evaluate(q, r, names, options=opt, gains=gains)
    ev = Evaluator(q, names, rel_level=rel_level, max_depth=max_depth, judged_only=judged_only,
                   complete=complete, gains=gains, issues=w)
    long = ev._evaluate_frame(r, True)
    aggs = {u: req.measure.aggregate for g in ev.groups for req in g.requests for n in req.names
            for u in g.names.get(n, ())}
    long["run"] = pd.Categorical(long["run"], categories=list(dict.fromkeys(long["run"])))
    long["measure"] = pd.Categorical(long["measure"], categories=list(dict.fromkeys(long["measure"])))
    long.attrs["aggregates"] = aggs
    return long


def measures():
    """The table `cranfield measures` prints: name, parameters, nicknames, description (a DataFrame)."""
    from ..measures.registry import measures_table
    return measures_table()
