"""`compare` / `cranfield.Experiment` = PyTerrier's `pt.Experiment` (engine/campaign/pt_experiment.py):
PyTerrier's Experiment tests that need no Java (github terrier-org/pyterrier, tests/base_experiment.py) ported
as data with their expected values - retrieval replaced by the result frames it would give - and every
correction against statsmodels (test-only oracle) or hand-computed values."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import cranfield
from cranfield import Experiment

NO_OVERLAP = ("There is no overlap between the qids found in the topics and qrels. If this is intentional, set "
              "filter_by_topics=False and filter_by_qrels=False.")


def test_irm_APrel2():
    from ir_measures import AP, P
    topics = pd.DataFrame([["q1", "q1"], ["q2", "q1"]], columns=["qid", "query"])
    res1 = pd.DataFrame([["q1", "d1", 1.0], ["q2", "d1", 2.0]], columns=["qid", "docno", "score"])
    qrels = pd.DataFrame([["q1", "d1", 1], ["q2", "d1", 2]], columns=["qid", "docno", "label"])
    assert Experiment([res1], topics, qrels, [AP(rel=2)]).iloc[0]["AP(rel=2)"] == 0.5
    df = Experiment([res1], topics, qrels, [AP, AP(rel=2), P(rel=2) @ 1])
    assert (df.iloc[0]["AP"], df.iloc[0]["AP(rel=2)"], df.iloc[0]["P(rel=2)@1"]) == (1, 0.5, 0.5)
    df = Experiment([res1], topics, qrels, [AP, AP(rel=2), P(rel=2) @ 1], perquery=True)
    val = {(m, q): v for m, q, v in zip(df.measure, df.qid, df.value)}
    assert val == {("AP", "q1"): 1, ("AP", "q2"): 1, ("AP(rel=2)", "q1"): 0, ("AP(rel=2)", "q2"): 1,
                   ("P(rel=2)@1", "q1"): 0, ("P(rel=2)@1", "q2"): 1}
    assert list(df.columns) == ["name", "qid", "measure", "value"]


# (qrel topics, topics, filter_by_qrels, filter_by_topics, per-query P@2 or the error)
DIFFERING = [
    (["1", "2"], ["1", "2"], True, True, {"1": 1.0, "2": 0.5}),
    (["1", "2"], ["1", "2"], True, False, {"1": 1.0, "2": 0.5}),
    (["1", "2"], ["1", "2"], False, True, {"1": 1.0, "2": 0.5}),
    (["1", "2"], ["1", "2"], False, False, {"1": 1.0, "2": 0.5}),
    (["1", "2"], ["1"], True, True, {"1": 1.0}),
    (["1", "2"], ["1"], True, False, {"1": 1.0, "2": 0.}),
    (["1", "2"], ["1"], False, True, {"1": 1.0}),
    (["1", "2"], ["1"], False, False, {"1": 1.0, "2": 0.}),
    (["1"], ["1", "2"], True, True, {"1": 1.0}),
    (["1"], ["1", "2"], True, False, {"1": 1.0}),
    (["1"], ["1", "2"], False, True, {"1": 1.0, "2": math.nan}),
    (["1"], ["1", "2"], False, False, {"1": 1.0, "2": math.nan}),
    (["1", "2"], ["2", "3"], True, True, {"2": 0.5}),
    (["1", "2"], ["2", "3"], True, False, {"1": 0.0, "2": 0.5}),
    (["1", "2"], ["2", "3"], False, True, {"2": 0.5, "3": math.nan}),
    (["1", "2"], ["2", "3"], False, False, {"1": 0.0, "2": 0.5, "3": math.nan}),
    (["1"], ["3"], True, True, NO_OVERLAP),
    (["1"], ["3"], True, False, NO_OVERLAP),
    (["1"], ["3"], False, True, NO_OVERLAP),
    (["1"], ["3"], False, False, {"1": 0.0, "3": math.nan}),
]
QRELS = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["10703", "1056", "9374"], "label": [1, 1, 1]})
# what BM25 retrieves for the topics (the first two documents decide P@2)
RETRIEVED = {"1": [("10703", 9.0), ("1056", 8.0), ("2", 7.0)], "2": [("9374", 9.0), ("7", 8.0), ("8", 1.0)],
             "3": [("5", 3.0), ("9374", 2.0)]}


@pytest.mark.parametrize("qrel_qids,topic_qids,by_qrels,by_topics,want", DIFFERING)
def test_differing_queries(qrel_qids, topic_qids, by_qrels, by_topics, want):
    from ir_measures import P
    topics = pd.DataFrame({"qid": topic_qids, "query": ["q"] * len(topic_qids)})
    qrels = QRELS[QRELS.qid.isin(qrel_qids)]
    run = pd.DataFrame([(q, d, s) for q in topic_qids for d, s in RETRIEVED[q]], columns=["qid", "docno", "score"])
    kw = {"filter_by_qrels": by_qrels, "filter_by_topics": by_topics}
    if isinstance(want, str):
        for perquery in (True, False):
            with pytest.raises(ValueError) as e:
                Experiment([run], topics, qrels, [P @ 2, "P"], perquery=perquery, **kw)
            assert e.value.args == (want,)
        return
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = Experiment([run], topics, qrels, [P @ 2, "P"], perquery=True, **kw)
    if any(math.isnan(v) for v in want.values()):
        assert ("1 topic(s) not found in qrels. Scores for these topics are given as NaN and should not contribute "
                "to averages.") in [str(x.message) for x in w]
    res = res[res["measure"] == "P@2"].drop(columns=["name", "measure"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(res, pd.DataFrame([{"qid": q, "value": v} for q, v in want.items()]))
    mean = Experiment([run], topics, qrels, [P @ 2, "P"], **kw).loc[0, "P@2"]
    have = [v for v in want.values() if not math.isnan(v)]
    assert mean == pytest.approx(sum(have) / len(have))


def test_various_metrics_labels():
    """What is asked -> the column pt.Experiment gives (a nickname's members by ir_measures' names)."""
    rng = np.random.default_rng(0)
    qrels = {str(t): {f"d{i}": int(rng.integers(0, 2)) for i in range(20)} for t in range(5)}
    res = [{t: {f"d{i}": float(rng.random()) for i in range(30)} for t in qrels} for _ in range(2)]
    family2measure = {"ndcg_cut_5": "ndcg_cut_5", "P": "P@5", "P_5": "P_5", "iprec_at_recall": "IPrec@0.0",
                      "official": "AP", "set": "SetP", "recall": "R@5", "recall_1000": "recall_1000"}
    family2black = {"ndcg_cut_5": "ndcg_cut_10", "P_5": "P_100", "recall_1000": "recall_5"}
    for m, col in family2measure.items():
        df1 = Experiment(res, None, qrels, [m])
        df2 = Experiment(res, None, qrels, [m], baseline=0)
        df3 = Experiment(res, None, qrels, [m], perquery=True)
        assert col in df1.columns and col in df2.columns and (df3["measure"] == col).any()
        if m in family2black:
            bad = family2black[m]
            assert bad not in df1.columns and bad not in df2.columns and not (df3["measure"] == bad).any()


def _pair_case():
    topics = pd.DataFrame([["q1", "q1"], ["q2", "q1"]], columns=["qid", "query"])
    res1 = pd.DataFrame([["q2", "d1", 2.0], ["q1", "d1", 1.0]], columns=["qid", "docno", "score"])
    res2 = pd.DataFrame([["q1", "d1", 1.0], ["q2", "d1", 2.0]], columns=["qid", "docno", "score"])
    qrels = pd.DataFrame([["q1", "d1", 1], ["q2", "d3", 1]], columns=["qid", "docno", "label"])
    return topics, res1, res2, qrels


def test_differing_order():
    topics, res1, res2, qrels = _pair_case()
    m = Experiment([res1, res2], topics, qrels, ["map"], baseline=0)
    assert (m.iloc[0]["map"], m.iloc[1]["map"], m.iloc[1]["map +"], m.iloc[1]["map -"]) == (0.5, 0.5, 0, 0)


def test_dict_retr_systems():
    topics, res1, res2, qrels = _pair_case()
    runs = {"bm25": res1, "dph": res2}
    m = Experiment(runs, topics, qrels, ["map"], baseline="bm25", names=["ignored"])
    assert m["name"].tolist() == ["bm25", "dph"]
    assert (m.iloc[0]["map"], m.iloc[1]["map"], m.iloc[1]["map +"], m.iloc[1]["map -"]) == (0.5, 0.5, 0, 0)
    with pytest.raises(ValueError):
        Experiment(runs, topics, qrels, ["map"], baseline="unknown")
    with pytest.raises(ValueError):
        cranfield.compare(runs, qrels, ["map"], baseline="unknown")
    with pytest.raises(TypeError):
        Experiment([res1, res2], topics, qrels, ["map"], baseline="bm25")


def test_topics_restrict_the_judgments_as_pt_experiment():
    """The brief's case: qrels for q1-q3, a run for q1-q2, topics q1-q2: map 0.75 (0.5 over every judged topic)."""
    qrels = pd.DataFrame([["q1", "d1", 1], ["q2", "d1", 1], ["q3", "d1", 1]], columns=["qid", "docno", "label"])
    run = pd.DataFrame([["q1", "d1", 1.0], ["q2", "d2", 2.0], ["q2", "d1", 1.0]], columns=["qid", "docno", "score"])
    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["a", "b"]})
    assert Experiment([run], topics, qrels, ["map"]).loc[0, "map"] == 0.75
    assert cranfield.compare([run], qrels, ["map"], topics=topics).experiment().loc[0, "map"] == 0.75
    assert cranfield.compare([run], qrels, ["map"]).experiment().loc[0, "map"] == 0.5


