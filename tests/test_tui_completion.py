"""Pilot tests of the predicted-relevance screen (issue 18): every binding, tables equal to the engine's."""
from __future__ import annotations

import asyncio

import pytest

from engine.campaign.campaign import load_campaign
from engine.completion.experiment import classifier_quality, completion_poolbias
from engine.documents.store import DocStore
from tui.app import CranfieldApp
from tui.screens.completion import FRACTIONS, CompletionScreen
from tui.testing import press, settle


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    from engine.simulation.campaigns import simulate, write_campaign
    out = tmp_path_factory.mktemp("c18") / "camp"
    s = simulate(8, 6, 60, 5, grades=(0, 1, 2), n_groups=4, manual_fraction=0.25)
    write_campaign(s, out, pool_depth=20, docs=20, text_signal=0.8)
    return out


def test_completion_screen_tables_equal_engine(sim, tmp_path):
    camp = load_campaign(sim)
    st = DocStore.for_campaign(sim)
    want_q = classifier_quality(camp.qrels(), st, FRACTIONS, classifiers=("kld", "svm"),
                                rel_level=camp.binary_threshold())

    async def body():
        app = CranfieldApp(sim, export_dir=tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await press(pilot, "v", "b")
            assert isinstance(app.screen, CompletionScreen)
            await press(pilot, "f")
            await settle(pilot)
            got = app.screen.table
            assert got is not None and len(got) == len(want_q)
            assert got["f1"].round(12).tolist() == want_q["f1"].round(12).tolist()
            ms = list(app.measures)
            await press(pilot, "a")
            await settle(pilot)
            want_p, _ = completion_poolbias(camp.qrels(), camp.runs(), camp.run_meta(), ms, st, mode="manual",
                                            depth=20, rel_level=camp.binary_threshold())
            got = app.screen.table
            assert got["tau_all"].round(12).tolist() == want_p["tau_all"].round(12).tolist()
            # every binding of the screen, then Escape back and q quits
            for b in CompletionScreen.BINDINGS:
                await press(pilot, b.key.split(",")[0])
            await press(pilot, "escape", "escape")
            assert not isinstance(app.screen, CompletionScreen)
            await press(pilot, "q")
    asyncio.run(body())


def test_a_binary_threshold_of_0_reaches_the_engine(sim, tmp_path, monkeypatch):
    """relevance.binary_threshold: 0 (every judged document relevant) is the campaign's accessor's value in
    the completion experiment and the home counts, not turned into 1."""
    import shutil

    import engine.completion.experiment as experiment
    from tui.model import CampaignModel
    camp = tmp_path / "camp"
    shutil.copytree(sim, camp, ignore=shutil.ignore_patterns(".cranfield-cache", ".cranfield-store"))
    cfg = camp / "campaign.yaml"
    assert "  binary_threshold: 1\n" in cfg.read_text()
    cfg.write_text(cfg.read_text().replace("  binary_threshold: 1\n", "  binary_threshold: 0\n"))
    seen = []

    def spy(qrels, store, fractions, **kw):
        seen.append(kw["rel_level"])
        return classifier_quality(qrels, store, fractions, **kw)
    monkeypatch.setattr(experiment, "classifier_quality", spy)
    model = CampaignModel.load(camp)
    assert load_campaign(camp).binary_threshold() == 0 == model.rel_level() == model.options.rel_level
    model.completion_quality([0.5])
    assert seen == [0]
    judged = model.qrels[model.qrels["grade"] >= 0]
    assert model.home_facts()["relevant"] == len(judged)
