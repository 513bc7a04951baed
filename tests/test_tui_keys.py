"""Every key of the TUI, in every state: read from the classes' BINDINGS (not a hand list) and pressed
on the demo, while loading, and on a campaign with one malformed run; no exception, and q still quits.
Also: escape leaves text inputs, judging marks scores stale, a cancelled load leaves an app that quits.

Every test works on a copy of campaigns/demo in tmp_path (the demo itself is never written)."""
from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import threading
import time
from pathlib import Path

import pytest
from textual.screen import Screen
from textual.widgets import Input, Select

import tui.screens
from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import deepen_demo_pool, exported, keys_of, press, private_copy, run_async, screen_text, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"

# how to reach each screen from a loaded campaign (keys after returning to a mode's first screen);
# None: reached only from a folder of campaigns (tested by opening one)
ROUTES: dict[str, list[str] | None] = {
    "HomeScreen": ["h"], "LeaderboardScreen": ["l"], "MatrixScreen": ["m"], "PoolScreen": ["p"],
    "JudgeScreen": ["j"], "StabilityScreen": ["v"], "CostScreen": ["c"], "TrainingScreen": ["g"], "AgreementScreen": ["k"],
    "RunScreen": ["l", "enter"],
    "TopicScreen": ["m", "enter"], "HelpScreen": ["l", "question_mark"], "ChoiceScreen": ["l", "a"],
    "CompareScreen": ["l", "x"], "RunBMWScreen": ["l", "o"], "TextPrompt": ["j", "r"],
    "PickerScreen": None, "CompletionScreen": ["v", "b"],
    "SubmitScreen": ["l", "i"], "FuseScreen": ["l", "u"],
    "NuggetsModeScreen": ["N"], "AssignModeScreen": ["N", "enter"],
    "PlotScreen": ["h", "v", "2", "f"],      # h first: the Nuggets screen (visited before) uses v itself
}
MODE_SCREENS = ["HomeScreen", "LeaderboardScreen", "MatrixScreen", "PoolScreen", "JudgeScreen",
                "StabilityScreen", "CostScreen", "TrainingScreen", "AgreementScreen", "NuggetsModeScreen"]
RAG_ONLY = {"AssignModeScreen"}
"""Screens reached only in a campaign with answer runs and nuggets (test_every_binding_of_the_nugget_screens)."""


def screen_classes() -> dict[str, type]:
    """Every concrete Screen class defined in tui/screens."""
    out = {}
    for info in pkgutil.iter_modules(tui.screens.__path__):
        mod = importlib.import_module(f"tui.screens.{info.name}")
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == mod.__name__ and name != "CranfieldScreen":
                out[name] = cls
    return out


def copy_demo(dst: Path) -> Path:
    return private_copy(DEMO, dst, skip=("pools", "log.jsonl*"))


def break_one_run(camp: Path) -> Path:
    """Line 5 of the first run file no longer has six fields."""
    f = sorted((camp / "runs").iterdir())[0]
    lines = f.read_text().splitlines()
    lines[4] = "401 Q0 broken-line"
    f.write_text("\n".join(lines) + "\n")
    return f


async def to_screen(pilot, name: str, wait: bool = True) -> bool:
    """Go to screen `name` by its route; True when it is showing (`wait`: for background work too)."""
    app = pilot.app
    while len(app.screen_stack) > 1:
        app.pop_screen()
    await pilot.pause()
    for key in ROUTES[name]:
        await pilot.press(key)
        await (settle(pilot, 0) if wait else pilot.pause())
    return type(app.screen).__name__ == name


