"""Forms keep the focus where the user types: after a refused submission the path field has it again;
a reload while typing in the pool builder's fields does not move the focus to its table (typed digits
then went to the screen's keys)."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tui.app import CranfieldApp
from tui.testing import press, private_copy, run_async, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


@run_async
async def test_refused_submission_gives_the_focus_back_to_the_path(tmp_path):
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        bad = tmp_path / "bad.txt"
        bad.write_text("401 Q0 D401-1 1 3.0\n")            # five columns
        await press(pilot, "h", "i")
        scr = app.screen
        scr.query_one("#submit-path", Input).value = str(bad)
        scr.query_one("#submit-group", Input).focus()
        await press(pilot, "enter")
        await settle(pilot)
        assert not scr.result.accepted and f"{bad}:1" in scr.result.lines[0]
        assert app.focused is scr.query_one("#submit-path", Input)
        await press(pilot, "x")                             # typed into the path, not a screen key
        assert scr.query_one("#submit-path", Input).value == f"{bad}x" and app.screen is scr


@run_async
async def test_a_reload_while_typing_in_the_pool_form_keeps_the_focus(tmp_path):
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        depth = app.screen.query_one("#pool-depth", Input)
        depth.value = ""
        depth.focus()
        await press(pilot, "6")
        app.action_reload()
        await settle(pilot)
        await press(pilot, "0")
        assert app.focused is depth and depth.value == "60"
        assert type(app.screen).__name__ == "PoolScreen"
