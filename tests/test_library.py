"""The Python library surface (issue 20): input shapes, validation, ir_measures names, Evaluator, doctests."""
from __future__ import annotations

import doctest
import importlib
from collections import namedtuple

import numpy as np
import pandas as pd
import pytest

import cranfield
from engine.evaluation.adapters import Issues, as_qrels, as_runs
from engine.evaluation.api import Evaluator, evaluate
from engine.errors import CranfieldError


def _data(seed=1, topics=6, docs=60, ties=True):
    rng = np.random.default_rng(seed)
    qrows, rrows = [], []
    for t in range(topics):
        tid = str(301 + t)
        for d in rng.choice(120, 50, replace=False):
            qrows.append((tid, f"D{d}", int(rng.integers(0, 3))))
        for d in rng.choice(120, docs, replace=False):
            s = float(np.round(rng.random(), 1 if ties else 6))
            rrows.append((tid, f"D{d}", s))
    q = pd.DataFrame(qrows, columns=["topic", "doc", "grade"])
    r = pd.DataFrame(rrows, columns=["topic", "doc", "score"])
    return q, r


MEASURES = ["map", "P.10", "ndcg_cut.10", "recip_rank", "recall.100"]


def test_five_input_shapes_give_identical_results(tmp_path):
    q, r = _data()
    base = evaluate(q, r.assign(run="run"), MEASURES)
    Qrel = namedtuple("Qrel", "query_id doc_id relevance")
    Scored = namedtuple("ScoredDoc", "query_id doc_id score")
    qd = {t: dict(zip(g["doc"], g["grade"])) for t, g in q.groupby("topic")}
    rd = {t: dict(zip(g["doc"], g["score"])) for t, g in r.groupby("topic")}
    from engine.formats.qrels import write_qrels
    from engine.formats.runs import write_run
    write_qrels(tmp_path / "q.txt", q)
    write_run(tmp_path / "r.txt", r.assign(run="run"), "run")
    shapes = [
        (q.rename(columns={"topic": "query_id", "doc": "doc_id", "grade": "relevance"}),
         r.rename(columns={"topic": "query_id", "doc": "doc_id"})),                      # ir_measures
        (q.rename(columns={"topic": "qid", "doc": "docno", "grade": "label"}),
         r.rename(columns={"topic": "qid", "doc": "docno"}).assign(rank=0)),             # PyTerrier
        (qd, rd),                                                                         # pytrec_eval dicts
        (str(tmp_path / "q.txt"), str(tmp_path / "r.txt")),                              # paths
        ([Qrel(*x) for x in q.itertuples(index=False)], [Scored(*x) for x in r.itertuples(index=False)]),
    ]
    for qq, rr in shapes:
        got = evaluate(qq, rr, MEASURES)
        assert got["value"].tolist() == base["value"].tolist()
        assert got["topic"].tolist() == base["topic"].tolist()


def test_ranx_objects_give_identical_results():
    ranx = pytest.importorskip("ranx", reason="ranx is in the bench extra (its import compiles with numba)")
    q, r = _data()
    qd = {t: dict(zip(g["doc"], g["grade"].astype(int))) for t, g in q.groupby("topic")}
    rd = {t: dict(zip(g["doc"], g["score"])) for t, g in r.groupby("topic")}
    base = evaluate(q, r, MEASURES)
    got = evaluate(ranx.Qrels(qd), ranx.Run(rd, name="run"), MEASURES)
    assert got["value"].tolist() == base["value"].tolist()


def test_frame_defects_refused_or_warned_as_files():
    q, r = _data(ties=False)
    r = r.assign(run="r1")
    ok = evaluate(q, r, ["num_ret", "map"])
    # a run row repeated: the first occurrence is kept, with a warning (num_ret unchanged)
    w = Issues()
    dup = evaluate(q, pd.concat([r, r.iloc[:3]]), ["num_ret", "map"], issues=w)
    assert dup["value"].tolist() == ok["value"].tolist()
    assert sum("retrieved twice" in p.message for p in w) == 3
    # conflicting judgments: rule 'last', reported
    w = Issues()
    qq = pd.concat([q, q.iloc[[0]].assign(grade=9 - q["grade"].iat[0] % 2)])
    as_qrels(qq, issues=w)
    assert any("judged differently" in p.message and "rule 'last'" in p.message for p in w)
    # NaN and infinite scores, non-integer grades: errors
    for bad in (np.nan, np.inf):
        with pytest.raises(CranfieldError, match="finite"):
            evaluate(q, r.assign(score=r["score"].where(r.index != 4, bad)), ["map"])
        with pytest.raises(CranfieldError, match="finite"):
            Evaluator(q, ["map"]).evaluate({"301": {"a": bad}})
    with pytest.raises(CranfieldError, match="not an integer"):
        as_qrels(q.assign(grade=q["grade"].astype(float) + 0.5))
    # '0301' vs '301': a warning naming both, no silent match
    w = Issues()
    evaluate(q, r.assign(topic="0" + r["topic"]), ["map"], issues=w)
    assert any("'0301'" in p.message and "'301'" in p.message and "leading zeros" in p.message for p in w)
    # anything else: the expected column sets
    with pytest.raises(CranfieldError, match="expected one of these column sets"):
        as_runs(pd.DataFrame({"a": [1], "b": [2]}))


