"""Randomized comparison of every measure pytrec_eval supports against `engine.evaluation.evaluate`.

Hypothesis generates graded qrels (grades 0..3 plus negative "pooled, unjudged" grades), runs with
score ties, topics missing from runs or from the qrels, topics whose run empties under -J, and the
flags -l, -J, -M, -c, plus gain parameters (`ndcg.1=3,2=0.5`) and cut-offs. Every per-topic value of
every measure both sides compute must agree within 1e-9 (NaN matches NaN; relative for values > 1).

pytrec_eval has no -M or -c: -M is applied by truncating each ranking in trec_eval order before it
is handed over, and -c by giving it trec_eval's stand-in ranking (one unjudged document
"ceci_nest_pas_un_docno", score 1.0) for each judged topic a run lacks, then resetting to 0 the
values trec_eval resets for such topics (num_ret, utility; unj and rbp_resid are not in pytrec_eval).
pytrec_eval is trec_eval 9.x, so iprec_at_recall and 11pt_avg are compared with
EvalOptions(trec_eval_version="9"). gm_map and gm_bpref: trec_eval keeps log(max(v, 1e-5)) per
topic, so both sides are compared as max(v, 1e-5). pytrec_eval refuses -l 0 (see
tests/test_gain_measures.py for -l 0 cases). Topics judged only with negative grades are not
generated: trec_eval keeps stale per-topic state for them (docs/trec_eval-gain.md).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")
# The C extension directly: pytrec_eval's Python wrapper rewrites `ndcg.1=3` into `ndcg.1`.
from pytrec_eval_ext import RelevanceEvaluator  # noqa: E402

import engine  # noqa: E402
from engine.evaluation.evaluate import summarize  # noqa: E402
from engine.measures import REGISTRY, load_all  # noqa: E402
from engine.measures.registry import MIN_GEO_MEAN, aggregate_values  # noqa: E402
from engine.ranking.ranked import EvalOptions  # noqa: E402

TOL = 1e-9
V9_MEASURES = {"iprec_at_recall", "11pt_avg"}      # cut-off rounding changed in trec_eval 10.0
PAIR_MEASURES = ("ndcg", "ndcg_rel", "Rndcg", "G")  # take `level=gain` parameters
CUT_MEASURES = ("P", "recall", "ndcg_cut", "map_cut", "relative_P", "success")

BOGUS_DOC = "ceci_nest_pas_un_docno"               # trec_eval -c stand-in for a missing ranking
RESET_FOR_STAND_IN = {"num_ret", "utility"}
TOPICS = ["1", "10", "2", "301", "a"]              # strcmp order differs from numeric order
DOCS = [f"d{i}" for i in range(14)] + ["D3", "d03", "x", "X1", "doc-9"]
GRADES = [0, 0, 0, 1, 1, 2, 3, -1, -2]
SCORES = [0.0, 0.5, 1.0, 1.0, 2.0, 2.5, -1.0]      # few values: many ties
GAINS = [-1.0, 0.0, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 9.0]


def compared_measures() -> list[str]:
    """pytrec_eval measures that the engine registers (string measures excluded)."""
    load_all()
    return sorted(m for m in pytrec_eval.supported_measures
                  if m in REGISTRY and REGISTRY[m].value_kind != "str")


@st.composite
def cases(draw):
    n_topics = draw(st.integers(1, 4))
    topics = draw(st.permutations(TOPICS))[:n_topics]
    qrels = []
    for t in topics:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        grades = [draw(st.sampled_from(GRADES)) for _ in docs]
        if max(grades) < 0:
            # trec_eval keeps stale gain levels from the previous topic for a topic judged only
            # with negative grades (see docs/trec_eval-gain.md); such topics are not compared.
            grades[0] = draw(st.sampled_from([0, 1, 2]))
        qrels += [(t, d, g) for d, g in zip(docs, grades)]
    run_topics = topics + ["999"]                    # a topic nobody judged
    runs = []
    for name in draw(st.sampled_from([["A"], ["A", "B"], ["B", "A", "C"]])):
        for t in run_topics:
            if draw(st.integers(0, 4)) == 0:
                continue                             # run lacks this topic
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=14, unique=True))
            runs += [(name, t, d, draw(st.sampled_from(SCORES))) for d in docs]
    if not any(r[1] in topics for r in runs):
        runs.append(("A", topics[0], DOCS[0], 1.0))
    params = {}
    for m in PAIR_MEASURES:
        if draw(st.booleans()):
            pairs = draw(st.lists(st.tuples(st.integers(-1, 4), st.sampled_from(GAINS)), min_size=1, max_size=3))
            params[m] = ",".join(f"{lvl}={g:g}" for lvl, g in pairs)
    for m in CUT_MEASURES:
        if draw(st.integers(0, 3)) == 0:
            params[m] = ",".join(str(k) for k in sorted(draw(st.sets(st.integers(1, 16), min_size=1, max_size=3))))
    opts = dict(rel_level=draw(st.sampled_from([1, 1, 2, 3])),   # pytrec_eval refuses -l 0
                judged_only=draw(st.booleans()),
                max_depth=draw(st.sampled_from([None, None, 1, 3, 8])),
                complete=draw(st.booleans()))
    return qrels, runs, params, opts


def _trec_order(docs: dict) -> list[tuple[str, float]]:
    """A topic's ranking in trec_eval order: score descending, then document id descending."""
    by_doc = sorted(docs.items(), key=lambda kv: kv[0].encode(), reverse=True)
    return sorted(by_doc, key=lambda kv: -kv[1])        # stable: ties stay in doc-descending order


