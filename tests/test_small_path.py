"""The small-call path (engine/ranking/small.py) against the ranked-list kernel: the same values bit for bit
(==, not approx) and the same keys in the same order, on trec_eval's reference inputs (checked against
trec_eval's own -q output too) and on hypothesis-generated small runs (ties, int scores, unjudged and
negatively graded documents, every relevance level, cut-offs beyond the list); what it leaves to the kernel
(errors, warnings, other options) gives the kernel's answer; measure objects are hashed once per Evaluator."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cranfield
from engine.evaluation.api import Evaluator
from engine.ranking import small

REF = Path(__file__).parent / "data" / "reference" / "trec_eval"
MEASURES = ["map", "P.1,5,10,1000", "recall.5,100", "recip_rank", "ndcg_cut.1,3,10,1000"]
# ir_measures' spellings too, and a second relevance level (its own group)
IRM = ["AP", "P@10", "nDCG@10", "RR", "R@100", "P(rel=2)@5", "AP(rel=2)", "nDCG@3", "RR(rel=2)"]


def _read(path: Path, cols: tuple[int, int, int], conv) -> dict:
    out: dict = {}
    for line in path.read_text().splitlines():
        f = line.split()
        out.setdefault(f[cols[0]], {})[f[cols[1]]] = conv(f[cols[2]])
    return out


def _both(qrels, run, measures, **kw):
    """(small path's result, kernel's result) of one run; fails if the small path declined."""
    ev = Evaluator(qrels, measures, **kw)
    assert ev._small is not None
    got = small.evaluate_small(ev._small, ev._tindex, ev.topic_names, run)
    ev._small = None
    return got, ev.evaluate(run)


def _same(got, want):
    assert got is not None, "the small path declined"
    assert list(got) == list(want)
    for t in want:
        assert list(got[t]) == list(want[t]), t
        for k, v in want[t].items():
            assert got[t][k] == v and type(got[t][k]) is type(v), (t, k, got[t][k], v)


@pytest.mark.parametrize("qrels_file,level", [("qrels.test", 1), ("qrels.rel_level", 1), ("qrels.rel_level", 2),
                                              ("qrels.rel_level", 0)])
def test_reference_inputs_bit_identical(monkeypatch, qrels_file, level):
    monkeypatch.setattr(small, "SMALL_ROWS", 10**6)           # the whole reference run through the small path
    qrels = _read(REF / qrels_file, (0, 2, 3), int)
    run = _read(REF / "results.test", (0, 2, 4), float)
    got, want = _both(qrels, run, MEASURES + IRM, rel_level=level)
    _same(got, want)
    if qrels_file == "qrels.test":          # and trec_eval's own per-topic values (-q, 4 decimals)
        seen = 0
        for line in (REF / "out.test.aq").read_text().splitlines():
            name, topic, value = line.split()
            if topic != "all" and name in ("map", "P_10", "recall_100", "recip_rank", "ndcg_cut_10"):
                key = {"P_10": "P.1,5,10,1000", "recall_100": "recall.5,100"}.get(name, name)
                if key != name:
                    key = "P@10" if name == "P_10" else "R@100"
                elif name == "ndcg_cut_10":
                    key = "nDCG@10"
                assert f"{got[topic][key]:.4f}" == value, (name, topic)
                seen += 1
        assert seen == 5 * len(run)


def test_reference_run_takes_the_small_path_per_topic():
    qrels = _read(REF / "qrels.test", (0, 2, 3), int)
    run = _read(REF / "results.test", (0, 2, 4), float)
    ev = Evaluator(qrels, MEASURES)
    for t in run:                            # one topic at a time: small calls, the default threshold
        one = {t: run[t]}
        assert small.evaluate_small(ev._small, ev._tindex, ev.topic_names, one) is not None
        _same(ev.evaluate(one), cranfield.evaluate(qrels, one, MEASURES, trec_labels=False).pipe(_as_dict))


def _as_dict(long) -> dict:
    out: dict = {}
    for r in long.itertuples():
        out.setdefault(r.topic, {})[r.measure] = r.value
    return out


_docs = st.sampled_from([f"d{i}" for i in range(12)] + ["D1", "é", "d10a", "", "z"])


@st.composite
def _case(draw):
    topics = draw(st.lists(st.sampled_from(["1", "2", "10", "q", "é"]), min_size=1, max_size=4, unique=True))
    qrels = {t: draw(st.dictionaries(_docs, st.integers(-2, 3), min_size=1, max_size=10)) for t in topics}
    score = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -0.0, 0.0, 1e-300, 2.5, 1e300]),
                      st.floats(-10, 10, allow_nan=False))
    run_topics = draw(st.lists(st.sampled_from(topics), min_size=1, max_size=len(topics), unique=True))
    run = {t: draw(st.dictionaries(_docs, score, min_size=1, max_size=14)) for t in run_topics}
    return qrels, run, draw(st.integers(0, 3))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_generated_small_runs_bit_identical(case):
    qrels, run, level = case
    got, want = _both(qrels, run, MEASURES + IRM, rel_level=level)
    _same(got, want)


def test_declines_what_it_does_not_cover():
    q = {"1": {"a": 1, "b": 0}, "2": {"a": 2}}
    ev = Evaluator(q, MEASURES)
    plan, ti, names = ev._small, ev._tindex, ev.topic_names
    for run in ({"1": {"a": float("nan")}}, {"1": {"a": float("inf")}}, {"1": {"a": "x"}}, {"1": {}},
                {"3": {"a": 1.0}}, {"1": {1: 1.0}}, {"1": {"a": "1_000"}}, {"1": {"a": 10**400}},
                {"1": {"a": True}}, {"1": {f"d{i}": 1.0 for i in range(small.SMALL_ROWS + 1)}}):
        assert small.evaluate_small(plan, ti, names, run) is None
    # the kernel's answers stand: an error naming the topic and document, a warning on an unknown topic
    with pytest.raises(cranfield.CranfieldError, match="topic 1, document a"):
        ev.evaluate({"1": {"a": float("nan")}})
    with pytest.warns(cranfield.InputWarning):
        ev.evaluate({"3": {"a": 1.0}, "1": {"a": 1.0}})
    # other measures, options or gains: no plan
    for kw in ({"measures": ["map", "bpref"]}, {"measures": MEASURES, "max_depth": 5},
               {"measures": MEASURES, "judged_only": True}, {"measures": MEASURES, "complete": True},
               {"measures": MEASURES, "gains": {1: 2}}, {"measures": ["ndcg_cut.10", "nDCG(dcg='exp-log2')@10"]}):
        kw = dict(kw)
        assert Evaluator(q, kw.pop("measures"), **kw)._small is None, kw


def test_measure_objects_are_hashed_once_per_evaluator(monkeypatch):
    irm = pytest.importorskip("ir_measures")
    from ir_measures.measures.base import Measure

    q = {f"q{t}": {f"d{d}": d % 3 for d in range(20)} for t in range(5)}
    r = {f"q{t}": {f"d{d}": float(d * 7 % 11) + d / 100 for d in range(30)} for t in range(5)}
    asked = [irm.AP, irm.P @ 10, irm.nDCG @ 10, irm.RR, irm.R @ 100, irm.P(rel=2) @ 5]
    ev = Evaluator(q, asked)
    calls = []
    real = Measure.__repr__
    monkeypatch.setattr(Measure, "__repr__", lambda self: calls.append(1) or real(self))
    for path in ("small", "kernel"):
        calls.clear()
        got = ev.evaluate(r)
        assert calls == [], path                 # no repr, so no hash, per call
        assert all(list(got[t]) == asked for t in got)
        for m in asked:                          # the caller's objects find their values
            assert got["q0"][m] == ev.evaluate(r)["q0"][m]
        ev._small = None
    monkeypatch.setattr(Measure, "__repr__", real)
    names = Evaluator(q, ["AP", "P@10", "nDCG@10", "RR", "R@100", "P(rel=2)@5"]).evaluate(r)
    assert [list(d.values()) for d in got.values()] == [list(d.values()) for d in names.values()]
    key = next(iter(got["q0"]))
    derived = key(rel=2)
    assert type(derived) is type(irm.AP) and derived == irm.AP(rel=2) and hash(derived) == hash(irm.AP(rel=2))
    import copy
    import pickle
    for c in (pickle.loads(pickle.dumps(key)), copy.deepcopy(key)):
        assert type(c) is type(irm.AP) and c == irm.AP and hash(c) == hash(irm.AP)
