"""Every dialect of the ecosystem (issue 37): ir_measures' measure objects wherever names are taken (objects in,
objects out), ranx's metric names and objects, trectools' objects and frames, file objects and text streams,
and honest NaN aggregates. Values are checked against the string form, hand computations and, where
installed, the libraries themselves."""
from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cranfield

irm = pytest.importorskip("ir_measures", reason="ir_measures measure objects need ir_measures")

DOCS = Path(__file__).parent.parent / "docs" / "ir_measures.md"
DIVERSITY = {"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "P_IA", "AP_IA", "StRecall", "NRBP", "nNRBP", "MAP_IA",
             "α_nDCG"}
# documented names that need a parameter ir_measures' parser cannot take as written in the table
CONCRETE = {"Precision@k": "Precision@10", "Recall@k": "Recall@10", "NERR8": "NERR8(max_rel=3)@10",
            "NERR11": "NERR11(max_rel=3)", "α_nDCG": "α_nDCG@20"}


def _documented() -> list[str]:
    names_section = DOCS.read_text(encoding="utf-8").split("## Names", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in names_section.splitlines() if line.startswith("| ir_measures")]
    names = [n for line in rows for n in re.findall(r"`([^`]+)`", line)]
    assert len(names) > 50
    return [CONCRETE.get(n, n) for n in names]


def _case(seed=0):
    rng = np.random.default_rng(seed)
    qrels, run, sub = {}, {}, []
    for t in range(5):
        docs = [f"d{i:02d}" for i in rng.choice(30, 14, replace=False)]
        qrels[f"t{t}"] = {d: int(rng.choice([0, 0, 1, 2, 3])) for d in docs}
        for d in docs:
            for s in (1, 2):
                sub.append((f"t{t}", str(s), d, int(rng.choice([0, 1]))))
        run[f"t{t}"] = {f"d{i:02d}": float(rng.integers(0, 9)) for i in rng.choice(30, 20, replace=False)}
    sub = pd.DataFrame(sub, columns=["query_id", "iteration", "doc_id", "relevance"])
    return qrels, run, sub


@pytest.mark.parametrize("name", _documented())
def test_every_documented_measure_as_object_and_as_string(name):
    qrels, run, sub = _case()
    obj = irm.parse_measure(name)
    q = sub if obj.NAME in DIVERSITY or name.split("@")[0] in DIVERSITY else qrels
    by_name = cranfield.Evaluator(q, [name]).evaluate(run)
    by_obj = cranfield.Evaluator(q, [obj]).evaluate(run)
    assert by_name.keys() == by_obj.keys() and by_name
    for t in by_name:
        assert list(by_obj[t]) == [obj]                                  # objects in, objects out
        a, b = by_name[t][name], by_obj[t][obj]
        assert (math.isnan(a) and math.isnan(b)) or a == b
    long = cranfield.evaluate(q, run, [obj])                             # frames: objects labelled by name
    assert list(long["measure"].unique()) == [str(obj)]
    assert long["value"].tolist() == pytest.approx([by_obj[t][obj] for t in sorted(by_obj)], nan_ok=True)


def test_objects_in_evaluate_evaluator_and_compare_keep_the_callers_keys():
    from ir_measures import AP, P, nDCG
    qrels, run, _ = _case(1)
    asked = [AP, nDCG @ 10, P(rel=2) @ 5, "AP", "P.5"]
    ev = cranfield.Evaluator(qrels, asked).evaluate(run)
    t = next(iter(ev))
    assert set(ev[t]) == {AP, nDCG @ 10, P(rel=2) @ 5, "AP", "P.5"}
    assert ev[t][AP] == ev[t]["AP"]
    assert ev[t][P(rel=2) @ 5] == cranfield.Evaluator(qrels, ["P(rel=2)@5"]).evaluate(run)[t]["P(rel=2)@5"]
    summary = cranfield.summarize(cranfield.evaluate(qrels, run, asked))
    assert sorted(summary.columns) == sorted(["AP", "nDCG@10", "P(rel=2)@5", "P_5"])
    assert summary["AP"].iloc[0] == pytest.approx(np.mean([v[AP] for v in ev.values()]))
    exp = cranfield.compare([run, run], qrels, [AP, nDCG @ 10], baseline=0).experiment()
    assert list(exp.columns[:3]) == ["name", "AP", "nDCG@10"]          # pt.Experiment labels objects by name
    assert exp["AP"].iloc[0] == pytest.approx(summary["AP"].iloc[0])


