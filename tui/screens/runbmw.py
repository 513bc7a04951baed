"""One run against the field: per topic its score and the best, median and worst of all runs (or of the
pooled runs), as in the TREC proceedings' per-run pages."""
from __future__ import annotations

import numpy as np
import pandas as pd
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from .base import CranfieldScreen, nav_bar
from .choice import ChoiceScreen
from .compare import MeasureCycle


def run_bmw(scores, run: str, measure: str, runs: list[str] | None = None) -> pd.DataFrame:
    """topic, run, best, median, worst (over `runs`, default all) of one measure from the model's scores
    (engine.campaign.participant.topic_bmw, the participant reports' computation)."""
    from engine.campaign.participant import topic_bmw
    from .compare import long_table
    b = topic_bmw(long_table(scores, measure), measure, runs).reindex(scores.topics)
    return pd.DataFrame({"topic": scores.topics, "run": scores.matrix[measure][scores.runs.index(run)],
                         "best": b["best"].to_numpy(), "median": b["median"].to_numpy(),
                         "worst": b["worst"].to_numpy()})


class RunBMWScreen(MeasureCycle, CranfieldScreen):
    TITLE = "Run vs field"
    HELP = """The run's score on every topic against the best, median and worst of all runs (f: of the pooled
runs only), with the count of topics above / at / below the median. n moves to the next measure, r picks
another run; Enter opens the topic."""
    BINDINGS = [Binding("n", "next_measure", "Measure"), Binding("f", "toggle_pooled", "All/pooled"),
                Binding("r", "pick_run", "Run"), Binding("enter", "open_topic", "Open topic", show=False)]

    def __init__(self, run: str | None = None, measure: str | None = None):
        super().__init__()
        self.run, self.measure = run, measure
        self.pooled_only = False
        self.frame: pd.DataFrame | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="bmw-title", classes="title")
        yield DataTable(id="bmw-table", cursor_type="row", zebra_stripes=True)
        yield nav_bar(self)
        yield Footer()

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        s = self.model.scores
        self.current_measure()
        if self.run not in s.runs:
            self.run = s.runs[int(np.nanargmax(np.nanmean(s.matrix[self.measure], axis=1)))]
        self.draw()

    def draw(self) -> None:
        m, s = self.model, self.model.scores
        ref = None
        if self.pooled_only:
            meta = m.run_meta
            ref = [r for r in s.runs if r in meta.index and bool(meta.loc[r, "pooled"])] or None
        self.frame = df = run_bmw(s, self.run, self.measure, ref)
        t = self.query_one("#bmw-table", DataTable)
        t.clear(columns=True)
        for c in df.columns:
            t.add_column(c, key=c)
        t.add_column("vs median", key="vs")
        for row in df.itertuples(index=False):
            vs = "" if not np.isfinite(row.run) else "above" if row.run > row.median else \
                "below" if row.run < row.median else "equal"
            t.add_row(row.topic, *(f"{v:.4f}" if np.isfinite(v) else "" for v in row[1:]), vs, key=row.topic)
        d = df["run"] - df["median"]
        self.query_one("#bmw-title", Static).update(
            f"[b]{self.run}[/b] · {self.measure} · against {'pooled runs' if ref else 'all runs'}: "
            f"{int((d > 0).sum())} topics above the median, {int((d == 0).sum())} equal, {int((d < 0).sum())} below; "
            f"best on {int((df['run'] >= df['best']).sum())}, worst on {int((df['run'] <= df['worst']).sum())}")

    def action_toggle_pooled(self) -> None:
        self.pooled_only = not self.pooled_only
        self.draw()

    def action_pick_run(self) -> None:
        def done(choice) -> None:
            if choice:
                self.run = choice
                self.draw()
        self.app.push_screen(ChoiceScreen("Run", [(r, r) for r in self.model.scores.runs], current=self.run), done)

    def action_open_topic(self) -> None:
        t = self.query_one("#bmw-table", DataTable)
        if t.row_count:
            from .topic import TopicScreen
            self.app.push_screen(TopicScreen(t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value, run=self.run))

    def export_table(self):
        return (f"run-{self.run}-{self.measure}-bmw", self.frame) if self.frame is not None else None
