"""The nugget screens inside the main app (mode N) and the leaderboard's answer runs, at 80x24."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.nuggets.simulate import simulate_rag, write_rag_campaign
from engine.nuggets.store import current_nuggets, read_assignments
from tui.app import CranfieldApp
from tui.testing import exported, press, private_copy, run_async, screen_text, settle

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def camp(tmp_path):
    return write_rag_campaign(simulate_rag(3, 2, nuggets=(2, 3), seed=4), tmp_path / "c", with_nuggets=False)


def board_rows(app) -> dict[str, list[str]]:
    """The leaderboard's rows on screen: run -> its cells after the run name."""
    rows = {}
    for line in screen_text(app).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1].startswith("rag"):
            rows[parts[1]] = parts[2:]
    return rows


def cli_scores(camp) -> dict[str, dict[str, str]]:
    out = subprocess.run([sys.executable, "-m", "cranfield.cli", "nuggets", "scores", str(camp)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    head = out[0].split()
    return {r.split()[0]: dict(zip(head, r.split())) for r in out[2:] if r.strip()}


@run_async
async def test_create_assign_and_see_the_leaderboard_change_in_the_main_app(camp):
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert any("leaderboard (l) shows the answer runs" in n.message for n in app.notices)
        await press(pilot, "N")
        assert type(app.screen).__name__ == "NuggetsModeScreen"
        assert "Topic q1 (1/2) · 0 nuggets" in screen_text(app)
        for text in ("the capital is Paris", "second fact"):
            await press(pilot, "a")
            await pilot.press(*text)
            await press(pilot, "enter")
        await press(pilot, "i")                                  # n1: okay -> vital
        nug = current_nuggets(camp, "q1").set_index("nugget")
        assert dict(nug["importance"]) == {"n1": "vital", "n2": "okay"} and set(nug["created_by"]) == {"ann"}
        await press(pilot, "l")                                  # nuggets, nothing assigned: every score 0
        text = screen_text(app)
        assert "Answer runs · nugget scores (human) · 3 runs" in text
        assert board_rows(app)["rag01"][:6] == ["0.0000"] * 6
        assert "n Answers/runs" in text and "q Quit" in text       # the footer whole at 80 columns
        assert all(len(line) <= 80 for line in text.splitlines())
        await press(pilot, "N", "enter")
        assert type(app.screen).__name__ == "AssignModeScreen"
        assert "answer 1/3 run rag01" in screen_text(app) and "esc Back" in screen_text(app)
        await press(pilot, "s", "p")                             # rag01: n1 (vital) support, n2 (okay) partial
        await press(pilot, "n", "s", "u")                        # rag02: n1 not, n2 support, undone
        assert ("rag02", "n2") not in read_assignments(camp, "human").set_index(["run", "nugget"]).index
        await press(pilot, "escape", "l")                        # no ctrl+r: the board follows the stores
        rows = board_rows(app)
        assert rows["rag01"][:2] == ["0.7500", "1.0000"] and rows["rag02"][:6] == ["0.0000"] * 6
        await press(pilot, "N", "enter", "full_stop", "right")   # answer 2 (rag02), nugget 2
        assert "answer 2/3 run rag02" in screen_text(app) and "nugget 2/2" in screen_text(app)
        await press(pilot, "s")
        labels = read_assignments(camp, "human").set_index(["run", "nugget"])["label"].to_dict()
        assert labels == {("rag01", "n1"): "support", ("rag01", "n2"): "partial_support",
                          ("rag02", "n1"): "not_support", ("rag02", "n2"): "support"}
        await press(pilot, "escape", "l")
        rows = board_rows(app)
        # columns: all, vital, s.all, s.vital, wtd, s.wtd, topics (q2 has no nuggets: not scored)
        # rag01: all (1 + .5)/2, vital 1/1, strict all 1/2, strict vital 1, weighted (1 + .5 * .5)/1.5,
        #        strict weighted 1/1.5; rag02: all (0 + 1)/2, vital 0, strict all 1/2, weighted .5/1.5
        # then the (answer, nugget) pairs assessed: rag01 and rag02 both of their 2, rag03 none
        assert rows["rag01"] == ["0.7500", "1.0000", "0.5000", "1.0000", "0.8333", "0.6667", "1", "2/2"]
        assert rows["rag02"] == ["0.5000", "0.0000", "0.5000", "0.0000", "0.3333", "0.3333", "1", "2/2"]
        assert rows["rag03"][7] == "0/2"
        assert "assessed 4/6 (answer, nugget) pairs (67%)" in " ".join(screen_text(app).split())
        assert rows["rag03"][:6] == ["0.0000"] * 6
        cli = cli_scores(camp)                                   # the same numbers as `cranfield nuggets scores`
        cols = ("all", "vital", "strict_all", "strict_vital", "weighted", "strict_weighted")
        for run in ("rag01", "rag02", "rag03"):
            assert rows[run][:6] == [cli[run][c] for c in cols]
        assert list(rows) == ["rag01", "rag02", "rag03"]         # best first by all
        await press(pilot, "3")                                  # sort by vital (column 3), then reversed
        assert "by vital▼" in screen_text(app)
        await press(pilot, "r")
        assert list(board_rows(app))[-1] == "rag01"
        await press(pilot, "e")
        assert exported(camp / "exports", "leaderboard-answers", "csv")
        await press(pilot, "n")                                  # no retrieval scores: stays, says why
        assert any("no retrieval scores yet" in n.message for n in app.notices)
        await press(pilot, "f", "a", "J", "space", "u", "enter")  # retrieval-only keys do nothing here
        assert type(app.screen).__name__ == "LeaderboardScreen" and app.return_code is None


@run_async
async def test_without_answer_runs_nuggets_explain_and_the_board_is_unchanged(tmp_path):
    camp = private_copy(ROOT / "campaigns" / "demo", tmp_path / "demo", skip=("pools", "log.jsonl*"))
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "N")
        text = screen_text(app)
        assert type(app.screen).__name__ == "NuggetsModeScreen"
        assert "this campaign has no answer runs (answers/) and no nuggets" in text
        for key in ("enter", "a", "r", "i", "d", "v", "right_square_bracket", "e", "escape"):
            await press(pilot, key)
            assert app.return_code is None and type(app.screen).__name__ == "NuggetsModeScreen"
        assert not (camp / "nuggets").exists()                   # nothing written
        await press(pilot, "l")
        text = screen_text(app)
        assert "n: answer runs" not in text and "Answers/runs" not in text
        await press(pilot, "n")                                  # hidden and inert without answer runs
        assert app.screen.view == "runs" and app.return_code is None
        assert "judged@10" in str(app.screen.frame.columns.tolist())


@run_async
async def test_retrieval_and_answer_runs_side_by_side(tmp_path):
    """A campaign with retrieval runs (the demo's) and answer runs: `n` switches between them, the footer
    whole at 80 columns in both."""
    import shutil
    from engine.nuggets.store import add_nuggets, assign
    camp = private_copy(ROOT / "campaigns" / "demo", tmp_path / "demo", skip=("pools", "log.jsonl*"))
    rag = write_rag_campaign(simulate_rag(2, 1, nuggets=(2, 2), seed=3), tmp_path / "rag", with_nuggets=False)
    shutil.copytree(rag / "answers", camp / "answers")
    add_nuggets(camp, "q1", [("one", "vital"), ("two", "okay")], by="ann")
    assign(camp, "human", [("rag01", "q1", "n1", "partial_support"), ("rag01", "q1", "n2", "support")])
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        text = screen_text(app)
        assert "n: answer runs" in text and "judged@10" in app.screen.frame.columns
        assert "n Answers/runs" in text and "f Filter" in text and "q Quit" in text
        assert all(len(line) <= 80 for line in text.splitlines())
        await press(pilot, "n")
        text = screen_text(app)
        assert "Answer runs · nugget scores (human) · 2 runs" in text and "f Filter" not in text
        # rag01: all (.5 + 1)/2, vital .5, strict all 1/2, strict vital 0, weighted (.5 + .5)/1.5, s.wtd .5/1.5
        assert board_rows(app)["rag01"] == ["0.7500", "0.5000", "0.5000", "0.0000", "0.6667", "0.3333", "1",
                                            "2/2"]
        await press(pilot, "n")
        assert "n: answer runs" in screen_text(app) and "judged@10" in app.screen.frame.columns


@run_async
async def test_compare_keys_without_retrieval_scores_do_not_crash(camp):
    """x and o open on a campaign of answer runs only (no retrieval scores): their measure key (n, from a
    mixin) was unguarded and ended the app with an AttributeError."""
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for keys in (("l", "x", "n", "t", "w"), ("l", "o", "n", "f", "r")):
            await press(pilot, *keys)
            assert app.return_code is None and app._exception is None
            await press(pilot, "escape")
        assert any("not available" in n.message for n in app.notices)


@run_async
async def test_answer_runs_without_nuggets_say_why(camp):
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        lines = screen_text(app).splitlines()               # one line: what is missing and what to do
        assert any("Answer runs · no nuggets yet: N creates them (a adds one)" in ln for ln in lines)
        await press(pilot, "s", "r", "1", "e", "enter")
        assert app.return_code is None and type(app.screen).__name__ == "LeaderboardScreen"
