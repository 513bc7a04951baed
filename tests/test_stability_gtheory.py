"""G-study / D-study: Brennan's synthetic data set no. 4 (published values) and hand-computed cases."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import shared_path
from engine.errors import CranfieldError
from engine.stability import d_study, g_study, gstudy_report, score_matrix, topics_needed


@pytest.fixture(scope="module")
def synthetic4():
    return pd.read_csv(shared_path("gt", "synthetic4.csv"))


def test_synthetic4_variance_components(synthetic4):
    g = g_study(synthetic4)
    assert (g.n_topics, g.n_systems) == (12, 10)
    # Brennan (2001) Tables 6.2 / 6.5, shared/data/README.md
    assert round(g.var_system, 4) == 0.6258
    assert round(g.var_topic, 4) == 0.8840
    assert round(g.var_residual, 4) == 2.7872
    assert round(g.ms_system, 4) == 10.2963
    assert round(g.ms_topic, 4) == 11.6273
    assert round(g.ms_residual, 4) == 2.7872
    assert not g.warnings


def test_synthetic4_d_study_intervals(synthetic4):
    g = g_study(synthetic4)
    d = d_study(g, 12, alpha=0.2)   # two-sided 80% interval, 0.1 per side
    assert round(d.erho2, 3) == 0.729
    assert (round(d.erho2_lower, 3), round(d.erho2_upper, 3)) == (0.541, 0.876)
    assert round(d.phi, 3) == 0.672
    assert (round(d.phi_lower, 3), round(d.phi_upper, 3)) == (0.457, 0.845)


def test_hand_computed_anova():
    # topics x systems; grand mean 4; system means 3, 5; topic means 2, 4, 6
    x = np.array([[1.0, 3.0], [3.0, 5.0], [5.0, 7.0]]) + np.array([[0.5, -0.5], [-0.5, 0.5], [0.0, 0.0]])
    g = g_study(x)
    # MS_system = 3 * ((3-4)^2 + (5-4)^2) / 1 = 6; MS_topic = 2 * (4 + 0 + 4) / 2 = 8
    # residuals: +-0.5 in rows 1-2, 0 in row 3 -> SS = 4 * 0.25 = 1, df = 2 -> MS_res = 0.5
    assert g.ms_system == pytest.approx(6.0)
    assert g.ms_topic == pytest.approx(8.0)
    assert g.ms_residual == pytest.approx(0.5)
    assert g.var_system == pytest.approx((6 - 0.5) / 3)
    assert g.var_topic == pytest.approx((8 - 0.5) / 2)
    d = d_study(g, 3)
    vs, vt, ve = 5.5 / 3, 7.5 / 2, 0.5
    assert d.erho2 == pytest.approx(vs / (vs + ve / 3))
    assert d.phi == pytest.approx(vs / (vs + (vt + ve) / 3))


def test_negative_component_set_to_zero_with_warning():
    # both systems have the same mean: MS_system = 0 < MS_res -> negative estimate
    g = g_study(np.array([[1.0, 2.0], [2.0, 1.0], [0.0, 0.0]]))
    assert g.raw_var_system < 0 and g.var_system == 0.0
    assert any("negative system variance" in p.message for p in g.warnings)
    d = d_study(g)
    assert d.erho2 == 0.0 and d.phi == 0.0
    assert math.isinf(topics_needed(g, 0.9)[0])


def test_topics_needed_is_the_smallest_reaching_target(synthetic4):
    g = g_study(synthetic4)
    for coef in ("phi", "erho2"):
        n, lo, hi = topics_needed(g, 0.9, coef, alpha=0.2)
        vals = getattr(d_study(g, np.array([n - 1, n])), coef)
        assert vals[0] < 0.9 <= vals[1]
        assert lo <= n <= hi
        # the interval bounds are the topic counts at which the coefficient bounds reach the target
        d = d_study(g, np.array([lo - 1, lo, hi - 1, hi]), alpha=0.2)
        up, down = getattr(d, f"{coef}_upper"), getattr(d, f"{coef}_lower")
        assert up[0] < 0.9 <= up[1] and down[2] < 0.9 <= down[3]


def test_d_study_projection_and_monotonicity(synthetic4):
    g = g_study(synthetic4)
    n = np.array([1, 5, 12, 50, 200])
    d = d_study(g, n)
    assert np.all(np.diff(d.phi) > 0) and np.all(np.diff(d.erho2) > 0)
    assert np.all(d.erho2 >= d.phi)
    assert np.all(d.phi_lower <= d.phi) and np.all(d.phi <= d.phi_upper)
    assert np.all(d.erho2_lower <= d.erho2) and np.all(d.erho2 <= d.erho2_upper)
    assert d.phi[2] == pytest.approx(d_study(g).phi)


def test_drop_lowest_removes_lowest_mean_systems(synthetic4):
    g = g_study(synthetic4, drop_lowest=0.2)   # 2 of 10 systems
    means = synthetic4.mean()
    assert sorted(g.dropped) == sorted(means.nsmallest(2).index.tolist())
    assert g.n_systems == 8


def test_report_keys_and_json(synthetic4):
    rep = gstudy_report(g_study(synthetic4), alpha=0.2)
    keys = ["n_systems", "n_topics", "var_system", "var_topic", "var_residual", "ms_system", "ms_topic",
            "ms_residual", "erho2", "erho2_lower", "erho2_upper", "phi", "phi_lower", "phi_upper",
            "topics_for_erho2", "topics_for_phi"]
    assert all(k in rep for k in keys)
    assert rep["topics_for_phi_lower"] <= rep["topics_for_phi"] <= rep["topics_for_phi_upper"]
    json.dumps(rep)


def test_bad_inputs():
    with pytest.raises(CranfieldError):
        g_study(np.array([[1.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(CranfieldError):
        g_study(np.array([[1.0, 2.0]]))
    with pytest.raises(CranfieldError):
        d_study(g_study(np.eye(3)), 5, alpha=1.5)


def test_score_matrix_pivots_long_table():
    df = pd.DataFrame({"run": ["a", "a", "b", "b"], "topic": ["2", "1", "1", "2"],
                       "measure": ["map"] * 4, "value": [0.2, 0.1, 0.3, 0.4]})
    m = score_matrix(df, "map")
    assert list(m.index) == ["1", "2"] and list(m.columns) == ["a", "b"]
    assert m.loc["2", "a"] == 0.2 and m.loc["1", "b"] == 0.3
    with pytest.raises(CranfieldError):
        score_matrix(df.iloc[:3], "map")
    assert score_matrix(df.iloc[:3], "map", fill=0.0).loc["2", "b"] == 0.0


def test_tau_ap_hand_example():
    from engine.stability import kendall_tau, tau_ap
    truth = np.array([3.0, 2.0, 1.0])                   # A > B > C
    # estimated order A, C, B: C has 1/1 correct above it, B has 1/2 -> 2/2 * (1 + 0.5) - 1 = 0.5
    assert tau_ap(truth, np.array([3.0, 1.0, 2.0])) == pytest.approx(0.5)
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap(truth, -truth) == pytest.approx(-1.0)
    assert kendall_tau(truth, np.array([3.0, 1.0, 2.0])) == pytest.approx(1 / 3)


def test_f_quantiles_are_scipy_stats_values_without_importing_it():
    """The G-study's interval quantiles equal scipy.stats's f.ppf / chi2.ppf exactly, and a G-study's
    process does not import scipy.stats (about a second of `stability gstudy`, 12.9 s on 31 x 40)."""
    import subprocess
    import sys

    from scipy import stats

    from engine.stability.gtheory import _fq
    for q in (0.025, 0.5, 0.975):
        for d1, d2 in ((3.0, 117.0), (30.0, 1170.0), (7.5, 40.25)):
            assert _fq(q, d1, d2) == stats.f.ppf(q, d1, d2)
            assert _fq(q, d1, math.inf) == stats.chi2.ppf(q, d1) / d1
    code = ("import sys, numpy as np; from engine.stability.gtheory import g_study, gstudy_report; "
            "x = np.random.default_rng(0).random((20, 6)); gstudy_report(g_study(x), 50, 0.05, 0.9); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert out.strip() == "False"
