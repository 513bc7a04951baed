"""At 80x24, the design size: nothing shown by colour alone, no internal names, notices that do not
wrap inside a word."""
from __future__ import annotations

from pathlib import Path

from tui.app import CranfieldApp
from tui.testing import press, private_copy, run_async, screen_text, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def demo(tmp_path) -> Path:
    return private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))


@run_async
async def test_measure_picker_marks_selected_rows_with_a_glyph(tmp_path):
    """With NO_COLOR the picker's selected and unselected rows looked the same (an X in both)."""
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "a")
        chosen = set(app.measures)
        lines = [ln for ln in screen_text(app).splitlines() if "▐" in ln]
        assert len(lines) >= 8
        for ln in lines:
            name = ln.split("▌", 1)[1].strip().split()[0]
            assert ("▐✓▌" in ln) == (name in chosen), ln
        await press(pilot, "down", "space")                 # toggle the second row: its mark follows
        after = [ln for ln in screen_text(app).splitlines() if "▐" in ln]
        assert after[1].count("✓") != lines[1].count("✓")


@run_async
async def test_command_palette_names_keys_and_screens_not_actions(tmp_path):
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        cmds = list(app.get_system_commands(app.screen))
        ours = [c for c in cmds if c.help.startswith("key ")]
        assert len(ours) >= 20
        for c in ours:
            assert "(" not in c.help.split(" (")[0] and "goto" not in c.help and "_" not in c.help, c.help
        assert any(c.title == "Agreement" and c.help == "key k" for c in ours)
        assert any(c.help == "key s (Leaderboard)" for c in ours)


def test_break_paths_keeps_every_character_and_breaks_after_slashes():
    from tui.app import break_paths
    path = "/tmp/pytest-of-someone/pytest-123/test_x0/a-campaign/pools/pool-depth.tsv"
    out = break_paths(f"wrote {path} (12 topics)", 30)
    assert out.replace("\n", "") == f"wrote {path} (12 topics)"
    lines = out.split("\n")
    assert lines[0] == "wrote " and all(len(ln) <= 30 for ln in lines[:-1]) and "pool-depth.tsv (12" in out
    assert all(ln.endswith("/") for ln in lines[:-1] if ln.startswith(("/", "pytest", "test_", "a-camp")))
    assert break_paths("short words only", 10) == "short words only"


@run_async
async def test_pool_written_notice_keeps_file_names_whole(tmp_path):
    """The notice wrapped inside a word ("pool-de" / "pth.tsv") when the path did not fit the toast
    (about 35 cells at 80 columns): the path now comes in lines ending at a `/`, each within the toast."""
    camp = private_copy(DEMO, tmp_path / ("x" * 19) / "demo", skip=("pools", "log.jsonl*"))
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "p", "b")
        await settle(pilot)
        await press(pilot, "w")
        shown = list(app._notifications)[-1].message
        assert app.notices[-1].message == f"wrote {camp / 'pools' / 'pool-depth.tsv'}"
        assert shown.replace("\n", "") == app.notices[-1].message
        lines = shown.split("\n")
        assert lines[0] == "wrote " and len(lines) >= 3 and lines[-1].endswith("pool-depth.tsv")
        assert all(len(ln) <= 35 and ln.endswith("/") for ln in lines[1:-1]), lines


@run_async
async def test_a_wide_table_never_shows_a_cut_number_and_says_it_scrolls():
    """j@10 0.953 showed as '0' at the right edge with long run tags; now a column that does not fit is
    blank, the header shows → (and ← once scrolled), and scrolling right shows it whole."""
    from textual.app import App

    from tui.widgets.fasttable import FastTable

    class One(App):
        def compose(self):
            yield FastTable(id="t")

    runs = [f"a-very-long-run-tag-number-{i}" for i in range(3)]
    app = One()
    async with app.run_test(size=(40, 8)) as pilot:
        t = app.query_one("#t", FastTable)
        t.set_data(["run", "map", "j10"], ["run", "map", "j@10"], [[r, "0.5438", "0.953"] for r in runs])
        t.focus()
        await pilot.pause()
        lines = [t._window(x, 0, 40, i == 0) for i, x in enumerate([t._header] + t._lines)]
        assert lines[0].endswith("→") and not lines[0].startswith("←")
        for ln in lines[1:]:
            assert ln.rstrip().endswith("0.5438") and "0.953" not in ln and " 0\n" not in ln + "\n"
        t.scroll_to(x=t.virtual_size.width - 40, animate=False)
        await pilot.pause()
        sx = int(t.scroll_offset.x)
        assert sx > 0
        lines = [t._window(x, sx, 40, i == 0) for i, x in enumerate([t._header] + t._lines)]
        assert lines[0].startswith("←") and lines[0].rstrip().endswith("j@10")
        assert all(ln.rstrip().endswith("0.5438 0.953") for ln in lines[1:])
        rendered = t.render_line(1).text
        assert rendered == lines[1]


