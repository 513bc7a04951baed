"""Pilot tests of the compare screen (x) and the run-vs-field screen (o)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from engine.campaign.campaign import load_campaign
from tui.app import CranfieldApp
from tui.testing import exported, press, private_copy, screen_text, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


async def open_compare(pilot):
    """From the loaded app: the leaderboard, then x; the compare screen showing."""
    await settle(pilot)
    await press(pilot, "l", "x")
    assert type(pilot.app.screen).__name__ == "CompareScreen"
    return pilot.app.screen


def test_compare_and_field_screens(tmp_path):
    camp = load_campaign(DEMO)
    m = camp.evaluate(["map"]).pivot_table(index="topic", columns="run", values="value", observed=True)
    order = m.mean().sort_values(ascending=False, kind="mergesort").index

    async def body():
        app = CranfieldApp(private_copy(DEMO, tmp_path / "demo"), export_dir=tmp_path)
        async with app.run_test(size=(140, 40)) as pilot:
            scr = await open_compare(pilot)
            assert (scr.a, scr.b) == (order[0], order[1]) and scr.measure == "map"
            r = scr.result
            assert r.wins + r.losses + r.ties == len(m)
            assert r.p == pytest.approx(stats.ttest_rel(m[order[0]], m[order[1]]).pvalue, rel=1e-9)
            lists = scr.query_one("#cmp-lists")
            assert lists.row_count == 20
            first_topic = scr.topic
            await press(pilot, "down")
            assert scr.topic != first_topic
            await press(pilot, "w")
            assert (scr.a, scr.b) == (order[1], order[0]) and scr.result.wins == r.losses
            await press(pilot, "t")
            assert scr.test == "wilcoxon"
            await press(pilot, "n")
            assert scr.measure != "map"
            await press(pilot, "b", "end", "enter")
            assert scr.b == camp.run_meta()["run"].iloc[-1] or scr.a == camp.run_meta()["run"].iloc[-1]
            await press(pilot, "e")
            assert list(tmp_path.glob("compare-*.csv"))
            await press(pilot, "escape", "o")
            f = app.screen
            assert type(f).__name__ == "RunBMWScreen" and f.run == order[0]
            df = f.frame.set_index("topic")
            np.testing.assert_allclose(df["best"], m.max(axis=1).loc[df.index])
            np.testing.assert_allclose(df["median"], m.median(axis=1).loc[df.index])
            np.testing.assert_allclose(df["worst"], m.min(axis=1).loc[df.index])
            np.testing.assert_allclose(df["run"], m[order[0]].loc[df.index])
            await press(pilot, "f")
            pooled = camp.run_meta().query("pooled")["run"].tolist()
            np.testing.assert_allclose(f.frame.set_index("topic")["worst"], m[pooled].min(axis=1).loc[df.index])
            await press(pilot, "n")
            assert f.measure != "map"
    asyncio.run(body())


def test_leaderboard_export_writes_significance_table(tmp_path):
    camp = load_campaign(DEMO)
    long = camp.evaluate(camp.measures())

    async def body():
        app = CranfieldApp(private_copy(DEMO, tmp_path / "demo"), export_dir=tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await press(pilot, "l", "e")
            return list(app.model.scores.measures), [str(r) for r in app.screen.frame["run"]]
    measures, runs = asyncio.run(body())
    from engine.campaign.tables import compare_scores
    expected = compare_scores(long, measures, runs=runs)
    head, tex = exported(tmp_path, "leaderboard-significance", "tex")[0].read_text().split("\n", 1)
    assert head.startswith("% leaderboard-significance · judgments: official (") and tex == expected.to_latex()
    md_head, md = exported(tmp_path, "leaderboard-significance", "md")[0].read_text().split("\n\n", 1)
    assert md_head == head[2:] and md == expected.to_markdown()
    assert tex.count(r"\textsuperscript{") > 0 and r"\textbf{" in tex


def test_compare_both_tables_readable_at_80x24(tmp_path):
    """At the design size both tables show every column (run A's and run B's) without scrolling sideways."""
    async def body():
        app = CranfieldApp(private_copy(DEMO, tmp_path / "demo"), export_dir=tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            scr = await open_compare(pilot)
            a, b = scr.a, scr.b
            text = screen_text(app)
            for tid in ("#cmp-topics", "#cmp-lists"):
                t = scr.query_one(tid)
                assert t.region.right <= 80 and t.region.height >= 5, (tid, t.region)
                assert t.virtual_size.width <= t.region.width, (tid, t.virtual_size, t.region)
            heads = [ln.split() for ln in text.splitlines()]
            assert ["topic", a, b, "diff", "outcome"] in heads
            assert ["rank", a, "g", a, b, "g", b] in heads
            assert f"{scr.topic}" in text and "Kendall tau" in text
    asyncio.run(body())
