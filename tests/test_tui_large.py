"""The TUI's large-campaign mode (more than engine.evaluation.seam.LARGE_ROWS run rows): evaluation streams over
the run store and drill-downs read one topic; every table the screens show equals the in-memory mode's."""
from __future__ import annotations

import asyncio
import shutil

import numpy as np
import pandas as pd
import pytest

import engine.evaluation.seam
import tui.model as model_mod
import tui.source as source
from engine.simulation.large import write_large_campaign
from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import press, screen_text, settle


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    root = write_large_campaign(tmp_path_factory.mktemp("large") / "c", n_topics=120, n_runs=6, depth=150,
                                seed=5, judged=90, pool_depth=5)
    # leave some of the pool unjudged (grade -1) so judged depth and top-10 holes are not trivial
    q = (root / "judgments" / "qrels.txt").read_text().splitlines()
    (root / "judgments" / "qrels.txt").write_text(
        "\n".join(ln if i % 7 else " ".join(ln.split()[:3] + ["-1"]) for i, ln in enumerate(q)) + "\n")
    return root


def both(camp, monkeypatch, specs=("map", "P.10", "ndcg_cut.10")):
    model_mod._OPENED.clear()
    small = CampaignModel(source.open_campaign(camp))
    small.evaluate(list(specs))          # before the threshold drops: the engine decides when evaluating
    monkeypatch.setattr(engine.evaluation.seam, "LARGE_ROWS", 10_000)
    model_mod._OPENED.clear()
    large = CampaignModel(source.open_campaign(camp))
    assert large.large and not small.large and len(large.runs) == 0 and len(small.runs) == 120 * 6 * 150
    large.evaluate(list(specs))
    return small, large


def test_large_mode_tables_equal_in_memory(camp, monkeypatch):
    small, large = both(camp, monkeypatch)
    a, b = small.scores, large.scores
    assert b.ranked is None and a.ranked is not None      # large mode holds no row data
    assert a.runs == b.runs and a.topics == b.topics and a.measures == b.measures
    for n in a.measures:
        np.testing.assert_array_equal(a.matrix[n], b.matrix[n])
    pd.testing.assert_frame_equal(small.leaderboard(), large.leaderboard())
    for n in a.measures:
        pd.testing.assert_frame_equal(small.topic_table(n), large.topic_table(n))
    assert (small.topic_table("map")["depth"] < 150).any() and a.holes.sum() > 0
    assert small.problems() == large.problems()
    assert small.home_facts() == large.home_facts()
    for run in a.runs[:3]:
        pd.testing.assert_frame_equal(small.run_topics(run), large.run_topics(run))
        for topic in a.topics[:4]:
            pd.testing.assert_frame_equal(small.ranked_list(run, topic, "map"), large.ranked_list(run, topic, "map"))
    # the judging screen's candidates come from one topic's rows
    t = a.topics[5]
    tr = large.topic_runs(t)
    assert set(tr["topic"].astype(str)) == {t} and len(tr) == 6 * 150


def test_large_mode_app_leaderboard_and_topic(camp, monkeypatch, tmp_path):
    small, large = both(camp, monkeypatch, ("map",))
    best = small.leaderboard().iloc[0]
    model_mod._OPENED.clear()
    dst = tmp_path / "c"
    shutil.copytree(camp, dst, ignore=shutil.ignore_patterns(".cranfield-cache"))

    async def go():
        app = CranfieldApp(dst, export_dir=tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.model.large
            await press(pilot, "l")
            t = app.screen.query_one("#lb")
            top = [str(c) for c in t.get_row_at(0)]
            assert top[2] == best["run"]
            assert f"{best[app.model.scores.measures[0]]:.4f}" in " ".join(top)
            await press(pilot, "enter")         # the run screen, then a topic's ranked list from the store
            await settle(pilot)
            await press(pilot, "enter")
            await settle(pilot)
            assert "Topic" in screen_text(app) or "topic" in screen_text(app)
    asyncio.run(go())
