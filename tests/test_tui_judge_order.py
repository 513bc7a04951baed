"""The judge screen's next document: which topic it opens on and the order of each topic's documents.

The figures were recorded from the screen before its first-open-topic search built the pool once for
every topic (it had built one per topic); they pin that the faster search changed no order: the
campaign's depth and online strategies (no pool written), and a seeded sampling pool written by the pool
builder. The engine's one-pass per-topic pools equal a pool built for each topic alone."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tui.app import CranfieldApp
from tui.testing import deepen_demo_pool, press, private_copy, run_async, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def demo(tmp_path, depth: int, strategy: str = "depth") -> Path:
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    deepen_demo_pool(camp, depth)
    if strategy != "depth":
        cfg = camp / "campaign.yaml"
        cfg.write_text(cfg.read_text().replace(f"strategy: depth\n  depth: {depth}\n",
                                               f"strategy: {strategy}\n  depth: {depth}\n"))
    return camp


def judge_all(camp: Path, topic: str, docs: list[str]) -> None:
    """Another assessor (bob) judges `docs` of `topic` through the engine, as `cranfield judge` would."""
    from engine.judging.workflow import record_judgment
    for d in docs:
        record_judgment(camp, topic, d, 0, assessor="bob", seconds=5.0, strategy="depth")


async def opened(camp: Path, tmp_path) -> dict:
    """ann's judge screen: the topic and document it opens on, and each topic's first 3 open documents."""
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        s = app.screen
        out = {"topic": s.topic, "doc": s.doc,
               "open": {t: s.open_documents(t, 3) for t in app.model.pool_progress()["topic"]}}
        await pilot.press("q")
    return out


@run_async
async def test_depth_pool_with_the_first_topics_judged_opens_on_the_next_topic(tmp_path):
    camp = demo(tmp_path, 51)
    judge_all(camp, "401", ["D401-405", "D401-85"])        # every document the depth-51 pool adds
    judge_all(camp, "402", ["D402-59", "D402-391"])
    got = await opened(camp, tmp_path)
    assert (got["topic"], got["doc"]) == ("403", "D403-142")
    o = got["open"]
    assert o["401"] == [] and o["402"] == []
    assert o["403"] == ["D403-142", "D403-265", "D403-172"]
    assert o["407"] == ["D407-407"]
    assert o["413"] == ["D413-463", "D413-321", "D413-178"]
    assert o["415"] == ["D415-149", "D415-393", "D415-481"]
    assert sum(map(len, o.values())) == 39 and o["419"] == []


@run_async
async def test_online_strategy_order_is_unchanged(tmp_path):
    camp = demo(tmp_path, 51, "mtf")
    judge_all(camp, "401", ["D401-405", "D401-85"])
    got = await opened(camp, tmp_path)
    assert (got["topic"], got["doc"]) == ("402", "D402-59")
    o = got["open"]
    assert [o[t] for t in ("403", "408", "409", "418", "419", "420")] == [
        ["D403-142"], ["D408-189"], ["D409-371"], ["D418-341"], [], ["D420-144"]]


@run_async
async def test_seeded_sampling_pool_order_is_unchanged(tmp_path):
    from tui.model import CampaignModel
    camp = demo(tmp_path, 60)
    m = CampaignModel.load(camp)
    m.write_pool("seeded", m.build_pool("uniform", 10, depth=60, seed=7, pooled=None))
    judge_all(camp, "401", ["D401-414", "D401-405"])
    got = await opened(camp, tmp_path)
    assert (got["topic"], got["doc"]) == ("402", "D402-327")
    o = got["open"]
    assert o["403"] == ["D403-95", "D403-131", "D403-128"]      # the first 3 (of D403-205, D403-199 too)
    assert o["408"] == [] and o["420"] == ["D420-272", "D420-365", "D420-401"]


@pytest.mark.parametrize("strategy,budget,params", [
    ("depth", None, {}), ("depth", 7, {}), ("depth", None, {"k": 3}), ("take_n", 9, {}), ("uniform", 10, {}), ("uniform", None, {"rate": 0.2}),
    ("stratified", 12, {}), ("statap", 8, {})])
def test_one_pass_topic_pools_equal_a_pool_per_topic(strategy, budget, params):
    """engine.judging.workflow.topic_pools (one candidate table) == build_pool(topics=[t]) for every topic,
    seeded strategies included: each topic draws from its own generator seeded alike."""
    from engine.judging.workflow import topic_pools
    from engine.pooling import build_pool
    from tui.model import CampaignModel
    runs = CampaignModel.load(DEMO).runs
    pooled = sorted(set(runs["run"].astype(str)))[1:]          # a pooled-run selection, not every run
    got = topic_pools(runs, strategy, budget, depth=60, seed=11, pooled=pooled, **params)
    topics = sorted(set(runs["topic"].astype(str)))
    assert sorted(got) == topics
    for t in topics:
        one = build_pool(runs, strategy, budget, depth=60, seed=11, pooled=pooled, topics=[t], **params).table
        pd.testing.assert_frame_equal(got[t], one)
    assert sum(int((p["order"] > 0).sum()) for p in got.values()) > len(topics)
