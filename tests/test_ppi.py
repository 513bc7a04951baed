"""Prediction-powered intervals (issue 38): the arithmetic against ppi-python (test-only oracle), the
planner, the run-biased simulated judge, the campaign glue and `cranfield eval --ci ppi` as a process."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from engine.stability.ppi import (
    MIN_TOPICS,
    Pilot,
    expected_width,
    ppi_mean,
    predicted_se,
    small_sample,
    stratified_ppi_mean,
    topics_for_width,
    tuned_lambda,
)


def _data(seed, n=40, N=300, k=1, rho=0.8):
    rng = np.random.default_rng(seed)
    def pair(m):
        f = rng.gamma(2.0, 0.1, (m, k))
        y = rho * f + (1 - rho) * rng.gamma(2.0, 0.1, (m, k)) + rng.normal(0, 0.02, (m, k))
        return y, f
    y, fl = pair(n)
    _, fu = pair(N)
    return y, fl, fu


@pytest.mark.parametrize("lam", [None, 1.0, 0.35, 0.0])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ppi_mean_equals_ppi_python(lam, seed):
    ppi_py = pytest.importorskip("ppi_py")
    y, fl, fu = _data(seed, n=25 + 10 * seed, N=100 * seed, k=3)
    iv = ppi_mean(y, fl, fu, alpha=0.05, lam=lam, small_n=False)
    for c in range(3):
        lo, hi = ppi_py.ppi_mean_ci(y[:, c], fl[:, c], fu[:, c], alpha=0.05, lam=lam)
        assert abs(iv.lower[c] - float(np.squeeze(lo))) < 1e-9
        assert abs(iv.upper[c] - float(np.squeeze(hi))) < 1e-9
        est = ppi_py.ppi_mean_pointestimate(y[:, c], fl[:, c], fu[:, c], lam=lam)
        assert abs(iv.estimate[c] - float(np.squeeze(est))) < 1e-9
    if lam is None:
        assert ((iv.lam > 0) & (iv.lam < 1)).all()          # tuned, inside the clip
        assert (iv.width < ppi_mean(y, fl, fu, 0.05, 0.0, small_n=False).width).all()


def test_alpha_and_errors():
    ppi_py = pytest.importorskip("ppi_py")
    y, fl, fu = _data(9)
    iv = ppi_mean(y[:, 0], fl[:, 0], fu[:, 0], alpha=0.1, small_n=False)
    lo, hi = ppi_py.ppi_mean_ci(y[:, 0], fl[:, 0], fu[:, 0], alpha=0.1)
    assert abs(iv.lower[0] - float(np.squeeze(lo))) < 1e-9 and abs(iv.upper[0] - float(np.squeeze(hi))) < 1e-9
    from engine.errors import CranfieldError
    with pytest.raises(CranfieldError, match="at least 2 human-judged"):
        ppi_mean(y[:1], fl[:1], fu)
    with pytest.raises(CranfieldError, match="alpha"):
        ppi_mean(y, fl, fu, alpha=1.5)


def test_stratified_is_the_share_weighted_ppi_of_each_stratum():
    ppi_py = pytest.importorskip("ppi_py")
    y, fl, fu = _data(4, n=60, N=240)
    sl = np.array(["a"] * 20 + ["b"] * 40, dtype=object)
    su = np.array(["a"] * 140 + ["b"] * 100, dtype=object)
    iv = stratified_ppi_mean(y, fl, fu, sl, su, 0.05, small_n=False)
    est, var = 0.0, 0.0
    for h, share in (("a", 160 / 300), ("b", 140 / 300)):
        lo, hi = ppi_py.ppi_mean_ci(y[sl == h, 0], fl[sl == h, 0], fu[su == h, 0], alpha=0.05)
        lo, hi = float(np.squeeze(lo)), float(np.squeeze(hi))
        est += share * (lo + hi) / 2
        var += (share * (hi - lo) / 2) ** 2
    assert abs(iv.estimate[0] - est) < 1e-9
    assert abs((iv.upper[0] - iv.lower[0]) / 2 - np.sqrt(var)) < 1e-9
    assert not iv.small[0]                     # 60 human-judged topics, rectifiers not skewed
    assert stratified_ppi_mean(y[:24], fl[:24], fu, sl[:24], su, 0.05).small[0]      # 24 < 30
    from engine.errors import CranfieldError
    with pytest.raises(CranfieldError, match="stratum 'b': 0 human-judged"):
        stratified_ppi_mean(y, fl, fu, np.array(["a"] * 59 + ["c"], dtype=object), su, 0.05)


def test_small_sample_form_human_only_is_the_t_interval():
    from engine.stability.significance import t_interval
    y, fl, fu = _data(5, n=35, N=80, k=4)
    iv = ppi_mean(y, fl, fu, 0.05, 0.0)
    mean, half = t_interval(y.T, 0.95)
    assert np.allclose(iv.estimate, mean, atol=1e-12) and np.allclose(iv.upper - iv.estimate, half, atol=1e-12)
    assert iv.df == 34
    tuned = ppi_mean(y, fl, fu, 0.05)
    assert tuned.df == 34
    # cross-fitted lambda, by hand: topic i in fold i % 5, each fold's lambda from the other four folds
    est, r, lams = np.zeros(4), np.zeros_like(y), []
    for k in range(5):
        out = np.arange(35) % 5 != k
        yk, fk = y[out], fl[out]
        cov = ((yk - yk.mean(0)) * (fk - fk.mean(0))).sum(0) / len(yk)
        lam = np.clip(cov / ((1 + 28 / 80) * np.concatenate([fk, fu]).var(0, ddof=1)), 0, 1)
        r[~out] = y[~out] - lam * fl[~out]
        est += 7 / 35 * (lam * fu.mean(0) + r[~out].mean(0))
        r[~out] += lam * fu.mean(0)
        lams.append(lam)
    lb = np.mean(lams, axis=0)
    se = np.sqrt(r.var(0, ddof=1) / 35 + (lb * fu).var(0, ddof=1) / 80)
    assert np.allclose(tuned.estimate, est, atol=1e-12) and np.allclose(tuned.se, se, atol=1e-12)
    assert np.allclose(tuned.lam, lb, atol=1e-12)
    from scipy import stats
    assert np.allclose(tuned.upper - tuned.estimate, stats.t.ppf(0.975, 34) * se, atol=1e-12)


def test_tuned_lambda_by_hand():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    fl = np.array([1.0, 3.0, 2.0, 4.0])
    fu = np.array([0.0, 5.0, 2.5, 2.5])
    # cov (ddof 0) = 1.0; var of all eight model values (ddof 1) = 17.5 / 7 = 2.5; n / N = 1
    assert tuned_lambda(y, fl, fu)[0] == pytest.approx(1.0 / (2 * 2.5))


def test_small_sample_rule():
    rng = np.random.default_rng(0)
    assert small_sample(rng.normal(size=(MIN_TOPICS - 1, 1)))[0]
    assert not small_sample(rng.normal(size=(200, 1)))[0]
    skewed = rng.lognormal(0, 1.5, size=(60, 1))          # g1 ~ 5: Cochran's n > 25 g1^2 fails
    assert small_sample(skewed)[0]


def test_coverage_and_planner_on_a_known_population():
    """4000 draws from a normal population: PPI++ covers ~95%, the mean reported width is the planner's
    expected width, and topics_for_width is the first n whose expected width is at most w."""
    rng = np.random.default_rng(12)
    R, n, N = 4000, 50, 150
    f = rng.normal(0.3, 0.1, (n + N, R))
    y = 0.8 * f + rng.normal(0.05, 0.06, (n + N, R))
    truth = 0.8 * 0.3 + 0.05
    iv = ppi_mean(y[:n], f[:n], f[n:], 0.05)
    cover = ((iv.lower <= truth) & (truth <= iv.upper)).mean()
    assert 0.94 <= cover <= 0.96
    var_f = 0.1 ** 2
    p = Pilot(np.array([0.64 * var_f + 0.06 ** 2]), np.array([var_f]), np.array([0.8 * var_f]), n + N)
    expected = expected_width(p, [n])[0, 0]
    assert iv.width.mean() == pytest.approx(expected, rel=0.02)
    classic = ppi_mean(y[:n], f[:n], f[n:], 0.05, 1.0)
    assert classic.width.mean() == pytest.approx(expected_width(p, [n], tuned=False)[0, 0], rel=0.01)
    assert predicted_se(p, [n], small_n=False, expected=True)[0, 0] < predicted_se(p, [n])[0, 0]
    w = float(expected)
    k = topics_for_width(p, w)[0]
    wk = expected_width(p, [k - 1, k])[:, 0]
    assert wk[1] <= w < wk[0]
    assert abs(k - n) <= 1
    assert np.isnan(topics_for_width(p, 1e-6)[0])


def test_run_biased_judge_moves_only_the_favoured_runs_documents():
    from engine.judgments.simulated import apply_run_bias
    from engine.simulation.campaigns import depth_pool, simulate
    sim = simulate(4, 20, 30, 5, manual_fraction=0.0)
    pool = depth_pool(sim, 20, sim.run_meta["run"].tolist())
    fav = sim.run_meta["run"].iloc[0]
    lab = apply_run_bias(pool, sim.runs, [fav], [0, 1, 2], 0.5, depth=10, seed=1)
    top = sim.runs[(sim.runs["run"] == fav) & (sim.runs["rank"] <= 10)]
    keys = set(zip(top["topic"], top["doc"]))
    is_fav = np.array([(t, d) in keys for t, d in zip(pool["topic"], pool["doc"])])
    g0, g1 = pool["grade"].to_numpy(), lab["grade"].to_numpy()
    assert (g1[~is_fav] == g0[~is_fav]).all()                       # identity elsewhere
    up = (g1[is_fav] == np.minimum(g0[is_fav] + 1, 2))
    moved = (g1[is_fav] != g0[is_fav])
    assert up[moved].all() and 0.35 < moved[g0[is_fav] < 2].mean() < 0.65


# ---------------------------------------------------------------------------- campaign and command line

@pytest.fixture(scope="module")
def camp_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ppi") / "camp"
    r = cli("simulate", "--out", d, "--runs", "5", "--topics", "60", "--depth", "40", "--pool-depth", "15",
            "--judge", "noisy", "--judge-error", "0.2", "--seed", "4", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    from engine.formats.qrels import read_qrels, write_qrels
    q = read_qrels(d / "judgments" / "qrels.txt")
    topics = sorted(q["topic"].unique())
    keep = set(np.random.default_rng(0).choice(topics, 36, replace=False))
    write_qrels(d / "judgments" / "qrels.txt", q[q["topic"].isin(keep)])      # people judged 36 of 60 topics
    return d


def test_campaign_ppi_agrees_with_the_evaluator(camp_dir):
    from engine.campaign.campaign import load_campaign
    from engine.judgments.agreement import mean_scores
    from engine.judgments.ppi import campaign_ppi
    from engine.judgments.sources import source_judgments
    camp = load_campaign(camp_dir)
    rep = campaign_ppi(camp, "judge-noisy", "human", ["map", "P.10"])
    t = rep.runs[rep.runs["measure"] == "map"].set_index("run")
    assert (t["n_human"] == 36).all() and (t["n_topics"] == 60).all()
    human = mean_scores(source_judgments(camp, "human"), camp.runs(), "map", camp.eval_options(), camp.gains())
    model = mean_scores(source_judgments(camp, "judge-noisy"), camp.runs(), "map", camp.eval_options(), camp.gains())
    for run in t.index:        # every run retrieved every topic: trec_eval's means are the columns' means
        assert t.loc[run, "human_estimate"] == pytest.approx(human[run], abs=1e-12)
        assert t.loc[run, "model_only"] == pytest.approx(model[run], abs=1e-12)
    # the pairs table: a - b of the runs table's estimates is the difference's PPI estimate only with lambda
    # shared; check the human-only difference instead, which is linear
    p = rep.pairs[rep.pairs["measure"] == "map"].iloc[0]
    tv = rep.values[0]
    a, b = tv.runs.index(p["run_a"]), tv.runs.index(p["run_b"])
    d = tv.human[tv.labelled, a] - tv.human[tv.labelled, b]
    from engine.stability.significance import t_interval
    mean, half = t_interval(d[None, :], 0.95)
    assert p["human_lower"] == pytest.approx(mean[0] - half[0], abs=1e-12)
    assert rep.ranking.loc[0, "pairs"] == 10 and rep.ranking.loc[0, "resolved_ppi"] >= rep.ranking.loc[0, "resolved_human_only"] - 1


def test_cli_eval_ci_ppi_subprocess(camp_dir):
    from engine.campaign.campaign import load_campaign
    from engine.judgments.ppi import campaign_ppi
    r = cli("eval", "--campaign", camp_dir, "--judgments", "judge-noisy", "--gold", "human", "--ci", "ppi",
            "-m", "map", "-m", "P.10", "--format", "json", timeout=120)
    assert r.rc == 0, r.text
    got = pd.DataFrame(json.loads(r.out))
    rep = campaign_ppi(load_campaign(camp_dir), "judge-noisy", "human", ["map", "P.10"])
    assert list(got["run"]) == list(rep.runs["run"])
    for c in ("estimate", "lower", "upper", "lambda", "human_lower", "human_upper"):
        assert np.allclose(got[c].to_numpy(float), rep.runs[c].to_numpy(float), atol=1e-9), c
    text = cli("eval", "--campaign", camp_dir, "--judgments", "judge-noisy", "--ci", "ppi", "-m", "map",
               "--plan-width", "0.1", "--plan-topics", "500", timeout=120, in_process=True)
    assert text.rc == 0, text.text
    assert "95% intervals of run means: ppi++ from judge-noisy on every topic and human on 36 of 60 topics" in text.out
    assert "# adjacent pairs" in text.out and "# planning" in text.out
    plan = cli("eval", "--campaign", camp_dir, "--judgments", "judge-noisy", "--ci", "ppi", "-m", "map",
               "--plan-width", "0.1", "--plan-topics", "500", "--format", "csv", "--ci-table", "plan", timeout=120, in_process=True)
    pt = pd.read_csv(io.StringIO(plan.out))
    assert (pt["topics_ppi"] <= pt["topics_human_only"]).all()
    assert np.allclose(pt["hours_ppi"] / pt["topics_ppi"], pt["hours_human_only"] / pt["topics_human_only"])


def test_cli_ci_errors_and_small_sample(camp_dir, tmp_path):
    r = cli("eval", "--campaign", camp_dir, "--ci", "ppi", timeout=60, in_process=True)
    assert r.rc != 0 and "--ci needs --judgments MODEL" in r.err and "Traceback" not in r.text
    r = cli("eval", "--campaign", camp_dir, "--judgments", "human", "--gold", "human", "--ci", "ppi", timeout=60, in_process=True)
    assert r.rc != 0 and "name the same source" in r.err and "Traceback" not in r.text
    import shutil

    from engine.formats.qrels import read_qrels, write_qrels
    d = tmp_path / "few"
    shutil.copytree(camp_dir, d)
    q = read_qrels(d / "judgments" / "qrels.txt")
    write_qrels(d / "judgments" / "qrels.txt", q[q["topic"].isin(sorted(q["topic"].unique())[:12])])
    r = cli("eval", "--campaign", d, "--judgments", "judge-noisy", "--ci", "ppi", "-m", "map", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    assert "only 12 human-judged topics (< 30)" in r.err
    assert r.out.count("small sample") >= 5


def test_cli_stratified_equals_the_library(camp_dir):
    from engine.campaign.campaign import load_campaign
    from engine.judgments.ppi import campaign_ppi
    r = cli("eval", "--campaign", camp_dir, "--judgments", "judge-noisy", "--ci", "ppi-classic", "--strata",
            "category", "-m", "map", "--format", "json", "--ci-table", "pairs", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    got = pd.DataFrame(json.loads(r.out))
    rep = campaign_ppi(load_campaign(camp_dir), "judge-noisy", "human", ["map"], method="ppi-classic",
                       strata="category")
    assert rep.ranking.loc[0, "method"] == "ppi stratified"
    assert np.allclose(got["lower"].to_numpy(float), rep.pairs["lower"].to_numpy(float), atol=1e-9)
    assert (rep.pairs["lambda"] == 1.0).all()
    r = cli("eval", "--campaign", camp_dir, "--judgments", "judge-noisy", "--ci", "ppi", "-m", "gm_map", timeout=60, in_process=True)
    assert r.rc != 0 and "gm_map: summarized by gmean" in r.err and "Traceback" not in r.text


def test_lambda_variance_matches_the_cross_fitted_lambdas_spread():
    """The planner's Var(lambda_k) (delta method with the denominator's noise) against the spread of fold 0's
    lambda over 20000 simulated normal campaigns; the numerator-only formula it replaced is 17% high here."""
    from engine.stability.ppi import FOLDS, lambda_variance
    rng = np.random.default_rng(8)
    S, n, N, rho = 20000, 40, 110, 0.9
    z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=(n + N, S))
    y, f = z[..., 0], z[..., 1]
    out = np.arange(n) % FOLDS != 0                 # fold 0's lambda is tuned on the other folds' topics
    yo, fo, fu = y[:n][out], f[:n][out], f[n:]
    m = len(yo)
    cov = ((yo - yo.mean(0)) * (fo - fo.mean(0))).mean(0)
    var = np.var(np.concatenate([fo, fu]), axis=0, ddof=1)
    lam = cov / ((1 + m / N) * var)
    p = Pilot(np.array([1.0]), np.array([1.0]), np.array([rho]), n + N, np.array([1.0]))
    predicted = float(lambda_variance(p, np.array([[float(n)]]), np.array([[float(N)]]))[0, 0])
    assert predicted == pytest.approx(lam.var(), rel=0.08)
    numerator_only = (1 + rho ** 2) / (m * (1 + n / N) ** 2)
    assert numerator_only > 1.12 * lam.var()