async def press_all(pilot, names: list[str], errors_ok: bool = False) -> list[tuple[str, str]]:
    """Press every key of every screen in `names`, then every key of the app from the deepest screen
    (a topic drill-down): (screen, key) pairs pressed (`errors_ok`: error notices are expected)."""
    app = pilot.app
    pressed = []
    plan = [(n, keys_of(screen_classes()[n])) for n in names] + [("TopicScreen", keys_of(CranfieldApp))]
    for name, keys in plan:
        cls = screen_classes()[name]
        for key in keys:
            if type(app.screen) is not cls and not await to_screen(pilot, name):
                break                                   # not reachable in this state (no scores yet)
            await pilot.press(key)
            await settle(pilot, 0, errors_ok=errors_ok)
            assert app.return_code is None, f"{name}: key {key} ended the app"
            if isinstance(app.focused, (Input, Select)):
                await press(pilot, "escape", errors_ok=errors_ok)
            pressed.append((name, key))
    return pressed


async def quits(pilot) -> None:
    app = pilot.app
    while len(app.screen_stack) > 1:
        app.pop_screen()
    await pilot.pause()
    t = time.perf_counter()
    await pilot.press("q")
    for _ in range(50):
        if app.return_code is not None:
            break
        await asyncio.sleep(0.02)
    assert app.return_code == 0 and time.perf_counter() - t < 2


def test_every_screen_has_a_route():
    assert set(screen_classes()) == set(ROUTES)
    for cls in screen_classes().values():
        assert keys_of(cls) or cls.__name__ == "CranfieldScreen"


@pytest.mark.parametrize("broken", [False, True], ids=["demo", "malformed-run"])
@run_async
async def test_every_binding_of_every_screen(tmp_path, broken):
    camp = copy_demo(tmp_path / "demo")
    if broken:
        bad = break_one_run(camp)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="keys")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, errors_ok=broken)         # the malformed run's "Input problems" notice
        assert app.model is not None and app.model.scores is not None
        if broken:
            # the rest loaded: every other run is scored; Home lists the error, the toast stays
            assert len(app.model.scores.runs) == 11 and bad.stem not in app.model.scores.runs
            await press(pilot, "h")
            assert f"{bad.name}:5" in screen_text(app).replace("\n", "")
        # the demo: every binding of every screen; with a malformed run (the state that differs: a problem
        # listed, one run fewer) every binding of every mode screen and of the app; its drill-downs are the
        # demo's code on one run fewer, and the seeded key storm (test_tui_key_storm) walks them there too
        names = [n for n, r in ROUTES.items() if r is not None and (not broken or n in MODE_SCREENS)]
        pressed = await press_all(pilot, names, errors_ok=broken)
        reached = {n for n, _ in pressed}
        assert reached == (set(names) | {"TopicScreen"}) - RAG_ONLY      # TopicScreen: where the app keys go
        assert {k for n, k in pressed if n == "TopicScreen"} >= set(keys_of(CranfieldApp))
        if broken:                                      # still listed after everything (ctrl+r too)
            assert any(f"{bad.name}:5" in p for p in app.model.problems())
        await quits(pilot)


@run_async
async def test_every_binding_of_the_nugget_screens(tmp_path):
    """A simulated RAG campaign (answer runs, true nuggets, no retrieval runs): every key of the Nuggets and
    Assign screens and of the leaderboard's answer runs, then every key of the app."""
    from engine.nuggets.simulate import simulate_rag, write_rag_campaign
    camp = write_rag_campaign(simulate_rag(3, 2, nuggets=(2, 3), seed=4), tmp_path / "rag")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="keys")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        names = ["NuggetsModeScreen", "AssignModeScreen", "LeaderboardScreen"]
        pressed = await press_all(pilot, names)
        assert {n for n, _ in pressed} == set(names)
        for name in names:
            assert {k for n, k in pressed if n == name} == set(keys_of(screen_classes()[name]))
        await to_screen(pilot, "HomeScreen")
        for key in keys_of(CranfieldApp):
            await press(pilot, key, errors_ok=True)   # p: "no run results to pool" (answer runs only)
            assert app.return_code is None
            if isinstance(app.focused, (Input, Select)):
                await press(pilot, "escape")
        await quits(pilot)


