"""Cost-benefit planner on a small simulated campaign."""
from __future__ import annotations

import numpy as np
import pytest

from engine.planning.cost import CostModel
from engine.planning.planner import plan, predict_tau, reduce_judgments
from engine.simulation.campaigns import simulate


@pytest.fixture(scope="module")
def sim():
    s = simulate(n_runs=10, n_topics=30, depth=100, seed=3)
    pool = s.pool(depth=30)
    return s, pool


def test_reduce_judgments_keeps_pool_order(sim):
    s, pool = sim
    red = reduce_judgments(pool, s.runs, 5)
    counts = red.groupby("topic").size()
    assert counts.max() == 5 and len(counts) == pool["topic"].nunique()
    # the kept documents are those ranked highest by some run: each has best rank <= every dropped doc's
    r = s.runs.copy()
    best = r.groupby(["topic", "doc"])["rank"].min()
    t = counts.index[0]
    kept = set(red[red["topic"] == t]["doc"])
    dropped = set(pool[pool["topic"] == t]["doc"]) - kept
    assert max(best[(t, d)] for d in kept) <= min(best[(t, d)] for d in dropped)


def test_plan_grid_and_exact_cases(sim):
    s, pool = sim
    model = CostModel(by_target=False)
    res = plan(pool, s.runs, js=(4, 1000), qs=(5, 15, 30), trials=40, seed=1, model=model, method="subsample")
    g = res.grid.set_index(["j", "queries"])
    # hours are the model's: 30 queries x 4 judgments: 30 * (31.02 + 105 + 13 * 4) / 3600
    assert g.loc[(4, 30), "hours"] == pytest.approx(30 * (136.02 + 52) / 3600)
    # all topics with every judgment reproduce the baseline ranking exactly in every draw
    assert g.loc[(1000, 30), "tau_mean"] == 1.0 and g.loc[(1000, 30), "tau_sd"] == 0.0
    # fewer topics, fewer judgments: less agreement on average
    assert g.loc[(1000, 5), "tau_mean"] < g.loc[(1000, 15), "tau_mean"] < 1.0
    assert g.loc[(4, 30), "tau_mean"] < 1.0
    # D-study values move with Q as the Spearman-Brown formula says
    phi5, phi30 = g.loc[(1000, 5), "phi"], g.loc[(1000, 30), "phi"]
    r1 = phi5 / (5 - 4 * phi5)  # single-topic Phi
    assert phi30 == pytest.approx(30 * r1 / (1 + 29 * r1))
    # an observed design is predicted by its own draws
    mean, sd = predict_tau(res, 15, 1000)
    assert mean == pytest.approx(g.loc[(1000, 15), "tau_mean"]) and sd == pytest.approx(g.loc[(1000, 15), "tau_sd"])
    best = res.cheapest("tau_mean")
    assert best["hours_tau_mean"] == res.designs["hours_tau_mean"].min()


def test_bootstrap_draws_extend_past_available_topics(sim):
    s, pool = sim
    res = plan(pool, s.runs, js=(1000,), qs=(30, 120), trials=60, seed=2)
    g = res.grid.set_index("queries")
    # drawing with replacement keeps a spread at Q = all topics, and more topics agree better
    assert g.loc[30, "tau_sd"] > 0
    assert g.loc[120, "tau_mean"] > g.loc[30, "tau_mean"]
    assert g.loc[120, "tau_mean"] < 1.0


def test_progress_is_streamed(sim):
    s, pool = sim
    seen = []
    plan(pool, s.runs, js=(8,), qs=(5, 10), trials=5, progress=lambda f, m: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0


def test_category_mixes_shares_and_cost(sim):
    from engine.planning.planner import category_mixes
    s, pool = sim
    cats = dict(zip(s.topics["topic"].astype(str), s.topics["category"]))
    model = CostModel(by_target=False)
    tab = category_mixes(pool, s.runs, cats, j=16, q=20, trials=30, model=model)
    names = sorted(set(cats.values()))
    assert set(tab["category"]) == set(names) and sorted(tab["share"].unique()) == [0.25, 0.5, 0.75]
    assert names == ["long", "short"]
    # Table 3.4 with average judgment times, 16 judgments per query:
    # short: (2.34 - 1) * 18 + 25.5 + 67.6 + 12.5 * 16 = 24.12 + 93.1 + 200 = 317.22 s
    # long:  (2.54 - 1) * 24.5 + 31 + 86.5 + 13.0 * 16 = 37.73 + 117.5 + 208 = 363.23 s
    # 25% short of 20 queries: 20 * (0.25 * 317.22 + 0.75 * 363.23) / 3600 = 1.4493 h
    row = tab[(tab["category"] == "short") & (tab["share"] == 0.25)].iloc[0]
    assert row["hours"] == pytest.approx(20 * (0.25 * 317.22 + 0.75 * 363.23) / 3600)
    row = tab[(tab["category"] == "long") & (tab["share"] == 0.75)].iloc[0]
    assert row["hours"] == pytest.approx(20 * (0.75 * 363.23 + 0.25 * 317.22) / 3600)
    assert tab["tau_mean"].between(-1, 1).all()


def test_plan_says_where_fewer_judgments_exist_than_asked(sim):
    """A j above some topics' judged documents is capped there, and the result says so (it asked for
    128 per topic where 71-156 existed, without a word)."""
    s, pool = sim
    # topics keep 10 + (i mod 7) * 5 judged documents: 10..40 per topic
    topics = sorted(pool["topic"].unique())
    keep = {t: 10 + (i % 7) * 5 for i, t in enumerate(topics)}
    red = pool[pool.groupby("topic").cumcount() < pool["topic"].map(keep)]
    res = plan(red, s.runs, js=(8, 25), qs=(5, 10), trials=5, seed=1)
    counts = np.array([keep[t] for t in topics])
    d = res.designs.set_index("j")
    assert d.loc[8, "topics_below_j"] == 0 and d.loc[8, "judged_per_topic"] == 8.0
    assert d.loc[25, "topics_below_j"] == int((counts < 25).sum()) > 0
    assert d.loc[25, "judged_per_topic"] == pytest.approx(np.minimum(counts, 25).mean())
    lines = res.availability_lines()
    assert lines[0] == f"judged documents per topic: 10-40 (median {np.median(counts):g}) over {len(topics)} topics"
    assert len(lines) == 2 and lines[1].startswith(f"j = 25: {int((counts < 25).sum())} of {len(topics)} topics "
                                                   "have fewer than 25 judged documents")