def _vaswani_like(n_runs=3, topics=10, seed=0):
    rng = np.random.default_rng(seed)
    qrels = {str(t): {f"d{i}": int(rng.integers(0, 2)) for i in rng.choice(40, 15, replace=False)}
             for t in range(topics)}
    runs = [{t: {f"d{i}": float(rng.random()) for i in rng.choice(40, 25, replace=False)} for t in qrels}
            for _ in range(n_runs)]
    return qrels, runs


def test_baseline_and_tests():
    qrels, runs = _vaswani_like(2)
    per = cranfield.Evaluator(qrels, ["map", "ndcg"]).evaluate
    a, b = per(runs[0]), per(runs[1])
    topics = sorted(qrels)
    for test, fn in (("t", stats.ttest_rel), ("wilcoxon", stats.wilcoxon)):
        df = Experiment(runs, None, qrels, ["map", "ndcg"], baseline=0, test=test)
        for m in ("map", "ndcg"):
            assert {f"{m} +", f"{m} -", f"{m} p-value"} <= set(df.columns)
            want = fn([b[t][m] for t in topics], [a[t][m] for t in topics]).pvalue
            assert df.loc[1, f"{m} p-value"] == pytest.approx(want, rel=1e-9)
            assert math.isnan(df.loc[0, f"{m} p-value"])
    # a callable test (a, b) -> (statistic, p): pt.Experiment puts its second value in the p-value column
    calls = []

    def tost(x, y):
        calls.append((np.asarray(x).copy(), np.asarray(y).copy()))
        return 0, float(np.mean(np.asarray(x) - np.asarray(y)) ** 2)
    df = Experiment(runs, None, qrels, ["map"], baseline=0, test=tost)
    x, y = calls[0]
    assert x.tolist() == [b[t]["map"] for t in topics] and y.tolist() == [a[t]["map"] for t in topics]
    assert df.loc[1, "map p-value"] == pytest.approx(np.mean(x - y) ** 2)


