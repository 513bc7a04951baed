"""Per-document contributions come from the measures themselves and sum to their values: for AP, P@k,
recall@k, nDCG, nDCG@k, ndcgx and RBP, for every (run, topic) of the demo and of a small simulated
campaign whose campaign.yaml sets non-default gains; through the engine and through the TUI model's
drill-down (which shows them)."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from engine.campaign.campaign import load_campaign
from engine.evaluation.evaluate import compute, evaluate
from engine.measures.registry import explain, request_for_output
from tui.model import CampaignModel

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"
SPECS = ["map", "P.10", "recall.10", "ndcg", "ndcg_cut.10", "ndcgx", "rbp"]
NAMES = ["map", "P_10", "recall_10", "ndcg", "ndcg_cut_10", "ndcgx", "rbp"]


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("contrib")
    demo = base / "demo"
    shutil.copytree(DEMO, demo, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    from engine.simulation.campaigns import simulate, write_campaign
    sim = write_campaign(simulate(n_runs=6, n_topics=8, depth=60, seed=3), base / "sim", name="gains", pool_depth=20)
    cfg = yaml.safe_load((sim / "campaign.yaml").read_text())
    cfg["relevance"]["scale"] = {0: {"label": "no", "gain": 0}, 1: {"label": "partly", "gain": 2.5},
                                 2: {"label": "highly", "gain": 7}}
    (sim / "campaign.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return {"demo": demo, "sim": sim}


def engine_values(camp: Path) -> tuple:
    c = load_campaign(camp)
    gains = c.gains()
    out = compute(c.qrels(), c.runs(), SPECS, c.eval_options(), extra={"gains": gains})
    return c, gains, out


@pytest.mark.parametrize("which", ["demo", "sim"])
def test_contributions_sum_to_the_value(campaigns, which):
    c, gains, out = engine_values(campaigns[which])
    if which == "sim":
        assert gains == {0: 0, 1: 2.5, 2: 7}
    r = out.ranked
    for req in out.requests:
        ex = explain(r, req)
        assert ex is not None, req.measure.name
        for name, contrib in ex.items():
            assert contrib.shape == (r.n_rows,)
            np.testing.assert_allclose(r.seg_sum(contrib), out.values[name], rtol=0, atol=1e-12, err_msg=name)
    # gains matter: ndcgx with the campaign's gains differs from the grade-as-gain value, ndcg_cut does not
    plain = compute(c.qrels(), c.runs(), ["ndcgx", "ndcg_cut.10"], c.eval_options())
    assert not np.allclose(plain.values["ndcgx"], out.values["ndcgx"])
    np.testing.assert_array_equal(plain.values["ndcg_cut_10"], out.values["ndcg_cut_10"])


def test_hand_computed_contributions():
    """One list: relevant at ranks 1 and 3 of 4, R = 3 (one relevant document not retrieved)."""
    import pandas as pd
    q = pd.DataFrame({"topic": ["1"] * 5, "doc": ["a", "b", "c", "d", "e"], "grade": [1, 0, 2, 0, 1]})
    run = pd.DataFrame({"run": ["r"] * 4, "topic": ["1"] * 4, "doc": ["a", "b", "c", "d"],
                        "score": [4.0, 3.0, 2.0, 1.0]})
    out = compute(q, run, ["map", "P.5", "recall.5"])
    r = out.ranked
    got = {n: c for req in out.requests for n, c in explain(r, req).items()}
    np.testing.assert_allclose(got["map"], [1 / 3, 0, (2 / 3) / 3, 0])
    np.testing.assert_allclose(got["P_5"], [0.2, 0, 0.2, 0])
    np.testing.assert_allclose(got["recall_5"], [1 / 3, 0, 1 / 3, 0])
    ndcg = compute(q, run, ["ndcg_cut.5"])
    c = explain(ndcg.ranked, ndcg.requests[0])["ndcg_cut_5"]
    idcg = 2 + 1 / np.log2(3) + 1 / np.log2(4)
    np.testing.assert_allclose(c, [1 / idcg, 0, 2 / np.log2(4) / idcg, 0])


def test_request_for_output():
    for spec, name in zip(SPECS, NAMES):
        req = request_for_output(name)
        assert name in req.names and req.measure.name == spec.split(".")[0]


@pytest.mark.parametrize("which", ["demo", "sim"])
def test_model_drilldown_contributions_equal_engine(campaigns, which):
    """The TUI model's drill-down: every (run, topic) list's contributions sum to the engine's value
    (engine.evaluation.evaluate with the campaign's gains)."""
    camp = campaigns[which]
    c = load_campaign(camp)
    long = evaluate(c.qrels(), c.runs(), SPECS, options=c.eval_options(), gains=c.gains())
    want = long.set_index(["run", "topic", "measure"])["value"]
    model = CampaignModel.load(camp)
    model.evaluate(["map"])
    s = model.scores
    checked = 0
    for topic in s.topics:
        for name in NAMES:
            contrib, values = model.contributions(topic, name)
            r = model.topic_ranked(topic)
            sums = r.seg_sum(contrib)
            for g in range(r.n_groups):
                run = r.run_names[r.g_run[g]]
                assert sums[g] == pytest.approx(want[(run, topic, name)], abs=1e-12)
                assert values[g] == pytest.approx(want[(run, topic, name)], abs=1e-12)
                checked += 1
    assert checked == len(NAMES) * int((s.group_of >= 0).sum())
    # the drill-down table carries them (whole list: the sum is the value)
    run, topic = s.runs[0], s.topics[0]
    df = model.ranked_list(run, topic, "ndcg_cut_10", limit=None)
    assert df["contribution"].notna().all()
    assert df["contribution"].sum() == pytest.approx(want[(run, topic, "ndcg_cut_10")], abs=1e-12)


def test_drilldown_shows_contributions(campaigns, tmp_path):
    from tui.app import CranfieldApp
    from tui.testing import press, screen_text, settle

    async def go():
        app = CranfieldApp(campaigns["demo"], export_dir=tmp_path, measures=["ndcg_cut.10"])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await press(pilot, "m", "enter", "t")
            scr = app.screen
            assert type(scr).__name__ == "TopicScreen" and scr.single
            text = screen_text(app)
            assert "contributions sum to" in text
            t = scr.query_one("#topic-table")
            shown = [str(t.get_row_at(i)[4]) for i in range(min(10, t.row_count))]
            assert any(x not in ("", "0.0000") for x in shown)
            whole = app.model.ranked_list(scr.run, scr.topic, "ndcg_cut_10", limit=None)
            value = app.model.scores.matrix["ndcg_cut_10"][app.model.scores.runs.index(scr.run),
                                                           app.model.scores.topics.index(scr.topic)]
            assert whole["contribution"].sum() == pytest.approx(value, abs=1e-12)
    asyncio.run(go())