# ------------------------------------------------------------------ ranx
def _hits(ranking: dict, judged: dict, k: int) -> int:
    top = sorted(ranking, key=lambda d: (-ranking[d], d))[:k]
    return sum(1 for d in top if judged.get(d, 0) >= 1)


def test_ranx_metric_names():
    qrels = {"q1": {"a": 1, "b": 1, "c": 0, "e": 2}, "q2": {"x": 1}}
    run = {"q1": {"a": 5.0, "c": 4.0, "b": 3.0, "d": 2.0}, "q2": {"y": 2.0, "x": 1.0}}
    names = ["hits@3", "hits@1", "precision@3", "recall@3", "f1@3", "mrr@1", "map@3", "ndcg@3", "hit_rate@1",
             "r-precision", "bpref", "ndcg_burges@3", "precision", "recall@10"]
    got = cranfield.Evaluator(qrels, names).evaluate(run)
    assert got["q1"]["hits@3"] == 2.0 and got["q2"]["hits@3"] == 1.0 and got["q2"]["hits@1"] == 0.0
    assert got["q1"]["precision@3"] == pytest.approx(2 / 3) and got["q1"]["recall@3"] == pytest.approx(2 / 3)
    assert got["q1"]["f1@3"] == pytest.approx(2 / 3)
    assert got["q2"]["f1@3"] == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert got["q2"]["mrr@1"] == 0.0 and got["q1"]["mrr@1"] == 1.0 and got["q2"]["hit_rate@1"] == 0.0
    assert got["q1"]["map@3"] == pytest.approx((1 + 2 / 3) / 3)
    assert got["q1"]["precision"] == pytest.approx(2 / 4)                    # no cut-off: every retrieved
    assert got["q1"]["r-precision"] == pytest.approx(2 / 3)
    for t, judged in qrels.items():
        assert got[t]["hits@3"] == _hits(run[t], judged, 3)
    same = cranfield.Evaluator(qrels, ["nDCG@3", "nDCG(dcg='exp-log2')@3", "Bpref"]).evaluate(run)
    assert got["q1"]["ndcg@3"] == same["q1"]["nDCG@3"] and got["q1"]["bpref"] == same["q1"]["Bpref"]
    assert got["q1"]["ndcg_burges@3"] == same["q1"]["nDCG(dcg='exp-log2')@3"]
    long = cranfield.evaluate(qrels, run, ["hits@3", "map"])
    assert long.attrs["aggregates"]["hits@3"] == "mean"
    assert cranfield.summarize(long)["hits@3"].iloc[0] == 1.5


class _RanxQrels:
    """A stand-in with ranx.Qrels' shape (its module is ranx's, it converts with to_dict)."""
    __module__ = "ranx.data_structures.qrels"

    def __init__(self, d):
        self._d = d

    def to_dict(self):
        return self._d


_RanxQrels.__name__ = _RanxQrels.__qualname__ = "Qrels"


class _RanxRun(_RanxQrels):
    __module__ = "ranx.data_structures.run"

    def __init__(self, d, name=None):
        super().__init__(d)
        self.name = name


_RanxRun.__name__ = _RanxRun.__qualname__ = "Run"


def test_ranx_objects_stand_ins():
    qrels, run, _ = _case(2)
    want = cranfield.Evaluator(qrels, ["hits@5", "ndcg@10"]).evaluate(run)
    got = cranfield.evaluate(_RanxQrels(qrels), _RanxRun(run, "bm25"), ["hits@5", "ndcg@10"])
    assert set(got["run"]) == {"bm25"}
    assert {(r.topic, r.measure): r.value for r in got.itertuples()} == {
        (t, m): v for t, d in want.items() for m, v in d.items()}


def test_ranx_itself_when_installed():
    ranx = pytest.importorskip("ranx", reason="ranx (bench extra, numba) not installed: stand-ins above")
    qrels, run, _ = _case(3)
    rng = np.random.default_rng(3)        # distinct scores: tied scores are ordered as trec_eval orders them
    run = {t: {d: float(rng.random()) for d in v} for t, v in run.items()}
    names = ["hits@5", "precision@10", "recall@10", "f1@10", "mrr", "map@10", "ndcg@10", "ndcg_burges@10",
             "hit_rate@5", "r-precision", "bpref"]
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, return_mean=False, make_comparable=True)
    got = cranfield.Evaluator(qrels, names).evaluate(run)
    topics = sorted(qrels)
    for n in names:
        assert [got[t][n] for t in topics] == pytest.approx(list(want[n]), abs=1e-9), n


