"""The Nuggets and Assign screens at 80x24: every key, the stores they write, and a key storm."""
from __future__ import annotations

import random

import pytest

from engine.nuggets.simulate import simulate_rag, write_rag_campaign
from engine.nuggets.store import current_nuggets, nugget_history, read_assignments
from tui.nuggets import AssignScreen, NuggetsApp, NuggetsScreen
from tui.testing import press, run_async, screen_text, settle


@pytest.fixture
def camp(tmp_path):
    return write_rag_campaign(simulate_rag(3, 2, nuggets=(2, 3), seed=4), tmp_path / "c", with_nuggets=False)


@run_async
async def test_nuggets_screen_keys(camp):
    app = NuggetsApp(camp, "human", "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, NuggetsScreen)
        assert "Topic q1 (1/2) · 0 nuggets" in screen_text(app)
        await press(pilot, "enter")                           # nothing to assign yet: a warning, no screen
        assert isinstance(app.screen, NuggetsScreen)
        await press(pilot, "a")
        await pilot.press(*"the capital is Paris")
        await press(pilot, "enter")
        await press(pilot, "a")
        await pilot.press(*"second fact")
        await press(pilot, "enter")
        await press(pilot, "a", "x", "escape")                # cancelled: nothing written
        nug = current_nuggets(camp, "q1")
        assert list(nug["text"]) == ["the capital is Paris", "second fact"]
        assert set(nug["provenance"]) == {"person"} and set(nug["created_by"]) == {"ann"}
        await press(pilot, "i")                                # first row: okay -> vital
        assert current_nuggets(camp, "q1").set_index("nugget").loc["n1", "importance"] == "vital"
        await press(pilot, "down", "r")
        for _ in range(len("second fact")):
            await pilot.press("backspace")
        await pilot.press(*"reworded")
        await press(pilot, "enter")
        assert current_nuggets(camp, "q1").set_index("nugget").loc["n2", "text"] == "reworded"
        assert [h["op"] for h in nugget_history(camp, "q1", "n2")] == ["create", "edit"]
        text = screen_text(app)
        assert "VITAL" in text and "2 nuggets, 1 vital" in text and "assigned 0/6" in text
        assert "⏎ assign" in text and "v Passages" in text and "q Quit" in text          # the whole footer fits in 80 columns
        assert all(len(line) <= 80 for line in text.splitlines())
        await press(pilot, "v")
        text = screen_text(app)
        assert "cited passage(s)" in text and "q1-p" in text and "esc Back" in text
        await press(pilot, "escape")
        assert isinstance(app.screen, NuggetsScreen)
        await press(pilot, "right_square_bracket")
        assert "Topic q2 (2/2)" in screen_text(app)
        await press(pilot, "left_square_bracket", "a")
        await pilot.press(*"to retire")
        await press(pilot, "enter", "down", "down", "d")
        assert list(current_nuggets(camp, "q1")["nugget"]) == ["n1", "n2"]
        await press(pilot, "q")
    assert not app.is_running


@run_async
async def test_assign_screen_keys_and_leaderboard(camp):
    from engine.nuggets.store import add_nuggets
    from engine.nuggets.campaign import leaderboard
    add_nuggets(camp, "q1", [("fact one", "vital"), ("fact two", "okay")], by="ann")
    app = NuggetsApp(camp, "human", "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        assert isinstance(app.screen, AssignScreen)
        text = screen_text(app)
        assert "answer 1/3 run rag01" in text and "nugget 1/2" in text and "not assigned yet" in text
        await press(pilot, "s", "p")                            # rag01: n1 support, n2 partial
        assert "answer 2/3 run rag02" in screen_text(app)
        await press(pilot, "n", "s")                            # rag02: n1 not, n2 support
        a = read_assignments(camp, "human").set_index(["run", "nugget"])["label"].to_dict()
        assert a == {("rag01", "n1"): "support", ("rag01", "n2"): "partial_support",
                     ("rag02", "n1"): "not_support", ("rag02", "n2"): "support"}
        assert (read_assignments(camp, "human")["seconds"] >= 0).all()
        board = leaderboard(camp, "human").set_index("run")
        # rag01: (1 + .5) / 2 = .75 on q1; q2 has no nuggets (not scored); rag02: .5; rag03: 0
        assert board.loc["rag01", "all"] == pytest.approx(0.75) and board.loc["rag02", "all"] == pytest.approx(0.5)
        assert board.loc["rag01", "weighted"] == pytest.approx((1 + 0.25) / 1.5)
        await press(pilot, "u")                                 # retracts rag02 n2, back on it
        assert ("rag02", "n2") not in read_assignments(camp, "human").set_index(["run", "nugget"]).index
        assert "answer 2/3 run rag02" in screen_text(app) and "nugget 2/2" in screen_text(app)
        await press(pilot, "c")
        assert "Cited passages" in screen_text(app)
        await press(pilot, "c", "left", "right", "full_stop", "comma")
        assert "answer 2/3" in screen_text(app)
        assert all(len(line) <= 80 for line in screen_text(app).splitlines())
        assert "esc Back" in screen_text(app)
        await press(pilot, "escape")
        assert isinstance(app.screen, NuggetsScreen) and "assigned 3/6" in screen_text(app)


@run_async
async def test_key_storm_never_crashes(camp):
    from engine.nuggets.store import add_nuggets
    add_nuggets(camp, "q1", [("fact one", "vital")], by="ann")
    keys = ["a", "r", "i", "d", "v", "enter", "escape", "s", "p", "n", "u", "c", "left", "right", "comma", "full_stop",
            "left_square_bracket", "right_square_bracket", "up", "down", "x", "backspace", "tab"]
    rng = random.Random(5)
    app = NuggetsApp(camp, "human", "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(80):
            await pilot.press(rng.choice(keys))
        await settle(pilot)
        assert app.is_running
        read_assignments(camp, "human")                         # the stores stay readable
        current_nuggets(camp)
