"""One test per row of the deliberate-differences table in docs/ir_measures.md: where Cranfield, asked by an
ir_measures name, gives something other than ir_measures' default provider, and why."""
from __future__ import annotations

import warnings

import pytest

import cranfield

irm = pytest.importorskip("ir_measures", reason="ir_measures is the other side of each row (pip install ir_measures)")


def _irm(name, qrels, run, provider=None):
    m = irm.parse_measure(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = irm.providers.registry[provider] if provider else irm
        return {x.query_id: x.value for x in src.iter_calc([m], qrels, run)}


def test_row1_judged_on_an_empty_ranking_is_zero():
    q = {"1": {"a": 1}, "2": {"b": 1}}
    r = {"1": {"a": 1.0}, "2": {}}
    with pytest.raises(ZeroDivisionError):
        _irm("Judged@10", q, r)
    assert cranfield.Evaluator(q, ["Judged@10"]).evaluate(r) == {"1": {"Judged@10": 1.0}, "2": {"Judged@10": 0.0}}


def test_row2_accuracy_when_every_retrieved_document_is_relevant_is_one():
    q = {"1": {"a": 1, "b": 1, "c": 0}}
    r = {"1": {"a": 2.0, "b": 1.0}}
    with pytest.raises(ZeroDivisionError):
        _irm("Accuracy", q, r, "accuracy")
    assert cranfield.Evaluator(q, ["Accuracy"]).evaluate(r)["1"]["Accuracy"] == 1.0


def test_row3_topics_the_run_does_not_name_are_left_out_unless_complete():
    q = {"1": {"a": 1}, "2": {"b": 1, "c": 1}}
    r = {"1": {"a": 1.0}}
    assert _irm("NumRel", q, r) == {"1": 1.0, "2": 0.0}          # ir_measures: 0 for every measure
    assert cranfield.Evaluator(q, ["NumRel", "AP"]).evaluate(r) == {"1": {"NumRel": 1.0, "AP": 1.0}}
    full = cranfield.Evaluator(q, ["NumRel", "AP"], complete=True).evaluate(r)
    assert full["2"] == {"NumRel": 2.0, "AP": 0.0}               # trec_eval -c: the topic's own count
    # compare (pt.Experiment's semantics) averages over every judged topic
    res = cranfield.compare({"x": r, "y": r}, q, ["AP"], baseline="x")
    assert res.means["AP"].tolist() == [0.5, 0.5]


def test_row4_negative_grades_are_not_judged():
    q = {"1": {"a": -1, "b": 1}}
    r = {"1": {"a": 2.0, "b": 1.0}}
    assert _irm("Judged@2", q, r) == {"1": 1.0}                  # ir_measures: in the qrels = judged
    assert cranfield.Evaluator(q, ["Judged@2"]).evaluate(r)["1"]["Judged@2"] == 0.5   # trec_eval: unjudged


def test_row5_cwl_measures_order_ties_as_trec_eval():
    p = irm.providers.registry["cwl_eval"]
    if not p.is_available():
        pytest.skip("ir_measures' cwl_eval provider is not installed (pip install cwl-eval)")
    q = {"1": {"a": 3, "b": 0, "c": 1}}
    tied = {"1": {"a": 1.0, "b": 1.0, "c": 1.0}}                  # input order a, b, c
    trec_order = {"1": {"c": 1.0, "b": 1.0, "a": 1.0}}            # document id descending
    name = "INST(max_rel=3)"
    ours = cranfield.Evaluator(q, [name]).evaluate(tied)["1"][name]
    assert ours == pytest.approx(_irm(name, q, trec_order, "cwl_eval")["1"])
    assert ours != pytest.approx(_irm(name, q, tied, "cwl_eval")["1"])


def test_row6_graded_rbp_rescales_grades_and_persistence_is_ir_measures():
    q = {"1": {"a": 3, "b": 1, "c": 0}}
    r = {"1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    got = cranfield.Evaluator(q, ["RBP", "RBP(p=0.5)"]).evaluate(r)["1"]
    assert got["RBP"] == pytest.approx(0.2 * (3 / 3 + 0.8 * 1 / 3))       # p = 0.8, gains grade / 3
    assert got["RBP(p=0.5)"] == pytest.approx(0.5 * (1 + 0.5 / 3))
    p = irm.providers.registry["cwl_eval"]
    if p.is_available():                                         # binary RBP(rel=k): cwl_eval's
        assert cranfield.Evaluator(q, ["RBP(rel=1)"]).evaluate(r)["1"]["RBP(rel=1)"] == \
            pytest.approx(_irm("RBP(rel=1)", q, r, "cwl_eval")["1"])


def test_row7_err_without_a_cut_off_is_err_over_the_whole_ranking():
    q = {"1": {"a": 2, "b": 0, "c": 1}}
    r = {"1": {d: float(30 - i) for i, d in enumerate([f"x{i}" for i in range(25)] + ["a", "c"])}}
    with pytest.raises(ValueError):
        irm.calc_aggregate([irm.parse_measure("ERR")], q, r)      # no ir_measures provider computes it
    got = cranfield.Evaluator(q, ["ERR", "ERR@20", "ERR@30"]).evaluate(r)["1"]
    R = lambda g: (2 ** g - 1) / 16                               # noqa: E731  gdeval's R, grades 0-4
    want = R(2) / 26 + (1 - R(2)) * R(1) / 27
    assert got["ERR"] == pytest.approx(want) and got["ERR@30"] == got["ERR"] and got["ERR@20"] == 0.0


def test_row8_set_measures_at_k_use_the_first_k_documents():
    q = {"1": {"a": 1, "b": 0, "c": 1}}
    r = {"1": {"a": 0.9, "b": 0.8, "c": 0.7}}
    with pytest.raises(AssertionError):
        irm.parse_measure("SetP@2").validate_params()             # ir_measures 0.4.3 refuses the form
    got = cranfield.Evaluator(q, ["SetP@2", "SetP@10", "SetR@2", "SetF@2", "P@10"]).evaluate(r)["1"]
    assert got == {"SetP@2": 0.5, "SetP@10": pytest.approx(2 / 3), "SetR@2": 0.5, "SetF@2": 0.5,
                   "P@10": pytest.approx(0.2)}


def test_row9_iprec_follows_pytrec_eval_iprec_at_recall_trec_eval_10():
    q = {"1": {d: 1 for d in "abcdefg"}}
    r = {"1": {"a": 1.0, "x": 0.9, "b": 0.8}}
    got = cranfield.Evaluator(q, ["IPrec@0.3", "iprec_at_recall.0.30"]).evaluate(r)["1"]
    assert got["IPrec@0.3"] == _irm("IPrec@0.3", q, r)["1"] == 0.0
    assert got["iprec_at_recall.0.30"] == pytest.approx(2 / 3)


def test_row10_gains_must_be_integers():
    with pytest.raises(cranfield.CranfieldError, match="integers"):
        cranfield.Evaluator({"1": {"a": 1}}, ["nDCG(gains={1:0.5})@10"]).evaluate({"1": {"a": 1.0}})
