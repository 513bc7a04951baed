"""Significance tests and G-study on nugget scores: the topics x runs matrix, scipy's paired t-test as
oracle, and the same numbers through the command line."""
from __future__ import annotations

import json

import pytest
from scipy import stats

from cranfield.cli import main
from engine.nuggets.campaign import g_study_report, per_topic_scores, score_matrix, significance
from engine.nuggets.simulate import import_truth, simulate_rag, write_rag_campaign
from engine.stability.gtheory import g_study


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    d = write_rag_campaign(simulate_rag(5, 8, seed=4), tmp_path_factory.mktemp("a") / "c")
    import_truth(d, "truth")
    return d


def test_matrix_and_paired_t_equal_scipy(camp):
    m = score_matrix(camp, "truth", "weighted")
    pt = per_topic_scores(camp, "truth").set_index(["topic", "run"])["weighted"]
    assert m.shape == (8, 5)
    assert m.loc["q3", "rag02"] == pytest.approx(pt.loc[("q3", "rag02")])
    sig = significance(camp, "truth", "weighted", tests=("t",))
    row = sig[(sig["a"] == "rag01") & (sig["b"] == "rag04")].iloc[0]
    ref = stats.ttest_rel(m["rag01"], m["rag04"])
    assert row["p_t"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert row["diff"] == pytest.approx(m["rag01"].mean() - m["rag04"].mean())
    assert len(sig) == 10


def test_gstudy_on_nugget_scores(camp, capsys):
    r = g_study_report(camp, "truth", "all")
    g = g_study(score_matrix(camp, "truth", "all"))
    assert r["var_system"] == pytest.approx(g.var_system) and r["n_topics"] == 8 and r["n_systems"] == 5
    assert main(["nuggets", "gstudy", str(camp), "--source", "truth"]) == 0
    out = capsys.readouterr().out
    assert f"variance: runs {r['var_system']:.6f}" in out
    assert main(["nuggets", "significance", str(camp), "--source", "truth", "--tests", "t", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    sig = significance(camp, "truth", "all", tests=("t",))
    assert [x["p_t"] for x in rows] == pytest.approx(sig["p_t"].tolist(), abs=1e-9)   # JSON keeps 10 digits
