"""Re-judging, reduction and pool-bias experiments: exactness against engine.evaluation.evaluate and
hand-built cases."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import engine
from engine.simulation.campaigns import simulate
from engine.stability import score_matrix
from engine.stability.poolbias import leave_group_out, leave_manual_out, unique_contribution_mask
from engine.stability.reduction import bv_keep, reduction_experiment, summarize_reduction, uniform_keep
from engine.stability.rejudge import Rejudger

MEASURES = ["map", "bpref", "P.10", "infAP", "ndcg_cut.10"]


@pytest.fixture(scope="module")
def sim():
    return simulate(12, 8, 100, seed=3)


@pytest.fixture(scope="module")
def rejudger(sim):
    return Rejudger(sim.pool(20), sim.runs, MEASURES)


@pytest.mark.parametrize("removed_as", ["absent", "unjudged"])
def test_rejudger_equals_engine_evaluate(sim, rejudger, removed_as):
    q = rejudger.qrels
    keep = np.random.default_rng(1).random(len(q)) < 0.4
    got = rejudger.evaluate(keep, removed_as=removed_as)
    if removed_as == "absent":
        sub = q[keep]
    else:
        sub = q.copy()
        sub.loc[~keep, "grade"] = -1
    df = engine.evaluate(sub, sim.runs, MEASURES)
    for name in rejudger.names:
        want = score_matrix(df, name)
        mine = rejudger.frame(got[name]).loc[want.index, want.columns]
        np.testing.assert_allclose(mine.to_numpy(), want.to_numpy(), atol=1e-12, err_msg=name)


def _toy_qrels(R, N):
    rows = [("1", f"r{i}", 1) for i in range(R)] + [("1", f"n{i}", 0) for i in range(N)]
    return pd.DataFrame(rows, columns=["topic", "doc", "grade"])


def test_buckley_voorhees_counts():
    rng = np.random.default_rng(0)
    q = _toy_qrels(25, 300)
    k = bv_keep(q, 10, rng)
    # R_j = max(1, trunc(25 * 0.1)) = 2; N_j = max(10, trunc(300 * 0.1)) = 30
    assert (k & (q["grade"] == 1)).sum() == 2 and (k & (q["grade"] == 0)).sum() == 30
    q = _toy_qrels(5, 50)
    k = bv_keep(q, 10, rng)
    # R_j = max(1, 0) = 1; N_j = max(10, 5) = 10
    assert (k & (q["grade"] == 1)).sum() == 1 and (k & (q["grade"] == 0)).sum() == 10
    k = uniform_keep(_toy_qrels(25, 300), 50, rng)
    assert k[:25].sum() == 12 and k[25:].sum() == 150


def test_reduction_full_level_is_identity(sim, rejudger):
    df = reduction_experiment(None, None, None, method="uniform", levels=[100, 30], trials=2, rejudger=rejudger)
    full = df[df["level"] == 100]
    assert np.allclose(full["tau"], 1.0) and np.allclose(full["rms"], 0.0)
    t = summarize_reduction(df)
    assert list(t.index) == [100.0, 30.0]
    assert (t.loc[30.0] < 1.0).all()


def test_unique_contribution_mask_hand_case():
    runs = pd.DataFrame({"run": ["A", "A", "B", "B"], "topic": ["1"] * 4, "doc": ["d1", "d2", "d2", "d3"],
                         "rank": [1, 2, 1, 2], "score": [2.0, 1.0, 2.0, 1.0]})
    q = pd.DataFrame({"topic": ["1"] * 4, "doc": ["d1", "d2", "d3", "d4"], "grade": [1, 0, 1, 0]})
    # depth 2: d1 only A, d2 both, d3 only B, d4 nobody
    assert unique_contribution_mask(q, runs, ["A", "B"], ["A"], 2).tolist() == [True, False, False, False]
    # depth 1: A contributes d1, B contributes d2 -> leaving B out removes d2
    assert unique_contribution_mask(q, runs, ["A", "B"], ["B"], 1).tolist() == [False, True, False, False]
    # B not a contributor: nothing of A is shared, A's top-2 docs are all A's
    assert unique_contribution_mask(q, runs, ["A"], ["A"], 2).tolist() == [True, True, False, False]


def test_leave_out_experiments_consistent(sim, rejudger):
    meta = sim.run_meta
    summ, det = leave_manual_out(None, sim.runs, meta, MEASURES, depth=20, rejudger=rejudger)
    manual = set(meta.loc[meta["type"] == "manual", "run"])
    assert set(det["run"]) == manual
    for name, grp in det.groupby("measure"):
        row = summ[summ["measure"] == name].iloc[0]
        assert row["mean_rank_change"] == pytest.approx(grp["rank_change"].mean())
        assert row["rms"] == pytest.approx(np.sqrt(((grp["new"] - grp["old"]) ** 2).mean()))
        assert row["max_down"] == max(0, grp["rank_change"].max())
    summ_g, det_g = leave_group_out(None, sim.runs, meta, ["map"], depth=20, rejudger=Rejudger(
        sim.pool(20), sim.runs, ["map"]))
    pooled_groups = set(meta.loc[meta["pooled"], "group"])
    assert set(det_g["group"]) == pooled_groups
    assert summ_g["n_left_out"].iloc[0] == meta["group"].isin(pooled_groups).sum()


def test_progress_is_streamed(sim, rejudger):
    seen = []
    reduction_experiment(None, None, None, method="bv", levels=[50], trials=2, rejudger=rejudger,
                         progress=lambda f, m: seen.append((f, m)))
    assert seen[-1][0] == 1.0 and all(0 <= f <= 1 for f, _ in seen) and len(seen) >= 3


def test_leave_manual_out_hand_case():
    # per topic: manual run M = [r1, r2, n1], automatic run A = [n2, r2, r3]; relevant r1, r2, r3
    rows = []
    for t in ("1", "2"):
        for run, docs in (("M", ["r1", "r2", "n1"]), ("A", ["n2", "r2", "r3"])):
            rows += [(run, t, d, k + 1, 3.0 - k) for k, d in enumerate(docs)]
    runs = pd.DataFrame(rows, columns=["run", "topic", "doc", "rank", "score"])
    q = pd.DataFrame([(t, d, 1 if d[0] == "r" else 0) for t in ("1", "2") for d in ("r1", "r2", "r3", "n1", "n2")],
                     columns=["topic", "doc", "grade"])
    meta = pd.DataFrame({"run": ["M", "A"], "group": ["g1", "g2"], "type": ["manual", "automatic"],
                         "pooled": [True, True]})
    summ, det = leave_manual_out(q, runs, meta, ["map"], depth=3)
    # only M retrieved r1 and n1 -> removed. AP(M): (1/1 + 2/2) / 3 = 2/3 -> (1/2) / 2 = 1/4;
    # AP(A): (1/2 + 2/3) / 3 = 7/18 -> (1/2 + 2/3) / 2 = 7/12: M drops from rank 1 to rank 2
    row = summ.iloc[0]
    assert row["removed"] == 4
    assert det.iloc[0]["old"] == pytest.approx(2 / 3) and det.iloc[0]["new"] == pytest.approx(0.25)
    assert (det.iloc[0]["old_rank"], det.iloc[0]["new_rank"]) == (1, 2)
    assert row["mean_rank_change"] == 1 and row["max_down"] == 1 and row["max_up"] == 0
    assert row["rms"] == pytest.approx(2 / 3 - 0.25) and row["share_significant"] == 1.0
    assert row["tau_all"] == pytest.approx(-1.0)


def test_reduction_ignores_unjudged_pool_rows():
    q = pd.concat([_toy_qrels(25, 300), pd.DataFrame({"topic": ["1"] * 50, "doc": [f"u{i}" for i in range(50)],
                                                      "grade": [-1] * 50})], ignore_index=True)
    k = bv_keep(q, 10, np.random.default_rng(0))
    assert (k & (q["grade"] == 0)).sum() == 30 and k[q["grade"] < 0].all()


def test_leave_manual_out_ignores_the_file_rank_column():
    """Pools are built in trec_eval order (score, then doc id), so pool bias cuts at that rank too: a
    run file whose rank column contradicts its scores gives the same experiment as a corrected file."""
    rows = []
    for t in ("1", "2"):
        for run, docs in (("M", ["r1", "r2", "n1"]), ("A", ["n2", "r2", "r3"])):
            rows += [(run, t, d, k + 1, 3.0 - k) for k, d in enumerate(docs)]
    good = pd.DataFrame(rows, columns=["run", "topic", "doc", "rank", "score"])
    bad = good.assign(rank=4 - good["rank"])            # ranks reversed against the scores
    q = pd.DataFrame([(t, d, 1 if d[0] == "r" else 0) for t in ("1", "2") for d in ("r1", "r2", "r3", "n1", "n2")],
                     columns=["topic", "doc", "grade"])
    meta = pd.DataFrame({"run": ["M", "A"], "group": ["g1", "g2"], "type": ["manual", "automatic"],
                         "pooled": [True, True]})
    s_good, d_good = leave_manual_out(q, good, meta, ["map"], depth=1)
    s_bad, d_bad = leave_manual_out(q, bad, meta, ["map"], depth=1)
    pd.testing.assert_frame_equal(s_good, s_bad)
    pd.testing.assert_frame_equal(d_good, d_bad)
    # depth 1 in score order: only M's r1 is unique to M (A's top is n2) -> 2 judgments removed
    assert s_good.iloc[0]["removed"] == 2
