"""Background work in the TUI (tui.work): a cancelled re-evaluation leaves the old scores, measures and screens
entirely; the test helpers (tui.testing) fail on a worker error or an error notification."""
from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import BackgroundError, press, private_copy, run_async, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
OLD = ["map", "P_10", "ndcg_cut_10", "bpref"]          # the demo's measures (campaign.yaml), as columns


def _columns(app) -> list[str]:
    return list(app.screen.query_one("#lb").column_keys)


async def _until(pilot, cond, seconds: float = 30.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if cond():
            return True
        await asyncio.sleep(0.05)
        await pilot.pause()
    return cond()


@run_async
async def test_a_cancelled_evaluation_leaves_the_old_measures(tmp_path, monkeypatch):
    """New measures chosen on the leaderboard, the evaluation cancelled (escape) while it is held: once the
    abandoned evaluation has finished anyway, the leaderboard (redrawn), the app's measures and model, and
    a screen opened afterwards all still show the old measures."""
    camp = private_copy(DEMO, tmp_path / "demo")
    started, gate, finished = threading.Event(), threading.Event(), threading.Event()
    real = CampaignModel.evaluate

    def held(self, specs, **kw):
        if "map" in specs:                          # the load's evaluation runs as usual
            return real(self, specs, **kw)
        started.set()
        gate.wait(60)                               # the new measures' evaluation waits for the test
        try:
            return real(self, specs)
        finally:
            finished.set()
    monkeypatch.setattr(CampaignModel, "evaluate", held)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            await press(pilot, "l")
            assert _columns(app)[5:9] == OLD
            model, scores, version = app.model, app.model.scores, app.data_version
            # the measure picker lists the current measures, all selected: deselect map, confirm
            await pilot.press("a")
            await pilot.pause()
            await pilot.press("space", "enter")
            await pilot.pause()
            assert started.wait(20) and app.busy and app.status == "evaluating"
            await pilot.press("escape")             # cancels the evaluation
            await pilot.pause()
            assert not app.busy and app.status == "ready"
            assert app.notices[-1].message == "cancelled"
            gate.set()                              # the abandoned evaluation finishes in its thread
            assert await _until(pilot, finished.is_set)
            await pilot.pause(0.2)
            app.data_version += 1                   # force every screen to redraw from the app's state
            app.campaign_changed()
            await settle(pilot)
            assert app.measures == ["map", "P.10", "ndcg_cut.10", "bpref"]
            assert app.model is model and app.model.scores is scores and app.data_version == version + 1
            assert app.model.scores.measures == OLD
            assert _columns(app)[5:9] == OLD
            await press(pilot, "m")                 # another screen opened afterwards
            assert app.screen.measure == "map"
            await press(pilot, "l")
            assert _columns(app)[5:9] == OLD
    finally:
        gate.set()


@run_async
async def test_an_uncancelled_evaluation_commits_the_new_measures(tmp_path):
    """The same choice left to finish: the new columns and the app's new measures."""
    camp = private_copy(DEMO, tmp_path / "demo")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "a", "space", "enter")
        await settle(pilot)
        assert app.measures == ["P.10", "ndcg_cut.10", "bpref"]
        assert app.model.scores.measures == OLD[1:] and _columns(app)[5:8] == OLD[1:]


@run_async
async def test_settle_raises_on_a_failed_worker(tmp_path, monkeypatch):
    """A planted bug in a screen's background work (the stability screen's G-study) fails the helper,
    though the app itself only shows a notification."""
    def broken(*args, **kw):
        raise ZeroDivisionError("planted")
    monkeypatch.setattr(CampaignModel, "g_study", staticmethod(broken))
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        with pytest.raises(BackgroundError, match="ZeroDivisionError: planted"):
            await press(pilot, "v")
        assert any("planted" in n.message and n.severity == "error" for n in app.notices)
        assert app.return_code is None             # the app keeps running
        await settle(pilot)                        # reported once


@run_async
async def test_settle_raises_on_an_error_notification_unless_expected(tmp_path):
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.set_measures(["nosuchmeasure"])
        with pytest.raises(BackgroundError, match="nosuchmeasure"):
            await settle(pilot)
        app.set_measures(["nosuchmeasure"])
        await settle(pilot, errors_ok=True)
        assert app.measures == ["map", "P.10", "ndcg_cut.10", "bpref"]
