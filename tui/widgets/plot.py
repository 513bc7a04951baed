"""The one plot widget of the TUI: a plotext plot that never draws below a size it fits in and never
hands plotext a series it cannot draw (no finite points, or none inside the y range)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from rich.text import Text
from textual_plotext import PlotextPlot

MIN_WIDTH, MIN_HEIGHT = 32, 13
"""Below this many cells a plot is replaced by a line of text saying so (13 rows: 8 rows of data, the
title, the frame, the ticks and the x label)."""


@dataclass
class Figure:
    """What a plot shows: series (label, xs, ys, marker), title, x label, y range, log x axis, a horizontal line."""

    series: list[tuple[str, list[float], list[float], str]] = field(default_factory=list)
    title: str = ""
    xlabel: str = ""
    ylim: tuple[float, float] | None = None
    logx: bool = False
    hline: float | None = None


def drawable(xs: Sequence[float], ys: Sequence[float], ylim: tuple[float, float] | None = None,
             logx: bool = False) -> tuple[list[float], list[float]]:
    """The points plotext can draw: finite, inside `ylim`, x > 0 on a log axis."""
    x = np.asarray(xs, float)
    y = np.asarray(ys, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ylim is not None:
        ok &= (y >= ylim[0]) & (y <= ylim[1])
    if logx:
        ok &= x > 0
    return x[ok].tolist(), y[ok].tolist()


class Plot(PlotextPlot):
    """`draw(figure)` replaces what is shown; the plot is built at each render for the widget's size."""

    def __init__(self, *, id: str | None = None, classes: str | None = None, empty: str = "nothing to plot yet"):
        super().__init__(id=id, classes=classes)
        self.figure: Figure | None = None
        self.empty = empty

    def draw(self, figure: Figure) -> None:
        """Show `figure` (series without a drawable point are left out, with their legend entry)."""
        series = []
        for label, xs, ys, marker in figure.series:
            x, y = drawable(xs, ys, figure.ylim, figure.logx)
            if x:
                series.append((label, x, y, marker))
        self.figure = Figure(series, figure.title, figure.xlabel, figure.ylim, figure.logx, figure.hline)
        self.refresh()

    def _replot(self) -> None:
        """Hand plotext the figure afresh: plotext's build takes the log of its stored x values in place, so a
        log-x figure built twice (any second render) would fail on log10(log10(x))."""
        figure = self.figure
        plt = self.plt
        plt.clear_figure()
        if figure is None or not figure.series:
            return
        for label, x, y, marker in figure.series:
            plt.plot(x, y, label=label, marker=marker)
        if figure.hline is not None:
            plt.hline(figure.hline)
        if figure.logx:
            plt.xscale("log")
        if figure.ylim is not None:
            plt.ylim(*figure.ylim)
        plt.title(figure.title)
        plt.xlabel(figure.xlabel)

    def placeholder(self) -> str | None:
        """The text shown instead of the plot, or None when the plot is drawn."""
        w, h = self.size
        if self.figure is None or not self.figure.series:
            what = self.figure.title + ": no finite values to plot" if self.figure is not None else self.empty
            return f"({what})"
        if w < MIN_WIDTH or h < MIN_HEIGHT:
            full = hasattr(self.screen, "action_full_plot") if self.is_attached else False
            return (f"({'press f for full screen: ' if full else ''}{self.figure.title}: the plot needs "
                    f"{MIN_WIDTH}x{MIN_HEIGHT} cells, it has {w}x{h}"
                    f"{'' if full else '; a larger terminal shows it'}; e exports its numbers)")
        return None

    def render(self):
        text = self.placeholder()
        if text is not None:
            return Text(text, style="dim")
        try:
            self._replot()
            return super().render()
        except Exception:  # plotext failing on some shape must not end the app
            return Text(f"({self.figure.title}: the plot cannot be drawn at {self.size.width}x{self.size.height})",
                        style="dim")