@run_async
async def test_every_binding_while_loading(tmp_path, monkeypatch):
    camp = copy_demo(tmp_path / "demo")
    gate = threading.Event()
    real = CampaignModel.load.__func__

    def slow_load(cls, root):
        gate.wait(120)
        return real(cls, root)
    monkeypatch.setattr(CampaignModel, "load", classmethod(slow_load))
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.status == "loading"
            app.cancel_work = lambda: False            # keep loading whatever escape does on Home
            plan = [(n, keys_of(screen_classes()[n])) for n in MODE_SCREENS] + [("HomeScreen", keys_of(CranfieldApp))]
            for name, keys in plan:
                cls = screen_classes()[name]
                assert await to_screen(pilot, name, wait=False)
                for key in keys:
                    if key == "ctrl+r":
                        continue                         # reload would start another (blocked) load
                    if type(app.screen) is not cls:
                        assert await to_screen(pilot, name, wait=False)
                    await pilot.press(key)
                    await pilot.pause()
                    assert app.return_code is None
                    if isinstance(app.focused, (Input, Select)):
                        await pilot.press("escape")
            assert app.status == "loading"
            gate.set()
            del app.cancel_work
            await settle(pilot)
            assert app.status == "ready" and app.model.scores is not None
            await quits(pilot)
    finally:
        gate.set()


@run_async
async def test_cancelled_load_quits_at_once(tmp_path, monkeypatch):
    camp = copy_demo(tmp_path / "demo")
    gate = threading.Event()

    def stuck(cls, root):
        gate.wait(60)                                  # a load that does not notice the cancel
        raise RuntimeError("should never be delivered")
    monkeypatch.setattr(CampaignModel, "load", classmethod(stuck))
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.busy
            await pilot.press("escape")
            await pilot.pause()
            assert app.status == "cancelled" and not app.busy
            assert "cancelled" in screen_text(app)
            for key in ("l", "m", "question_mark", "escape", "h"):   # screens say why they are empty
                await pilot.press(key)
                await pilot.pause()
            await quits(pilot)
    finally:
        gate.set()


@run_async
async def test_escape_leaves_every_input(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        # matrix filter: "/" opens it, typed letters go into it, escape leaves it
        await press(pilot, "m", "slash", "l")
        inp = app.screen.query_one("#filter-input", Input)
        assert type(app.screen).__name__ == "MatrixScreen" and inp.value == "l"
        await press(pilot, "escape", "l")
        assert type(app.screen).__name__ == "LeaderboardScreen"
        # every input and select of the pool and cost screens
        for mode, key in (("PoolScreen", "p"), ("CostScreen", "c")):
            await press(pilot, key)
            widgets = list(app.screen.query(Input)) + list(app.screen.query(Select))
            assert widgets
            for w in widgets:
                w.focus()
                await pilot.pause()
                if isinstance(w, Input):
                    await press(pilot, "l")               # typed, not a screen switch
                    assert type(app.screen).__name__ == mode
                await press(pilot, "escape")
                assert type(app.screen).__name__ == mode and not isinstance(app.focused, (Input, Select))
                await press(pilot, "h")                   # the screen keys work again
                assert type(app.screen).__name__ == "HomeScreen"
                await press(pilot, key)


@run_async
async def test_judging_marks_scores_stale_until_reevaluated(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    deepen_demo_pool(camp)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="stale")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert "STALE" not in screen_text(app)
        await press(pilot, "j")
        doc = app.screen.doc
        assert doc is not None
        await press(pilot, "1")
        await press(pilot, "l")
        assert "STALE: ctrl+r re-scores" in screen_text(app)
        await press(pilot, "ctrl+r")
        await settle(pilot)
        assert "STALE" not in screen_text(app)
        assert app.model.qrels[(app.model.qrels["doc"] == doc)]["grade"].max() >= 1


@run_async
async def test_export_says_its_full_path(tmp_path, monkeypatch):
    camp = copy_demo(tmp_path / "demo")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    app = CranfieldApp(camp)                               # no --export-dir: the campaign's exports/
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "e")
        out = camp.resolve() / "exports"
        assert len(list(out.iterdir())) == 8
        assert not list(cwd.iterdir())
        assert app.last_export.startswith(f"wrote 12 rows to {out}/: {exported(out, 'leaderboard', 'csv')[0].name}")
