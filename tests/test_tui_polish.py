"""Issue 36 items 5 and 6 at 80x24: campaigns without retrieval runs, the leaderboard's fixed run column and
column-wise scrolling, pickers (type to filter, open on the current item, no wrap), notifications held
while a dialog is open, plots that keep 8 data rows, the job line at 80 columns, wording, and ids shown
escaped (engine.util.names.shown) on every screen that prints them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.nuggets.simulate import simulate_rag, write_rag_campaign
from tui.app import CranfieldApp
from tui.testing import press, private_copy, run_async, screen_text, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"
EVIL = "ev\x1b[7mil"                      # a run tag holding an escape sequence (reverse video)
EVIL_SHOWN = "ev\\x1b[7mil"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cranfield.cli", *args], cwd=ROOT, capture_output=True,
                          text=True)


@pytest.fixture
def fresh(tmp_path) -> Path:
    assert cli("init", str(tmp_path / "fresh")).returncode == 0
    return tmp_path / "fresh"


@pytest.fixture
def rag(tmp_path) -> Path:
    return write_rag_campaign(simulate_rag(3, 12, nuggets=(2, 3), seed=4), tmp_path / "rag", with_nuggets=False)


def demo(tmp_path) -> Path:
    return private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))


def evil_demo(tmp_path) -> Path:
    """The demo with run deltaA2 renamed to a tag holding ESC [7m (in its file and campaign.yaml)."""
    camp = demo(tmp_path)
    run = camp / "runs" / "deltaA2.txt"
    run.write_text(run.read_text().replace(" deltaA2\n", f" {EVIL}\n"))
    cfg = camp / "campaign.yaml"
    assert "\n  deltaA2:\n" in cfg.read_text()
    cfg.write_text(cfg.read_text().replace("\n  deltaA2:\n", '\n  "ev\\e[7mil":\n'))
    return camp


def lines80(app) -> list[str]:
    text = screen_text(app)
    assert all(len(ln) <= 80 for ln in text.splitlines())
    return text.splitlines()


# ---------------------------------------------------------------------------------------------- item 5
@run_async
async def test_a_fresh_campaign_says_on_every_screen_what_is_missing(fresh):
    """Before: Leaderboard and Matrix said "Loading…" for good, Stability was blank, cost empty."""
    app = CranfieldApp(fresh, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in ("l", "m", "v", "c"):
            await press(pilot, key)
            lines = lines80(app)
            assert "Loading…" not in "\n".join(lines), key
            said = [ln for ln in lines if "no runs yet: copy run files into runs/" in ln]
            assert len(said) == 1 and "then ctrl+r" in said[0], (key, lines[:4])
        await press(pilot, "s")                     # a key of a screen that needs scores says the same
        assert "no runs yet" in app.notices[-1].message


@run_async
async def test_cost_screen_leaves_the_keys_to_the_app(fresh):
    """Before: the tau target input took the focus, so c k p b typed "kpb" into it."""
    app = CranfieldApp(fresh, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        assert app.screen.query_one("#cost-tau").value == "0.9"
        await press(pilot, "k")
        assert type(app.screen).__name__ == "AgreementScreen"
        await press(pilot, "c", "p")
        assert type(app.screen).__name__ == "PoolScreen"
        await press(pilot, "c")
        assert app.screen.query_one("#cost-tau").value == "0.9"


@run_async
async def test_a_rag_campaign_without_retrieval_runs(rag):
    """Before: Matrix said "Loading…", Stability was blank, j raised "no run results to pool" (an error
    notification: settle fails on it), Home said "0 runs" beside the answer runs."""
    app = CranfieldApp(rag, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        home = screen_text(app)
        assert "0 runs (0 groups, 0 manual, 0 pooled) · 3 answer runs · 12 topics" in home.replace("\n ", " ")
        topics = [ln.split()[0] for ln in home.splitlines() if ln.strip().startswith("q")]
        assert topics[:12] == [f"q{i}" for i in range(1, 13)]          # natural order: q2 before q10
        for key in ("m", "v", "c", "j", "p"):
            await press(pilot, key)
            lines = lines80(app)
            said = [ln for ln in lines if "only answer runs here: l lists their nugget scores" in ln]
            assert len(said) == 1, (key, lines[:5])
        await press(pilot, "j", "0")                   # a judging key: said, not raised
        assert "only answer runs here" in app.notices[-1].message
        await press(pilot, "l")
        lines = lines80(app)
        assert any("Answer runs · no nuggets yet: N creates them (a adds one)" in ln for ln in lines)
        assert not any(n.severity == "error" for n in app.notices)


def test_status_lists_the_answer_runs(rag):
    out = cli("status", str(rag), "--plain")
    assert out.returncode == 0, out.stderr
    assert "answer runs:   3 in answers/" in out.stdout
    table = out.stdout.split("Answer runs (answers/)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0].split() == ["run", "file", "topics"]
    assert [r.split() for r in table[1:]] == [["rag01", "rag01.jsonl", "12"], ["rag02", "rag02.jsonl", "12"],
                                              ["rag03", "rag03.jsonl", "12"]]


# ---------------------------------------------------------------------------------------------- item 6
MANY = ["map", "P.10", "P.20", "ndcg_cut.10", "bpref", "recip_rank", "Rprec", "P.5"]


def header(app) -> str:
    return next(ln for ln in screen_text(app).splitlines() if "1:run" in ln)


@run_async
async def test_leaderboard_keeps_the_run_column_and_scrolls_by_columns(tmp_path):
    """Before: → scrolled one character (30 presses for two columns) and the run names scrolled away."""
    app = CranfieldApp(demo(tmp_path), measures=MANY, export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        heads = [header(app)]
        for _ in range(4):
            await press(pilot, "right")
            heads.append(header(app))
        for h in heads:
            assert h.startswith("  # ≈ 1:run")                # the run column stays
            assert "cedarA1" in next(ln for ln in screen_text(app).splitlines() if ln.startswith("  1 "))
        # each → takes exactly one whole column off the left: grp, MP, map, P_10
        firsts = [h.split("1:run", 1)[1].lstrip(" ←").split()[0] for h in heads]
        assert firsts == ["2:grp", "MP", "3:map▼", "4:P_10", "5:P_20"]
        await press(pilot, "left")
        assert header(app) == heads[3]


@run_async
async def test_pickers_filter_open_on_the_current_item_and_do_not_wrap(tmp_path):
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "a")                   # the measures picker: 150 entries
        lst = app.screen.query_one("#choice")
        total = lst.option_count
        assert total >= 100 and f"type to filter ({total} options)" in screen_text(app)
        await press(pilot, *"ndcg_cut.2")
        assert [lst.get_option_at_index(i).prompt.plain for i in range(lst.option_count)] == [
            "ndcg_cut.20", "ndcg_cut.200"]
        assert f"filter ndcg_cut.2: 2 of {total}" in screen_text(app)
        await press(pilot, "down", "down", "down")     # stays on the last: no wrap to the top
        assert lst.highlighted == 1
        await press(pilot, "up", "up", "up")
        assert lst.highlighted == 0
        await press(pilot, "space", "backspace", "backspace")
        assert lst.option_count > 2
        await press(pilot, "enter")                    # the choice made under the filter is kept
        await settle(pilot)
        assert "ndcg_cut.20" in app.measures and "map" in app.measures
        await press(pilot, "a")
        lst = app.screen.query_one("#choice")          # a multi picker opens on the first chosen measure
        assert lst.get_option_at_index(lst.highlighted).prompt.plain == app.measures[0]
        await press(pilot, "escape", "down", "down", "down", "x", "a")      # compare: picker of run A
        run_a = app.screen_stack[-2].a
        lst = app.screen.query_one("#choice")
        assert lst.get_option_at_index(lst.highlighted).prompt.plain == run_a != app.model.scores.runs[0]


@run_async
async def test_notifications_wait_while_a_dialog_is_open(tmp_path):
    """Before: toasts were drawn over pickers and forms (Textual draws every notification it is given on
    the screen on top)."""
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "f")
        assert type(app.screen).__name__ == "ChoiceScreen"
        given = [n.message for n in app._notifications]
        app.notify("something happened meanwhile")
        await settle(pilot)
        assert app.notices[-1].message == "something happened meanwhile"       # recorded at once
        assert [n.message for n in app._notifications] == given                 # not handed to Textual yet
        await press(pilot, "escape")
        await settle(pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen"
        assert [n.message for n in app._notifications][-1] == "something happened meanwhile"


@run_async
async def test_reduction_plot_keeps_eight_rows_or_says_press_f(tmp_path):
    """Before: the reduction plot got 3 rows of data and no legend at 80x24."""
    from tui.widgets.plot import Plot
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "v", "4", "r")
        await settle(pilot)
        plot = app.screen.query_one("#st-red-plot", Plot)
        assert plot.figure is not None and plot.figure.series
        text = screen_text(app)
        if plot.size.height < 13:
            assert "(press f for full screen: Kendall tau" in text.replace("\n", " ")
        else:
            assert sum("┤" in ln for ln in text.splitlines()) >= 4
        await press(pilot, "f")
        assert type(app.screen).__name__ == "PlotScreen"


@run_async
async def test_job_line_keeps_its_escape_hint_at_80_columns(tmp_path):
    """Before: a long job text was cut at 60% of the line, taking "(escape cancels)" with it."""
    from tui.widgets.jobbar import JobBar
    app = CranfieldApp(demo(tmp_path), export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        bar = app.screen.query_one(JobBar)
        bar.start("evaluating with 128 judgments per topic on a sample of 1000 topics of the campaign")
        await pilot.pause()
        line = next(ln for ln in screen_text(app).splitlines() if "evaluating" in ln)
        assert "…" in line and "(escape cancels)" in line and len(line) <= 80


def test_plural_wording():
    from tui.widgets.cells import plural
    assert [plural(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    source = (ROOT / "tui" / "screens" / "cost.py").read_text()
    assert "w.p." not in source and "with probability 95%" in source


# ---------------------------------------------------------------------------------------------- ids escaped
@run_async
async def test_a_run_tag_with_an_escape_sequence_shows_escaped(tmp_path):
    """A run tag holding ESC [7m reached the terminal raw on the leaderboard, compare and stability."""
    app = CranfieldApp(evil_demo(tmp_path), export_dir=tmp_path / "x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert EVIL in app.model.scores.runs
        await press(pilot, "l")
        text = screen_text(app)
        assert "\x1b" not in text and f"12   {EVIL_SHOWN} delta" in text
        await press(pilot, "end", "x")                 # compare: run A is the tag
        assert app.screen.a == EVIL
        text = screen_text(app)
        assert "\x1b" not in text and EVIL_SHOWN in text
        await press(pilot, "v", "3", "d")
        await settle(pilot)
        text = screen_text(app)
        assert "\x1b" not in text and EVIL_SHOWN in text


@run_async
async def test_nugget_rows_show_escaped(rag):
    """Nugget text with ESC reached the terminal raw (and "[31m" after it was read as a tag)."""
    from engine.nuggets.store import add_nuggets
    add_nuggets(rag, "q1", [("fact with [b]markup[/b] and \x1b[31m red", "vital")], by="ann")
    app = CranfieldApp(rag, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "N")
        text = screen_text(app)
        assert "\x1b" not in text and "fact with [b]markup[/b] and \\x1b[31m red" in text


def test_the_measures_picker_does_not_depend_on_what_was_asked_before():
    """A variant made on demand (gd_ndcg@3, once a request named it) is not offered by the picker: its list
    is the same in every process whatever ran before (a registry filled by an earlier call)."""
    from engine.measures.registry import lookup
    from tui.model.scores import measure_choices
    before = measure_choices()
    assert lookup("gd_ndcg@3") is not None and lookup("gd_err@7") is not None
    assert measure_choices() == before and "gd_ndcg@3" not in before and "gd_ndcg@20" in before