def pytrec_values(qrels, runs, measures, params, opts) -> dict:
    """(run, topic, output name) -> value from pytrec_eval, with -M and -c emulated."""
    qd: dict = {}
    for t, d, g in qrels:
        qd.setdefault(t, {})[d] = int(g)
    specs = {m if m not in params else f"{m}.{params[m]}" for m in measures}
    out = {}
    for name in dict.fromkeys(r[0] for r in runs):
        # a fresh evaluator per run: trec_eval parses `level=gain` pairs in place, so a second
        # evaluate() on the same evaluator would see mangled parameters
        ev = RelevanceEvaluator(qd, specs, opts["rel_level"], int(opts["judged_only"]))
        rd: dict = {}
        for rn, t, d, s in runs:
            if rn == name:
                rd.setdefault(t, {})[d] = float(s)
        if opts["max_depth"] is not None:
            rd = {t: dict(_trec_order(docs)[: opts["max_depth"]]) for t, docs in rd.items()}
        stand_in = set()
        if opts["complete"]:
            for t in qd:
                if t not in rd:
                    rd[t] = {BOGUS_DOC: 1.0}
                    stand_in.add(t)
        for t, vals in ev.evaluate(rd).items():
            for key, v in vals.items():
                base = key if key in measures else key.rsplit("_", 1)[0]
                out_name = f"{base}_{params[base]}" if base in PAIR_MEASURES and base in params else key
                if base.startswith("gm_"):
                    v = math.exp(v)      # trec_eval keeps log(max(value, 1e-5)) per topic
                if t in stand_in and key in RESET_FOR_STAND_IN:
                    v = 0.0
                out[(name, t, out_name)] = v
    return out


def engine_values(qrels, runs, measures, params, opts, version="10.0") -> pd.DataFrame:
    qdf = pd.DataFrame(qrels, columns=["topic", "doc", "grade"])
    rdf = pd.DataFrame(runs, columns=["run", "topic", "doc", "score"])
    specs = [m if m not in params else f"{m}.{params[m]}" for m in measures]
    opt = EvalOptions(rel_level=opts["rel_level"], max_depth=opts["max_depth"],
                      judged_only=opts["judged_only"], complete=opts["complete"], trec_eval_version=version)
    return engine.evaluate(qdf, rdf, specs, options=opt)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= TOL * max(1.0, abs(b))    # relative only beyond 1 (huge gain parameters)


def check_case(qrels, runs, params, opts) -> int:
    """Compare every per-topic value and every run mean; returns the number of values compared."""
    measures = compared_measures()
    v10 = [m for m in measures if m not in V9_MEASURES]
    v9 = [m for m in measures if m in V9_MEASURES]
    frames = [engine_values(qrels, runs, v10, params, opts)]
    if v9:
        frames.append(engine_values(qrels, runs, v9, params, opts, version="9"))
    want = pytrec_values(qrels, runs, measures, params, opts)

    got = {}
    for df in frames:
        for run, topic, meas, val in df[["run", "topic", "measure", "value"]].itertuples(index=False):
            if str(meas).startswith("gm_"):
                val = max(val, MIN_GEO_MEAN)
            got[(str(run), str(topic), str(meas))] = float(val)
    missing = sorted(set(want) - set(got))[:5]
    extra = sorted(set(got) - set(want))[:5]
    assert not missing and not extra, f"topic/measure sets differ: only pytrec {missing}, only engine {extra}"
    bad = [(k, got[k], want[k]) for k in want if not _close(got[k], want[k])]
    assert not bad, f"{len(bad)} of {len(want)} values differ, e.g. {bad[:6]}"

    # run means (summary lines): -c averages over every judged topic, the missing ones included
    n_judged = len({t for t, _, _ in qrels})
    for df in frames:
        summ = summarize(df)
        for run in summ.index:
            for meas in summ.columns:
                vals = np.array([v for (r, _, m), v in want.items() if r == run and m == meas])
                if opts["complete"]:
                    assert len(vals) == n_judged
                kind = df.attrs["aggregates"][meas]
                exp = aggregate_values(kind, vals)
                assert _close(float(summ.loc[run, meas]), exp), (run, meas, summ.loc[run, meas], exp)
    return len(want)


