"""One paired t-test rule on every face (issue 35): two identical runs have no test (p = NaN, as scipy's
ttest_rel) and are never marked as different: the TUI leaderboard, `compare`, `table`, the training,
completion and pool-bias experiments."""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from _cli import cli

from engine.stability.significance import paired_p


@pytest.fixture(scope="module")
def twin_campaign(tmp_path_factory):
    """A simulated campaign plus run `twin`, a copy of asterA1 under another tag."""
    from engine.simulation.campaigns import simulate, write_campaign
    out = write_campaign(simulate(6, 4, 30, seed=1), tmp_path_factory.mktemp("twin") / "camp", pool_depth=10)
    text = (out / "runs" / "asterA1.txt").read_text()
    (out / "runs" / "twin.txt").write_text(text.replace(" asterA1\n", " twin\n"))
    y = out / "campaign.yaml"
    conf = yaml.safe_load(y.read_text())
    conf["runs"]["twin"] = {"group": "twin", "type": "automatic", "pooled": False, "file": "runs/twin.txt"}
    y.write_text(yaml.safe_dump(conf, sort_keys=False))
    return out


def test_rule_itself():
    d = np.array([[0.0, 0.125, 0.1], [0.0, 0.125, -0.2], [0.0, 0.125, 0.3]])
    p = paired_p(d)
    assert math.isnan(p[0]) and p[1] == 0.0
    from scipy import stats
    assert p[2] == pytest.approx(stats.ttest_rel(d[:, 2], np.zeros(3)).pvalue, rel=1e-12)


def test_tui_leaderboard(twin_campaign):
    import tui.model as model_mod
    from tui.source import open_campaign
    model_mod._OPENED.clear()
    model = model_mod.CampaignModel(open_campaign(twin_campaign))
    model.evaluate(["map"])
    board = model.leaderboard("map").reset_index(drop=True)
    runs = board["run"].tolist()
    i = max(runs.index("asterA1"), runs.index("twin"))
    assert abs(runs.index("asterA1") - runs.index("twin")) == 1
    assert math.isnan(board["p_above"].iloc[i]) and bool(board["same_as_above"].iloc[i])


def test_compare_command(twin_campaign):
    from engine.campaign.campaign import load_campaign
    from engine.campaign.runcompare import compare_two
    camp = load_campaign(twin_campaign)
    assert math.isnan(compare_two(camp.evaluate(["map"]), "asterA1", "twin", "map").p)
    r = cli("compare", twin_campaign, "asterA1", "twin", "-m", "map")
    assert r.rc == 0, r.text
    assert "t test: p = nan" in r.out


def test_table_command(twin_campaign):
    from engine.campaign.campaign import load_campaign
    from engine.campaign.tables import compare_scores
    camp = load_campaign(twin_campaign)
    res = compare_scores(camp.evaluate(["map"]), ["map"], "asterA1")
    t = res.table().set_index("run")
    assert math.isnan(t.loc["twin", "map p"]) and not t.loc["twin", "map mark"]
    r = cli("table", twin_campaign, "--baseline", "asterA1", "-m", "map", "--format", "csv")
    assert r.rc == 0, r.text
    got = pd.read_csv(io.StringIO(r.out), dtype={"run": str}, keep_default_na=True).set_index("run")
    assert math.isnan(got.loc["twin", "map p"]) and pd.isna(got.loc["twin", "map mark"])
    # all pairs: twin and asterA1 carry no letter of each other
    r = cli("table", twin_campaign, "-m", "map", "--format", "csv", in_process=True)
    got = pd.read_csv(io.StringIO(r.out), dtype={"run": str}).set_index("run")
    assert r.rc == 0, r.text
    for run in got.index:
        if run.endswith(("asterA1", "twin")):
            mark = got.loc[run, "map mark"]
            assert pd.isna(mark) or not set(str(mark)) & {"a", "g"}, (run, mark)


def test_training_against_full():
    from engine.training.learn import against_full
    pt = pd.DataFrame({"method": ["full"] * 3 + ["depth"] * 3 + ["infap"] * 3, "percent": [100] * 3 + [10] * 6,
                       "ranker": ["r"] * 9, "topic": ["1", "2", "3"] * 3,
                       "map": [0.25, 0.5, 0.75, 0.25, 0.5, 0.75, 0.375, 0.625, 0.875]})
    got = against_full(pt).set_index("method")
    assert math.isnan(got.loc["depth", "p"]) and got.loc["depth", "diff"] == 0
    assert got.loc["infap", "p"] == 0.0                 # a constant non-zero difference


def _hand_case():
    """Groups g1 (run M) and g2 (run A); each group's only unique document is non-relevant, so leaving
    a group out changes no score."""
    rows = []
    for t in ("1", "2", "3"):
        for run, docs in (("M", ["r1", "n1", "r2"]), ("A", ["r1", "r2", "n2"])):
            rows += [(run, t, d, k + 1, 3.0 - k) for k, d in enumerate(docs)]
    runs = pd.DataFrame(rows, columns=["run", "topic", "doc", "rank", "score"])
    q = pd.DataFrame([(t, d, 1 if d[0] == "r" else 0) for t in ("1", "2", "3") for d in ("r1", "r2", "n1", "n2")],
                     columns=["topic", "doc", "grade"])
    meta = pd.DataFrame({"run": ["M", "A"], "group": ["g1", "g2"], "type": ["manual", "automatic"],
                         "pooled": [True, True]})
    return q, runs, meta


def test_pool_bias_and_completion_identical_scores():
    from engine.completion.experiment import completion_poolbias
    from engine.stability.poolbias import leave_group_out, leave_manual_out
    q, runs, meta = _hand_case()
    _, det = leave_group_out(q, runs, meta, ["map"], depth=3)
    assert len(det) == 2 and (det["old"] == det["new"]).all() and det["p"].isna().all()
    summ, _ = leave_manual_out(q, runs, meta, ["map"], depth=3)
    assert summ["share_significant"].iloc[0] == 0.0
    summ, det = completion_poolbias(q, runs, meta, ["map"], None, mode="group", depth=3, complete_with=("none",))
    assert len(det) == 2 and (det["old"] == det["new"]).all() and det["p"].isna().all()
    assert summ["share_significant"].iloc[0] == 0.0
