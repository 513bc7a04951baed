"""Plots: a series plotext cannot draw (all NaN, or outside the y range) and an area smaller than a plot
fits in never end the app (plotext's legend raised IndexError on such a series); below its minimum size a
plot is a line of text saying so."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from textual.app import App

from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import press, private_copy, run_async, screen_text, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
NAN = float("nan")


class _One(App):
    def __init__(self, figure):
        super().__init__()
        self.figure = figure

    def compose(self):
        from tui.widgets.plot import Plot
        yield Plot(id="p")

    def on_mount(self):
        self.query_one("#p").draw(self.figure)


def _text(app) -> str:
    return str(app.query_one("#p").render())


@run_async
async def test_undrawable_series_are_left_out_and_small_areas_get_text():
    from tui.widgets.plot import MIN_HEIGHT, MIN_WIDTH, Figure
    fig = Figure([("finite", [1, 2, 3], [0.2, 0.5, 0.8], "dot"), ("allnan", [1, 2, 3], [NAN] * 3, "dot"),
                  ("above", [1, 2, 3], [2.0, 3.0, 4.0], "dot")], "t", "x", ylim=(0, 1), hline=0.9)
    app = _One(fig)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        text = _text(app)
        assert "finite" in text and "allnan" not in text and "above" not in text
        assert [s[0] for s in app.query_one("#p").figure.series] == ["finite"]
    app = _One(fig)
    async with app.run_test(size=(MIN_WIDTH - 1, MIN_HEIGHT + 4)) as pilot:
        await pilot.pause()
        assert f"needs {MIN_WIDTH}x{MIN_HEIGHT} cells, it has {MIN_WIDTH - 1}x" in _text(app)
    app = _One(Figure([("allnan", [1, 2], [NAN, NAN], "dot")], "empty one", "x"))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        assert _text(app) == "(empty one: no finite values to plot)"


@run_async
async def test_a_log_x_plot_draws_at_every_render():
    """plotext takes the log of its stored x values in place at each build: before, the second render of a
    log-x figure (any redraw) failed on log10(0) and the plot showed "cannot be drawn" for good."""
    from tui.widgets.plot import Figure
    app = _One(Figure([("infap", [1.0, 20.0], [0.7, 0.79], "dot")], "log one", "percent", logx=True))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        for _ in range(3):
            text = _text(app)
            assert "infap" in text and "log one" in text and "cannot be drawn" not in text


@run_async
async def test_reduction_with_an_undefined_measure_does_not_end_the_app(tmp_path, monkeypatch):
    """A measure whose tau is undefined at every level (NaN column): today the plot's legend raised
    IndexError inside plotext and the app ended."""
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))

    def reduction(self, specs, **kw):
        return pd.DataFrame({"map": [1.0, 0.9, 0.7], "P.10": [NAN] * 3},
                            index=pd.Index([100.0, 50.0, 10.0], name="level"))
    monkeypatch.setattr(CampaignModel, "reduction", reduction)
    for size in ((120, 40), (80, 24)):
        app = CranfieldApp(camp, export_dir=tmp_path / "exports")
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await press(pilot, "v", "r")
            await settle(pilot)
            await pilot.pause()
            assert app._exception is None and app.return_code is None
            plot = app.screen.query_one("#st-red-plot")
            assert [s[0] for s in plot.figure.series] == ["map"]
            text = str(plot.render())
            from tui.widgets.plot import MIN_HEIGHT, MIN_WIDTH
            if plot.size.width >= MIN_WIDTH and plot.size.height >= MIN_HEIGHT:
                assert "map" in text and "P.10" not in text
            else:                       # at 80x24: 8 rows of data do not fit beside the table
                assert f"(press f for full screen: Kendall tau vs % of judgments kept: the plot needs " \
                       f"{MIN_WIDTH}x{MIN_HEIGHT} cells" in text
            assert "Kendall tau of the run ranking" in screen_text(app)


@run_async
async def test_f_shows_the_plot_full_screen_at_80x24(tmp_path, monkeypatch):
    """At 80x24 the stability and training plots share the screen with tables and may show only their
    placeholder; f draws the plot of the tab showing on the whole terminal, escape goes back."""
    from engine.training.report import save_result
    from tui.screens.help import HelpScreen
    from tui.screens.plotview import PlotScreen
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    save_result(camp / "training", "learn", pd.DataFrame(
        {"method": ["full", "infap", "infap"], "percent": [100.0, 1.0, 20.0], "ranker": ["ranksvm"] * 3,
         "map": [0.8, 0.7, 0.79], "docs": [1000, 10, 200]}))

    def reduction(self, specs, **kw):
        return pd.DataFrame({"map": [1.0, 0.9, 0.7]}, index=pd.Index([100.0, 50.0, 10.0], name="level"))
    monkeypatch.setattr(CampaignModel, "reduction", reduction)

    async def full(pilot, inline_id: str, series: list[str]) -> None:
        app = pilot.app
        under = app.screen
        inline = under.query_one(inline_id)
        small = inline.size
        await press(pilot, "f")
        scr = app.screen
        assert isinstance(scr, PlotScreen), type(scr)
        plot = scr.query_one("#full-plot")
        assert plot.size.width == 80 and plot.size.height >= 20 and plot.size.height > small.height
        assert plot.placeholder() is None and plot.figure.series == inline.figure.series
        assert set(series) <= {s[0] for s in plot.figure.series}
        text = str(plot.render())
        assert all(s in text for s in series) and plot.figure.title in text and "needs 32x8" not in text
        await press(pilot, "escape")
        assert app.screen is under

    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "v")
        assert "f Plot" in screen_text(app)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = str(app.screen.query_one("#help-text").render())
        assert "\n  f            Plot full screen" in help_text and "f shows the plot" in help_text
        await press(pilot, "escape", "2")
        await full(pilot, "#st-plot", ["Phi", "E rho^2"])
        await press(pilot, "r")
        await settle(pilot)
        await press(pilot, "4")
        await full(pilot, "#st-red-plot", ["map"])
        await press(pilot, "1", "f")                  # the G/D-study tab has no plot: a notice, no screen
        assert not isinstance(app.screen, PlotScreen) and "no plot" in app.notices[-1].message
        await press(pilot, "g")
        assert type(app.screen).__name__ == "TrainingScreen" and "f Plot" in screen_text(app)
        await full(pilot, "#tr-learn-plot", ["infap"])
        assert app._exception is None
