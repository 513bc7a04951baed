"""Stratified designs, stability-optimal nDCG and the `cranfield stability` command."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import engine
from conftest import shared_path
from cranfield.cli import main
from engine.simulation.campaigns import simulate
from engine.stability import d_study, g_study, score_matrix
from engine.stability.optimal_ndcg import compare, discounts, gains, grade_ranks, optimal_discount, phi1
from engine.stability.stratified import multivariate_g_study, stability_by_share, weighted_mean


def test_weighted_mean_hand_example():
    x = pd.DataFrame({"s1": [0.2, 0.4, 0.9], "s2": [0.0, 0.2, 0.1]}, index=["1", "2", "3"])
    wm = weighted_mean(x, {"1": "a", "2": "a", "3": "b"})
    # s1: (mean(0.2, 0.4) + 0.9) / 2 = 0.6; s2: (0.1 + 0.1) / 2 = 0.1
    assert wm["s1"] == pytest.approx(0.6) and wm["s2"] == pytest.approx(0.1)


def test_single_class_multivariate_equals_univariate():
    rng = np.random.default_rng(2)
    x = pd.DataFrame(rng.normal(size=(20, 6)) + np.linspace(0, 1, 6), index=[str(i) for i in range(20)])
    m = multivariate_g_study(x, ["c"] * 20)
    d = d_study(g_study(x), 35)
    e, p = m.coefficients([35])
    assert e == pytest.approx(d.erho2) and p == pytest.approx(d.phi)


def test_multivariate_two_classes():
    rng = np.random.default_rng(4)
    sys_eff = np.linspace(0, 1, 8)
    a = rng.normal(size=(30, 8)) * 0.5 + sys_eff
    b = rng.normal(size=(30, 8)) * 3.0 + sys_eff          # a much noisier class
    x = pd.DataFrame(np.vstack([a, b]), index=[str(i) for i in range(60)])
    cls = ["quiet"] * 30 + ["noisy"] * 30
    m = multivariate_g_study(x, cls)
    assert m.sys_cov.shape == (2, 2) and m.sys_cov[0, 1] == pytest.approx(m.sys_cov[1, 0])
    curve = stability_by_share(m, "quiet", total=64)
    # more topics of the quiet class make the composite more stable
    assert curve["phi"].iloc[-1] > curve["phi"].iloc[0]


@pytest.fixture(scope="module")
def small_sim():
    return simulate(10, 12, 60, seed=5)


def test_grade_ranks_reproduce_ndcg_cut(small_sim):
    gr = grade_ranks(small_sim.truth, small_sim.runs, 10)
    # trec_eval's nDCG: gain = grade, discount 1/log2(1 + rank)
    x = gr.ndcg(np.array([1.0, 2.0]), 1 / np.log2(1 + np.arange(1, 11)))
    df = engine.evaluate(small_sim.truth, small_sim.runs, ["ndcg_cut.10"])
    want = score_matrix(df, "ndcg_cut_10").loc[gr.topics, gr.runs]
    np.testing.assert_allclose(x, want.to_numpy(), atol=1e-12)
    # scale-free in gains and discounts
    np.testing.assert_allclose(gr.ndcg(np.array([0.25, 0.5]), discounts("log", 10)), x, atol=1e-12)


def test_optimal_discount_is_feasible_and_not_worse(small_sim):
    gr = grade_ranks(small_sim.truth, small_sim.runs, 10)
    lin = gains("linear", gr.max_grade)
    d = optimal_discount(gr, lin, maxiter=100)
    assert d.sum() == pytest.approx(1.0) and np.all(np.diff(d) <= 1e-9) and np.all(d >= 0)
    assert phi1(gr.ndcg(lin, d)) >= phi1(gr.ndcg(lin, discounts("log", 10))) - 1e-12
    res = compare(gr, maxiter=50)
    t = res["discount_table"].set_index("function")
    assert t.loc["optimal", "topics_needed"] <= t.loc["log", "topics_needed"]
    assert list(res["gain_table"]["function"]) == ["exp", "linear", "optimal"]


def _run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_gstudy_json(capsys):
    path = str(shared_path("gt", "synthetic4.csv"))
    rc, out, _ = _run(capsys, "stability", "gstudy", "--csv", path, "--json", "--alpha", "0.2")
    assert rc == 0
    rep = json.loads(out)
    assert round(rep["phi"], 3) == 0.672 and round(rep["erho2_lower"], 3) == 0.541
    for k in ("n_systems", "n_topics", "var_system", "var_topic", "var_residual", "ms_system", "ms_topic",
              "ms_residual", "erho2", "erho2_lower", "erho2_upper", "phi", "phi_lower", "phi_upper",
              "topics_for_erho2", "topics_for_phi"):
        assert k in rep
    rc, out, _ = _run(capsys, "stability", "gstudy", "--csv", path, "--alpha", "0.2")
    assert "0.6716" in out and "[0.4569, 0.8454]" in out


def test_cli_bad_csv(tmp_path, capsys):
    p = tmp_path / "m.csv"
    p.write_text("a,b\n0.1,0.2\n0.3,x\n")
    rc, _, err = _run(capsys, "stability", "gstudy", "--csv", str(p))
    assert rc == 3 and "m.csv:3" in err and "not a number" in err
    rc, _, err = _run(capsys, "stability", "gstudy", "--csv", str(p.with_name("none.csv")))
    assert rc == 3 and "no such file" in err


def test_cli_discrim_and_significance_on_csv(capsys):
    path = str(shared_path("gt", "adhoc3.csv"))
    rc, out, _ = _run(capsys, "stability", "discrim", "--csv", path, "--json", "--bootstrap", "200", "--top", "10")
    assert rc == 0 and json.loads(out)[0]["n_pairs"] == 45
    rc, out, _ = _run(capsys, "stability", "significance", "--csv", path, "--json", "--tests", "t")
    rows = json.loads(out)
    assert rc == 0 and len(rows) == 40 * 39 // 2 and "p_t_holm" in rows[0] and "p_tukey" in rows[0]


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory):
    from engine.simulation.campaigns import write_campaign
    d = tmp_path_factory.mktemp("camp")
    write_campaign(simulate(12, 10, 80, seed=9), d, pool_depth=20)
    return str(d)


def test_cli_on_a_campaign(campaign_dir, capsys):
    rc, out, _ = _run(capsys, "stability", "gstudy", "--campaign", campaign_dir, "-m", "map", "--json")
    assert rc == 0 and json.loads(out)["n_systems"] == 12 and json.loads(out)["n_topics"] == 10
    rc, out, _ = _run(capsys, "stability", "reduction", "--campaign", campaign_dir, "-m", "map", "-m", "bpref",
                      "--method", "bv", "--trials", "1", "--levels", "50", "--json")
    rows = json.loads(out)
    assert rc == 0 and rows[0]["level"] == 50.0 and set(rows[0]) == {"level", "map", "bpref"}
    for mode in ("group", "manual"):
        rc, out, _ = _run(capsys, "stability", "poolbias", "--campaign", campaign_dir, "-m", "map",
                          "--mode", mode, "--depth", "20", "--json")
        assert rc == 0 and json.loads(out)[0]["measure"] == "map"
    rc, out, _ = _run(capsys, "stability", "optimal-ndcg", "--campaign", campaign_dir, "--truth",
                      "--cutoff", "5", "--json")
    res = json.loads(out)
    assert rc == 0 and len(res["optimal_discount"]) == 5
    rc, out, _ = _run(capsys, "stability", "stratified", "--campaign", campaign_dir, "--json")
    assert rc == 0 and len(json.loads(out)["weighted_means"]) == 12
