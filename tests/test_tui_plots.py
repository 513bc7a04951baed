"""Plots: a series plotext cannot draw (all NaN, or outside the y range) and an area smaller than a plot
fits in never end the app (plotext's legend raised IndexError on such a series); below its minimum size a
plot is a line of text saying so."""
from __future__ import annotations

from pathlib import Path

import numpy as np
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
            if plot.size.width >= 32 and plot.size.height >= 8:
                assert "map" in text and "P.10" not in text
            else:
                assert "needs 32x8 cells" in text
            assert "Kendall tau of the run ranking" in screen_text(app)
