"""docs/ir_measures.md's call-shape table: one test per row, each the row's call as a user of that library writes
it, checked against that library where it is installed (else against Cranfield's own call on the same data)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import cranfield


def _data(seed=0):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{i}": int(rng.integers(0, 3)) for i in rng.choice(30, 12, replace=False)} for t in range(4)}
    run = {f"q{t}": {f"d{i}": float(rng.random()) for i in rng.choice(30, 20, replace=False)} for t in range(4)}
    return qrels, run


def test_row_ir_measures():
    irm = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, nDCG
    qrels, run = _data(1)
    want = irm.calc_aggregate([AP, nDCG @ 10, P(rel=2) @ 5], qrels, run)
    got = cranfield.summarize(cranfield.evaluate(qrels, run, [AP, nDCG @ 10, P(rel=2) @ 5]))
    per = cranfield.Evaluator(qrels, [AP, nDCG @ 10, P(rel=2) @ 5]).evaluate(run)
    for m in want:
        assert got[str(m)].iloc[0] == pytest.approx(want[m])
        assert np.mean([per[t][m] for t in per]) == pytest.approx(want[m])
    cranfield.register_ir_measures()
    try:
        assert irm.calc_aggregate([AP, nDCG @ 10], qrels, run) == pytest.approx({AP: want[AP], nDCG @ 10: want[nDCG @ 10]})
    finally:
        cranfield.unregister_ir_measures()


def test_row_pyterrier():
    from ir_measures import AP, nDCG
    qrels, run = _data(2)
    frames = [pd.DataFrame([(t, d, s * k) for t, v in run.items() for d, s in v.items()],
                           columns=["qid", "docno", "score"]) for k in (1.0, -1.0)]
    topics = pd.DataFrame({"qid": ["q0", "q1", "q2"], "query": ["a", "b", "c"]})
    df = cranfield.Experiment(frames, topics, pd.DataFrame(
        [(t, d, g) for t, v in qrels.items() for d, g in v.items()], columns=["qid", "docno", "label"]),
        [AP, nDCG @ 10], names=["bm25", "rev"], baseline=0, correction="holm")
    per = cranfield.Evaluator({t: qrels[t] for t in ("q0", "q1", "q2")}, [AP]).evaluate(run)
    assert df.loc[0, "AP"] == pytest.approx(np.mean([v[AP] for v in per.values()]))
    assert list(df.columns[:3]) == ["name", "AP", "nDCG@10"] and "AP p-value corrected" in df.columns


def test_row_pytrec_eval():
    qrels, run = _data(3)
    ours = cranfield.RelevanceEvaluator(qrels, {"map", "P.5", "ndcg_cut.10", "gm_map"}, relevance_level=2).evaluate(run)
    assert set(ours["q0"]) == {"map", "P_5", "ndcg_cut_10", "gm_map"}
    assert ours["q0"]["gm_map"] == pytest.approx(math.log(max(ours["q0"]["map"], 1e-5)))
    try:
        import pytrec_eval
    except ImportError:
        return
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.5", "ndcg_cut.10", "gm_map"}, relevance_level=2)
    want = ev.evaluate(run)
    assert ours == {t: pytest.approx(v) for t, v in want.items()}


class TrecQrel:
    """trectools' TrecQrel shape."""

    def __init__(self, df):
        self.qrels_data = df


class TrecRun:
    """trectools' TrecRun shape."""

    def __init__(self, df):
        self.run_data = df


def test_row_trectools():
    qrels, run = _data(4)
    q = TrecQrel(pd.DataFrame([(t, 0, d, g) for t, v in qrels.items() for d, g in v.items()],
                              columns=["query", "q0", "docid", "rel"]))
    r = TrecRun(pd.DataFrame([(t, "Q0", d, 0, s, "mine") for t, v in run.items() for d, s in v.items()],
                             columns=["query", "q0", "docid", "rank", "score", "system"]))
    got = cranfield.summarize(cranfield.evaluate(q, r, ["map", "P.10", "ndcg_cut.10"]))
    want = cranfield.summarize(cranfield.evaluate(qrels, {"mine": run}, ["map", "P.10", "ndcg_cut.10"]))
    pd.testing.assert_frame_equal(got, want)


def test_row_ranx():
    qrels, run = _data(5)
    names = ["hits@5", "precision@5", "recall@10", "f1@10", "mrr", "map@10", "ndcg@10", "ndcg_burges@10"]
    try:
        import ranx
    except ImportError:
        got = cranfield.Evaluator(qrels, names).evaluate(run)
        p5 = cranfield.Evaluator(qrels, ["P@5"]).evaluate(run)
        assert all(got[t]["hits@5"] == round(5 * p5[t]["P@5"]) for t in got)
        return
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, make_comparable=True)
    got = cranfield.summarize(cranfield.evaluate(ranx.Qrels(qrels), ranx.Run(run, name="r"), names))
    assert {n: got[n].iloc[0] for n in names} == pytest.approx(want)