@run_async
async def test_every_screens_key_hints_are_whole_at_80_columns(tmp_path):
    """The footer of every screen (and modal) names each of its shown keys whole at 80x24: the predicted-
    relevance screen ended in 'q Qui'."""
    from test_tui_keys import ROUTES
    from tui.screens.help import all_bindings
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "exports")
    checked = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for name, route in ROUTES.items():
            if route is None:
                continue
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await press(pilot, "h", *route)
            await settle(pilot)
            scr = app.screen
            if type(scr).__name__ != name or not scr.query("Footer"):
                continue
            footer = screen_text(app).splitlines()[-1]
            shown = {}
            # the binding in force per key: a subclass's overrides its base's, a screen's the app's
            in_force = {bd.key: bd for bd in all_bindings(type(app))}
            in_force.update({bd.key: bd for bd in all_bindings(type(scr))})
            for bd in in_force.values():
                owner = scr if bd in all_bindings(type(scr)) else app
                if owner.check_action(bd.action.split("(")[0], ()) is False:   # hidden in this state
                    continue
                if bd.show and bd.description and bd.action not in shown:
                    shown[bd.action] = f"{bd.key_display or bd.key} {bd.description}"
            for hint in shown.values():
                k, _, d = hint.partition(" ")
                assert f" {d}" in footer or footer.startswith(d), (name, hint, footer)
            checked.append(name)
    assert len(checked) >= 12, checked


@run_async
async def test_the_matrix_says_it_scrolls_and_shows_its_last_run_whole(tmp_path):
    """The matrix showed 7 of 12 runs with no hint, and scrolled to the end it still cut the last run's
    name ('deltaA'): the scrollbar covered the last two cells."""
    import re
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "m")
        runs = list(app.model.scores.runs)
        head = [ln for ln in screen_text(app).splitlines() if ln.lstrip().startswith("topic")][0]
        assert head.rstrip().endswith("→")
        shown = [r for r in runs if re.search(rf"\b{r}\b", head)]
        assert 0 < len(shown) < len(runs)
        await press(pilot, "end")
        lines = screen_text(app).splitlines()
        head = [ln for ln in lines if ln.lstrip().startswith("topic")][0]
        last = app.screen.query_one("GridTable").column_keys[-1]
        assert "←" in head and re.search(rf"\b{re.escape(last)}$", head.rstrip())
        for ln in lines[lines.index(head) + 1:lines.index(head) + 6]:   # every value whole: .ddd
            assert all(re.fullmatch(r"[░▒▓█]?\.\d{3}", tok) for tok in ln.split()[1:]), ln


@run_async
async def test_judge_key_line_breaks_between_hints_only(tmp_path):
    """At 80 columns the judge screen's key line wrapped inside a hint: 'r' ended one line and 'rationale'
    began the next. Every hint is now whole on one line, in order, at 80 and at 50 columns."""
    from tui.testing import deepen_demo_pool
    from tui.widgets.hints import Hints, key_hint
    camp = demo(tmp_path)
    deepen_demo_pool(camp, 60)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="ann")
    want = ["0 not relevant", "1 relevant", "2 highly relevant", "s skip", "x cannot judge", "r rationale",
            "u undo", "t topic"]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        keys = app.screen.query_one("#judge-keys")
        rows = [ln.strip() for ln in screen_text(app).splitlines()[-5:-2]]   # above the nav line and footer
        text = "\n".join(rows)
        assert all(h in text for h in want), rows
        joined = "  ".join(r for r in rows if r)
        assert [joined.index(h) for h in want] == sorted(joined.index(h) for h in want)
        assert keys.size.height == 2                                          # wrapped, between hints
        hints = Hints([key_hint(*h.split(" ", 1)) for h in want])
        for width in (80, 50, 12):
            for ln in hints.lines(width):
                pieces = [p for p in ln.plain.split("  ") if p]
                assert all(p in want for p in pieces), (width, ln.plain)
                assert ln.cell_len <= width or len(pieces) == 1


@run_async
async def test_home_topic_table_fits_without_scrolling_sideways(tmp_path):
    """At 80x24 Home's topic table was one column too wide: a sideways scrollbar took a row and 'rel'
    touched the edge."""
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        t = app.screen.query_one("#home-progress")
        assert t.max_scroll_x == 0 and t.virtual_size.width <= t.scrollable_content_region.width
        head = [ln for ln in screen_text(app).splitlines() if ln.lstrip().startswith("topic")][0]
        assert "rel" in head.split("progress", 1)[1]