IR_NAMES = ["AP", "AP@10", "AP@100", "P@1", "P@5", "P@10", "P@20", "P(rel=2)@10", "R@10", "R@100", "R@1000",
            "RR", "RR(rel=2)", "nDCG", "nDCG@5", "nDCG@10", "nDCG@20", "Rprec", "Bpref", "NumQ", "NumRel",
            "NumRet", "SetP", "SetR", "SetF", "Success@1", "Success@5", "Success@10", "IPrec@0.1", "IPrec@0.5",
            "Judged@5", "Judged@10", "AP(rel=2)", "Rprec(rel=2)", "ERR@10", "ERR@20"]


@pytest.mark.parametrize("ties", [False, True])
def test_ir_measures_names_equal_ir_measures_values(ties):
    """Judged@k equals ir_measures with tied scores too: for it (as ir_measures' judged provider) ties go by
    ascending document id."""
    irm = pytest.importorskip("ir_measures")
    q, r = _data(seed=3, ties=ties)
    qrels = [irm.Qrel(t, d, int(g)) for t, d, g in q.itertuples(index=False)]
    run = [irm.ScoredDoc(t, d, float(s)) for t, d, s in r.itertuples(index=False)]
    ev = Evaluator(q, IR_NAMES)
    got = ev.evaluate({t: dict(zip(g["doc"], g["score"])) for t, g in r.groupby("topic")})
    assert len(IR_NAMES) >= 25
    for name in IR_NAMES:
        m = irm.parse_measure(name)
        want = {x.query_id: x.value for x in m.iter_calc(qrels, run)}
        for t, v in want.items():
            tol = 1e-5 if name.startswith("ERR") else 1e-9     # ir_measures runs gdeval.pl: 5 printed decimals
            assert got[t][name] == pytest.approx(v, abs=tol), (name, t)


def test_output_names_accepted_and_unknown_names_suggest():
    q, r = _data()
    a = evaluate(q, r, ["P.10", "ndcg_cut.10"])
    b = evaluate(q, r, ["P_10", "ndcg_cut_10"])
    assert a["value"].tolist() == b["value"].tolist()
    with pytest.raises(CranfieldError, match="subtopic"):      # diversity measures: subtopic judgments
        Evaluator(q, ["alpha_nDCG@20"])
    for bad, hint in (("nDGC@10", "nDCG"), ("APP", "AP"), ("recal@100", "recall.100")):
        with pytest.raises(CranfieldError, match="did you mean") as e:
            Evaluator(q, [bad])
        assert hint in str(e.value)


def test_evaluator_equals_engine_and_pytrec_eval_and_summaries_work():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    q, r = _data(seed=5)
    rd = {t: dict(zip(g["doc"], g["score"])) for t, g in r.groupby("topic")}
    ev = Evaluator(q, MEASURES)
    got = ev.evaluate(rd)
    pe = pytrec_eval.RelevanceEvaluator({t: dict(zip(g["doc"], g["grade"])) for t, g in q.groupby("topic")},
                                        {"map", "P.10", "ndcg_cut.10", "recip_rank", "recall.100"}).evaluate(rd)
    for t in pe:
        for mine, theirs in (("map", "map"), ("P.10", "P_10"), ("ndcg_cut.10", "ndcg_cut_10"),
                             ("recip_rank", "recip_rank"), ("recall.100", "recall_100")):
            assert got[t][mine] == pytest.approx(pe[t][theirs], abs=1e-12)
    frame = ev.evaluate(rd, frame=True)
    eng = cranfield.evaluate(q, r, MEASURES)
    assert sorted(frame["value"].round(12)) == sorted(eng["value"].round(12))
    # everything the README names works on what evaluate returns
    s = cranfield.summarize(eng)
    assert set(s.columns) == {"map", "P_10", "ndcg_cut_10", "recip_rank", "recall_100"}   # trec_eval's order
    lines = cranfield.trec_eval_lines(eng)
    assert lines[0].startswith("map") and lines[0].endswith(f"{s['map'].iat[0]:.4f}")
    mixed = cranfield.evaluate(q, r, ["AP", "nDCG@10"])
    assert list(cranfield.summarize(mixed).columns) == ["AP", "nDCG@10"]
    assert cranfield.trec_eval_lines(mixed)[0].split()[0] == "AP"


def test_measures_table_is_the_cli_table(capsys):
    from cranfield.cli import main
    t = cranfield.measures()
    assert {"map", "P", "ndcg_cut", "judged"} <= set(t["name"])
    main(["measures"])
    out = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in out if not ln.startswith(" ")] == t["name"].tolist()   # parameters indented


@pytest.mark.parametrize("mod", ["cranfield", "engine.evaluation.api", "engine.measures.names", "engine.evaluation.adapters"])
def test_docstring_examples_run(mod):
    res = doctest.testmod(importlib.import_module(mod), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