CORRECTIONS = ["hs", "holm-sidak", "bonferroni", "hommel", "holm", "sidak", "simes-hochberg", "fdr_bh", "fdr_by",
               "fdr_tsbh", "fdr_tsbky", "fdr_gbs", "b", "h", "ho", "sh", "fdr_i", "fdr_n"]


@pytest.mark.parametrize("corr", CORRECTIONS)
def test_baseline_corrected(corr):
    qrels, runs = _vaswani_like(5, topics=12, seed=1)
    df = Experiment(runs, None, qrels, ["map", "ndcg"], baseline=0, correction=corr)
    cols = list(df.columns)
    for m in ("map", "ndcg"):
        i = cols.index(f"{m} p-value")
        assert cols[i + 1: i + 3] == [f"{m} reject", f"{m} p-value corrected"]       # right after the p-value
        assert not df[f"{m} p-value corrected"].drop(df.index[0]).isna().any()
        assert not df.loc[0, f"{m} reject"]
        sm = pytest.importorskip("statsmodels.stats.multitest", reason="statsmodels: the corrections' oracle")
        reject, corrected, _, _ = sm.multipletests(df[f"{m} p-value"].drop(df.index[0]), alpha=0.05, method=corr)
        assert df[f"{m} p-value corrected"].drop(df.index[0]).tolist() == pytest.approx(list(corrected), rel=1e-12)
        assert df[f"{m} reject"].drop(df.index[0]).tolist() == list(reject)