# ------------------------------------------------------------------ trectools and streams
class TrecQrel:
    """A stand-in with trectools' TrecQrel shape (qrels_data: query, q0, docid, rel)."""

    def __init__(self, df):
        self.qrels_data, self.filename = df, "qrels"


class TrecRun:
    """A stand-in with trectools' TrecRun shape (run_data: query, q0, docid, rank, score, system)."""

    def __init__(self, df):
        self.run_data, self.filename = df, "run"


def _trectools_frames(qrels: dict, run: dict, system="sys"):
    q = pd.DataFrame([(t, 0, d, g) for t, v in qrels.items() for d, g in v.items()],
                     columns=["query", "q0", "docid", "rel"])
    r = pd.DataFrame([(t, "Q0", d, i + 1, s, system) for t, v in run.items()
                      for i, (d, s) in enumerate(sorted(v.items(), key=lambda x: -x[1]))],
                     columns=["query", "q0", "docid", "rank", "score", "system"])
    return q, r


def test_trectools_objects_and_frames():
    qrels, run, _ = _case(4)
    want = cranfield.evaluate(qrels, run, ["map", "P.5"])
    q, r = _trectools_frames(qrels, run)
    for qq, rr in ((q, r), (TrecQrel(q), TrecRun(r))):
        got = cranfield.evaluate(qq, rr, ["map", "P.5"])
        assert set(got["run"]) == {"sys"}
        assert got["value"].tolist() == want["value"].tolist()
    exp = cranfield.compare([TrecRun(r), TrecRun(r.assign(system="b"))], TrecQrel(q), ["map"], baseline=0)
    assert exp.experiment()["map"].tolist() == pytest.approx([want[want.measure == "map"]["value"].mean()] * 2)


def test_file_objects_and_text_streams(tmp_path):
    qtext = "1 0 a 1\n1 0 b 0\n2 0 c 2\n"
    rtext = "1 Q0 b 1 2.0 sys\n1 Q0 a 2 1.0 sys\n2 Q0 c 1 1.0 sys\n"
    want = cranfield.evaluate({"1": {"a": 1, "b": 0}, "2": {"c": 2}}, {"1": {"b": 2.0, "a": 1.0}, "2": {"c": 1.0}},
                              ["map"])["value"].tolist()
    assert want == [0.5, 1.0]
    assert cranfield.evaluate(io.StringIO(qtext), io.StringIO(rtext), ["map"])["value"].tolist() == want
    (tmp_path / "q.txt").write_text(qtext)
    (tmp_path / "r.txt").write_text(rtext)
    with open(tmp_path / "q.txt") as fq, open(tmp_path / "r.txt", "rb") as fr:
        assert cranfield.Evaluator(fq, ["map"]).evaluate(fr) == {"1": {"map": 0.5}, "2": {"map": 1.0}}
    with pytest.raises(cranfield.CranfieldError, match="q.txt"):
        with open(tmp_path / "q.txt", "w") as f:
            f.write("1 0 a x\n")
        with open(tmp_path / "q.txt") as fq:
            cranfield.evaluate(fq, io.StringIO(rtext), ["map"])


# ------------------------------------------------------------------ NaN kept, as the peers keep it
def test_accuracy_through_the_provider_equals_ir_measures():
    from ir_measures import Accuracy
    q = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}}
    r = {"q1": {"d1": 2.0, "d2": 1.0}}                # q2 left out of the run
    want = irm.calc_aggregate([Accuracy()], q, r)[Accuracy()]
    cranfield.register_ir_measures()
    try:
        got = irm.calc_aggregate([Accuracy()], q, r)[Accuracy()]
    finally:
        cranfield.unregister_ir_measures()
    assert want == got == 1.0


def test_summarize_keeps_nan_and_empty_inputs_give_nan():
    df = cranfield.evaluate({"q1": {"d1": 0}}, {"q1": {"d1": 1.0}}, ["Accuracy", "AP"])
    s = cranfield.summarize(df)
    assert math.isnan(s["Accuracy"].iloc[0]) and s["AP"].iloc[0] == 0.0
    empty = cranfield.summarize(cranfield.evaluate({}, {"q1": {"d1": 1.0}}, ["AP", "P@5"]))
    assert list(empty.columns) == ["AP", "P@5"] and empty.isna().all().all()
    want = irm.calc_aggregate([irm.AP, irm.P @ 5], {}, {"q1": {"d1": 1.0}})
    assert all(math.isnan(v) for v in want.values())
