"""Pairwise significance tests against scipy and hand-computed values; discriminative power."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from engine.stability.discrim import bootstrap_counts, discriminative_power
from engine.stability.significance import holm, pairwise, tukey_hsd_threshold


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(3)
    return rng.normal(size=(25, 5)) * 0.2 + np.array([0.0, 0.05, 0.1, 0.3, 0.32])


def test_holm_hand_example():
    # sorted p: 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 = 0.04 -> monotone max 0.06
    assert holm(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])


def test_t_and_wilcoxon_match_scipy(scores):
    df = pairwise(scores, ("t", "wilcoxon"))
    for row, (i, j) in zip(df.itertuples(), itertools.combinations(range(5), 2)):
        a, b = scores[:, i], scores[:, j]
        assert row.p_t == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-10)
        w = stats.wilcoxon(a - b, method="approx", correction=False)
        assert row.p_wilcoxon == pytest.approx(w.pvalue, rel=1e-10)
        assert row.diff == pytest.approx(a.mean() - b.mean())
        assert row.effect_dz == pytest.approx((a - b).mean() / (a - b).std(ddof=1))


def test_randomization_matches_exact_enumeration():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(8, 2)) + np.array([0.0, 0.6])
    d = x[:, 0] - x[:, 1]
    signs = np.array(list(itertools.product([-1, 1], repeat=8)))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    p = pairwise(x, ("randomization",), n_perm=40000, seed=1)["p_randomization"].iloc[0]
    assert p == pytest.approx(exact, abs=0.01)


def test_tukey_matches_studentized_range(scores):
    df = pairwise(scores, ("t",))
    n, k = scores.shape
    res = scores - scores.mean(0) - scores.mean(1, keepdims=True) + scores.mean()
    mse = (res ** 2).sum() / ((n - 1) * (k - 1))
    q = abs(df["diff"].iloc[-1]) / np.sqrt(mse / n)
    assert df["p_tukey"].iloc[-1] == pytest.approx(stats.studentized_range.sf(q, k, (n - 1) * (k - 1)), rel=2e-3)
    thr = tukey_hsd_threshold(scores)
    assert ((np.abs(df["diff"]) > thr) == df["sig_tukey"]).all()


def test_bootstrap_asl_equals_explicit_loop(scores):
    B, seed = 300, 11
    d = discriminative_power(scores, n_bootstrap=B, seed=seed)
    counts = bootstrap_counts(scores.shape[0], B, np.random.default_rng(seed))
    n = scores.shape[0]
    for row, (i, j) in zip(d.pairs.itertuples(), itertools.combinations(range(5), 2)):
        z = scores[:, i] - scores[:, j]
        t = z.mean() / (z.std(ddof=1) / np.sqrt(n))
        w = z - z.mean()
        hits = 0
        for b in range(B):
            s = np.repeat(w, counts[b].astype(int))
            tb = s.mean() / (s.std(ddof=1) / np.sqrt(n)) if s.std() > 0 else 0.0
            hits += abs(tb) >= abs(t) - 1e-12
        assert row.asl == pytest.approx(hits / B, abs=1e-12)
    assert d.power == pytest.approx((d.pairs["asl"] < 0.05).mean())


def test_discrimination_extremes():
    base = np.linspace(0, 1, 30)
    x = np.stack([base, base, base + 5 + 0.01 * np.sin(np.arange(30))], axis=1)
    d = discriminative_power(x, n_bootstrap=200)
    asl = dict(zip(zip(d.pairs["a"], d.pairs["b"]), d.pairs["asl"]))
    assert asl[("s1", "s2")] == 1.0          # identical systems: never significant
    assert asl[("s1", "s3")] == 0.0          # a huge constant shift: always significant
    assert np.all(np.diff(d.asl_curve()) >= 0)


def test_wilcoxon_with_ties_and_zeros_matches_scipy():
    from engine.stability.significance import wilcoxon_p
    rng = np.random.default_rng(0)
    d = np.round(rng.normal(size=(30, 20)), 1)
    d[:5] = 0.0                                   # zero differences are dropped (Wilcoxon's method)
    want = [stats.wilcoxon(d[:, j], method="approx", correction=False).pvalue for j in range(20)]
    np.testing.assert_allclose(wilcoxon_p(d), want, rtol=1e-12)


def test_long_analyses_stream_progress(scores):
    for fn in (lambda cb: discriminative_power(scores, n_bootstrap=50, progress=cb),
               lambda cb: pairwise(scores, ("t",), progress=cb)):
        seen = []
        fn(lambda f, m: seen.append((f, m)))  # noqa: B023  (called before the next iteration)
        assert seen and seen[-1][0] == 1.0 and all(isinstance(m, str) for _, m in seen)