def test_corrections_hand_computed():
    from engine.campaign.multitest import multipletests
    p = [0.01, 0.04, 0.03, 0.005]
    assert multipletests(p, 0.05, "bonferroni")[1].tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert multipletests(p, 0.05, "holm")[1].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert multipletests(p, 0.05, "fdr_bh")[1].tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # Hommel: for m = 2 the adjusted values are max(p_i, ...) with the Simes step: [0.02, 0.02] for (0.01, 0.02)
    assert multipletests([0.01, 0.02], 0.05, "hommel")[1].tolist() == pytest.approx([0.02, 0.02])
    reject, corrected = multipletests([0.01, np.nan, 0.04], 0.05, "holm")     # NaN: out of the family of 2
    assert math.isnan(corrected[1]) and corrected[[0, 2]].tolist() == pytest.approx([0.02, 0.04])
    assert reject.tolist() == [True, False, True]


def test_correction_needs_a_baseline_and_is_off_by_default():
    qrels, runs = _vaswani_like(2)
    with pytest.raises(ValueError, match="no baseline"):
        Experiment(runs, None, qrels, ["map"], correction="holm")
    df = Experiment(runs, None, qrels, ["map"], baseline=0)
    assert "map reject" not in df.columns and "map p-value corrected" not in df.columns
    with pytest.raises(ValueError, match="unknown correction"):
        Experiment(runs, None, qrels, ["map"], baseline=0, correction="holmes")


def test_perquery_round_both_and_dicts(tmp_path):
    qrels, runs = _vaswani_like(2)
    pq = Experiment(runs, None, qrels, ["map", "ndcg"], perquery=True)
    assert list(pq.columns) == ["name", "qid", "measure", "value"] and len(pq) == 2 * 10 * 2
    assert pq["name"].tolist() == sorted(pq["name"].tolist())
    avg, pq2 = Experiment(runs, None, qrels, ["map", "ndcg"], perquery="both")
    pd.testing.assert_frame_equal(pq, pq2)
    assert avg["map"].tolist() == pytest.approx(pq[pq.measure == "map"].groupby("name")["value"].mean().tolist())
    r = Experiment(runs, None, qrels, ["map", "ndcg"], round=2)
    assert r["map"].tolist() == [round(v, 2) for v in avg["map"]]
    r = Experiment(runs, None, qrels, ["map", "ndcg"], round={"ndcg": 1})
    assert r["ndcg"].tolist() == [round(v, 1) for v in avg["ndcg"]] and r["map"].tolist() == avg["map"].tolist()
    assert Experiment(runs, None, qrels, ["map"], perquery=True, round=2)["value"].tolist() == \
        [round(v, 2) for v in pq[pq.measure == "map"]["value"]]
    d = Experiment(runs, None, qrels, ["map"], dataframe=False)
    assert d == {"run0": {"map": avg["map"][0]}, "run1": {"map": avg["map"][1]}}
    d = Experiment(runs, None, qrels, ["map"], perquery=True, dataframe=False)
    assert set(d) == {0, 1} and d[0]["0"]["map"] == pq[(pq.name == "run0") & (pq.qid == "0") &
                                                       (pq.measure == "map")]["value"].iloc[0]
    styled = Experiment(runs, None, qrels, ["map"], baseline=0, highlight="bold")
    assert "font-weight: bold" in styled.to_html()
    Experiment(runs, None, qrels, ["map"], names=["a", "b"], save_dir=tmp_path)
    Experiment(runs[:1], None, qrels, ["map"], names=["c"], save_dir=tmp_path)
    agg = pd.read_csv(tmp_path / "aggregated.csv")
    assert sorted(agg["name"]) == ["a", "b", "c"] and len(pd.read_csv(tmp_path / "perquery.csv")) == 30
    with pytest.raises(TypeError, match="Unknown kwargs"):
        Experiment(runs, None, qrels, ["map"], filter_qrels=True)