# No shrinking: a failure reports the generated case as is (with the differing values), in seconds
# rather than the minutes shrinking through engine calls takes.
@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
def test_engine_matches_pytrec_eval(case):
    qrels, runs, params, opts = case
    assert check_case(qrels, runs, params, opts) > 0


def test_complete_fills_missing_topics_with_stand_in_ranking():
    """-c: a judged topic the run lacks is evaluated on trec_eval's one-unjudged-document ranking."""
    qrels = [("1", "a", 1), ("1", "b", 2), ("2", "c", 1), ("2", "d", 0)]
    runs = [("A", "1", "a", 1.0), ("A", "1", "x", 0.5)]
    opts = dict(rel_level=1, judged_only=False, max_depth=None, complete=True)
    n = check_case(qrels, runs, {}, opts)
    assert n >= 2 * len(compared_measures())
    df = engine_values(qrels, runs, ["ndcg", "map"], {}, opts)
    topic2 = df[df["topic"] == "2"].set_index("measure")["value"]
    assert topic2["ndcg"] == 0.0 and topic2["map"] == 0.0
    # mean over both judged topics: ndcg(1) = (1/1) / (2/1 + 1/log2(3)) = 1 / 2.6309 = 0.38010
    assert summarize(df).loc["A", "ndcg"] == pytest.approx(0.5 * 1 / (2 + 1 / math.log2(3)), abs=1e-12)


def test_gain_sort_quirk_matches_pytrec_eval():
    """Gains closer than 1 compare equal in trec_eval's sort: with 1=0.5 the level-1 entry sorts below
    level 0 (gain 0), so level-1 documents drop out of the ideal ranking and ndcg can exceed 1."""
    qrels = [("1", "a", 1), ("1", "b", 2), ("1", "c", 0)]
    runs = [("A", "1", "a", 2.0), ("A", "1", "b", 1.0)]
    opts = dict(rel_level=1, judged_only=False, max_depth=None, complete=False)
    check_case(qrels, runs, {"ndcg": "1=0.5"}, opts)
    df = engine_values(qrels, runs, ["ndcg.1=0.5"], {}, opts)
    # sorted gains (increasing): 0.5 (level 1), 0 (level 0), 2 (level 2); ideal = [2] then stops at 0.
    # dcg = 0.5/log2(2) + 2/log2(3) = 0.5 + 1.26186 = 1.76186; ideal dcg = 2; ndcg = 0.88093
    assert df["value"].iloc[0] == pytest.approx((0.5 + 2 / math.log2(3)) / 2, abs=1e-12)


# Sparse large grades (issue 14): gain tables hold the grades judged (`Ranked.level_grades`) and the
# unused levels 0..N-1 enter trec_eval's non-transitive gain sort as ranges (`_gains.sparse_entries`).
# pytrec_eval materializes every level, so N stays at 3000 here; DENSE_LEVELS is forced to 1 so the
# sparse path is the one compared.
SPARSE_GRADES = [0, 0, 1, 2, 57, 300, 2999, -1]
SPARSE_GAINS = [0.5, 2.0, 56.6, 57.4, 299.5, 300.9, 2998.2, 2999.7, 1e6, -3.0]


@st.composite
def sparse_cases(draw):
    qrels, runs, _, opts = draw(cases())
    qrels = [(t, d, draw(st.sampled_from(SPARSE_GRADES)) if g >= 0 else g) for t, d, g in qrels]
    for t in {t for t, _, _ in qrels}:
        if max(g for tt, _, g in qrels if tt == t) < 0:
            qrels.append((t, "zz", 57))
    params = {}
    for m in PAIR_MEASURES:
        if draw(st.booleans()):
            pairs = draw(st.lists(st.tuples(st.sampled_from([1, 2, 57, 58, 300, 2999, 3000, -1]),
                                            st.sampled_from(SPARSE_GAINS)), min_size=1, max_size=4))
            params[m] = ",".join(f"{lvl}={g:g}" for lvl, g in pairs)
    return qrels, runs, params, opts


@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sparse_cases())
def test_sparse_large_grades_match_pytrec_eval(case):
    from engine.ranking import build as ranking   # topic_judgments reads DENSE_LEVELS there
    qrels, runs, params, opts = case
    old = ranking.DENSE_LEVELS
    ranking.DENSE_LEVELS = 1
    try:
        assert check_case(qrels, runs, params, opts) > 0
    finally:
        ranking.DENSE_LEVELS = old
