"""A plot full screen: the plot of the tab showing, drawn on the whole terminal (readable at 80x24)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static, TabbedContent


class PlotScreen(Screen):
    """One figure on the whole screen; escape, f or q closes it."""

    TITLE = "Plot"
    HELP = "The plot of the screen below on the whole terminal. Escape, f or q goes back."
    BINDINGS = [Binding("escape,f,q", "close", "Back")]

    def __init__(self, figure) -> None:
        super().__init__()
        self.figure = figure

    def compose(self) -> ComposeResult:
        from ..widgets.plot import Plot
        yield Plot(id="full-plot", classes="full-plot")
        yield Static(f"{self.figure.title}  ·  escape / f goes back", classes="nav")

    def on_mount(self) -> None:
        from ..widgets.plot import Plot
        self.query_one("#full-plot", Plot).draw(self.figure)

    def action_close(self) -> None:
        self.dismiss()


class FullPlot:
    """For screens with plots in tabs: f (action_full_plot) shows the plot of the tab showing full screen."""

    FULL_PLOT_BINDING = Binding("f", "full_plot", "Plot", tooltip="Plot full screen")

    def shown_plot(self):
        """The plot widget of the active tab (None when that tab has none)."""
        try:
            from ..widgets.plot import Plot
        except ImportError:   # textual-plotext is not installed
            return None
        tabs = list(self.query(TabbedContent))
        for plot in self.query(Plot):
            pane = next((a for a in plot.ancestors if getattr(a, "id", None) and a.id.startswith("tab-")), None)
            if pane is None or any(t.active == pane.id for t in tabs):
                return plot
        return None

    def action_full_plot(self) -> None:
        plot = self.shown_plot()
        if plot is None or plot.figure is None or not plot.figure.series:
            self.notify("this tab has no plot drawn yet", severity="warning", timeout=3)
            return
        self.app.push_screen(PlotScreen(plot.figure))
