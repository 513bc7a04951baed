"""One run: its value on every topic for each measure, against the topic median."""
from __future__ import annotations

from engine.util.names import natural_key

import numpy as np
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..widgets.cells import heat, num
from .base import CranfieldScreen, nav_bar


class RunScreen(CranfieldScreen):
    TITLE = "Run"
    HELP = """One run's score on every topic, with the median over all runs and the difference from it
(first measure). s sorts by the column under the cursor; Enter opens the topic with this run's ranked list."""
    BINDINGS = [Binding("s", "sort", "Sort", tooltip="Sort column"), Binding("enter", "open_topic", "Open topic", show=False)]

    def __init__(self, run: str):
        super().__init__()
        self.run = run
        self.frame = None
        self.sort_col = "topic"
        self.desc = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="run-title", classes="title")
        yield DataTable(id="run-table", cursor_type="cell", zebra_stripes=True)
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        m = self.model
        if self.run not in m.scores.runs:
            self.query_one("#run-title", Static).update(f"run {self.run} is not in the evaluation")
            return
        meta = m.run_meta.loc[self.run] if self.run in m.run_meta.index else None
        desc = f" · group {meta['group']} · {meta['type']} · {'pooled' if meta['pooled'] else 'not pooled'}" if meta is not None else ""
        lb = m.leaderboard()
        pos = int(np.flatnonzero(lb["run"].to_numpy() == self.run)[0]) + 1
        first = m.scores.measures[0]
        self.query_one("#run-title", Static).update(
            f"[b]{self.run}[/b]{desc} · rank {pos}/{len(lb)} by {first} ({num(lb.loc[lb['run'] == self.run, first].iloc[0])})")
        self.frame = m.run_topics(self.run)
        self.draw()

    def draw(self) -> None:
        df = self.frame.sort_values(self.sort_col, ascending=not self.desc, kind="mergesort",
                                    key=(lambda c: c.map(natural_key)) if self.sort_col == "topic" else None)
        t = self.query_one("#run-table", DataTable)
        t.clear(columns=True)
        for c in df.columns:
            t.add_column(c + ("▼" if self.desc else "▲") * (c == self.sort_col), key=c)
        for row in df.itertuples(index=False):
            cells = [row[0]]
            for c, v in zip(df.columns[1:], row[1:]):
                cells.append(num(v) if c in ("median", "vs median") else heat(v, 0, 1, 7))
            t.add_row(*cells, key=row[0])

    def action_sort(self) -> None:
        t = self.query_one("#run-table", DataTable)
        col = list(self.frame.columns)[t.cursor_column]
        self.desc = (not self.desc) if col == self.sort_col else col != "topic"
        self.sort_col = col
        self.draw()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        self.open(event.cell_key.row_key.value)

    def action_open_topic(self) -> None:
        t = self.query_one("#run-table", DataTable)
        self.open(t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value)

    def open(self, topic: str) -> None:
        from .topic import TopicScreen
        self.app.push_screen(TopicScreen(topic, run=self.run))

    def export_table(self):
        return (f"run-{self.run}", self.frame) if self.frame is not None else None

