"""Per-topic matrix: topics x runs heat map of one measure, with R, judged depth and topic difficulty."""
from __future__ import annotations

from engine.util.names import natural_key

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Input, Static

from ..widgets.cells import GLYPHS, RAMP, HeatRow, num
from ..widgets.fasttable import GridTable
from .base import CranfieldScreen, nav_bar

INFO = ["topic", "R", "depth", "mean"]


class MatrixScreen(CranfieldScreen):
    TITLE = "Per-topic matrix"
    MODE = "matrix"
    HELP = f"""Topics (rows) x runs (columns, leaderboard order) of one measure. Each cell shows a shade glyph
({GLYPHS[1:]}: low to high) and the value on a colour ramp, so it reads in 256 colours and with NO_COLOR.
R = relevant documents; depth = deepest rank to which every run's list is judged; mean over runs
(sort by it for the hardest/easiest topics). s sorts by the column under the cursor, r reverses,
/ filters topics by id, title or category, a picks the measure, Enter opens the topic."""
    BINDINGS = [
        Binding("s", "sort", "Sort", tooltip="Sort column"),
        Binding("r", "reverse", "Rev", tooltip="Reverse"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("a", "choose_measure", "Measure"),
        Binding("enter", "open_topic", "Open topic", show=False),
    ]

    def __init__(self):
        super().__init__()
        self.measure: str | None = None
        self.sort_col = "topic"
        self.desc = False
        self.query_text = ""
        self.frame: pd.DataFrame | None = None
        self.columns: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="mx-title", classes="title")
        yield GridTable(id="mx", fixed=1)
        yield Input(placeholder="filter topics (id, title or category); enter applies, escape clears", id="filter-input")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#mx-title", Static).update("Loading…")
        self.sync()

    def refresh_data(self) -> None:
        s = self.model.scores
        if self.measure not in s.measures:
            self.measure = s.measures[0] if s.measures else None
        self.draw()

    def draw(self) -> None:
        m = self.model
        s = m.scores
        meas = self.measure
        tt = m.topic_table(meas)
        runs = list(m.leaderboard(sort=meas)["run"])
        ri = [s.runs.index(r) for r in runs]
        mat = s.matrix[meas][ri].T  # topics x runs
        df = tt[["topic", "R", "depth", "mean"]].copy()
        df = pd.concat([df, pd.DataFrame(mat, columns=runs)], axis=1)
        df["_title"] = tt["title"].str.lower() + " " + tt["category"].str.lower()
        if self.query_text:
            q = self.query_text.lower()
            df = df[df["topic"].str.lower().str.contains(q, regex=False) | df["_title"].str.contains(q, regex=False)]
        key = (lambda c: c.map(natural_key)) if self.sort_col == "topic" else None
        if self.sort_col in df.columns:
            df = df.sort_values(self.sort_col, ascending=not self.desc, kind="mergesort", key=key, na_position="last")
        self.frame = df.drop(columns=["_title"])
        self.columns = list(self.frame.columns)
        finite = mat[np.isfinite(mat)]
        lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        t = self.query_one("#mx", GridTable)
        vals = self.frame[runs].to_numpy()
        info = zip(*(self.frame[c].tolist() for c in INFO))       # by column: 1,000 run columns are not iterated
        rows = [HeatRow([(topic, None), (str(r), None), (str(d), None), (num(mean, 3), None)], vals[i], lo, hi)
                for i, (topic, r, d, mean) in enumerate(info)]       # heat cells made when drawn
        heads = [(c if len(c) <= 8 else c[:7] + "…") + (("▼" if self.desc else "▲") if c == self.sort_col else "")
                 for c in self.columns]
        t.set_data(self.columns, heads, rows)
        legend = Text(f" {lo:.2f}")
        for k in range(0, len(RAMP), 2):
            legend += Text(GLYPHS[min(len(GLYPHS) - 1, k * len(GLYPHS) // len(RAMP))], style=f"on color({RAMP[k]})")
        legend += Text(f"{hi:.2f}")
        arrow = "▼" if self.desc else "▲"
        head = Text.from_markup(f"[b]{meas}[/b] · {len(self.frame)}/{len(s.topics)} topics x {len(runs)} runs"
                                + (f" · filter '{Text(self.query_text).markup}'" if self.query_text else "")
                                + f" · by {self.sort_col} {arrow} ·")
        self.query_one("#mx-title", Static).update(head + legend)

    def action_sort(self) -> None:
        t = self.query_one("#mx", GridTable)
        col = self.columns[t.cursor_column]
        self.desc = (not self.desc) if col == self.sort_col else col != "topic"
        self.sort_col = col
        self.draw()

    def action_reverse(self) -> None:
        self.desc = not self.desc
        self.draw()

    def action_filter(self) -> None:
        inp = self.query_one("#filter-input", Input)
        inp.add_class("shown")
        inp.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_text = event.value.strip()
        event.input.remove_class("shown")
        self.query_one("#mx", GridTable).focus()
        self.draw()

    def on_key(self, event) -> None:
        inp = self.query_one("#filter-input", Input)
        if event.key == "escape" and inp.has_focus:
            event.stop()
            inp.value = ""
            inp.remove_class("shown")
            self.query_text = ""
            self.query_one("#mx", GridTable).focus()
            self.draw()

    def action_choose_measure(self) -> None:
        self.pick_measure("Measure for the matrix", self.draw)

    def on_grid_table_cell_selected(self, event: GridTable.CellSelected) -> None:
        self.open(str(self.frame["topic"].iloc[event.row]), self.columns[event.column])

    def action_open_topic(self) -> None:
        t = self.query_one("#mx", GridTable)
        if t.row_count:
            self.open(str(self.frame["topic"].iloc[t.cursor_row]), self.columns[t.cursor_column])

    def open(self, topic: str, column: str) -> None:
        from .topic import TopicScreen
        run = column if column in self.model.scores.runs else None
        self.app.push_screen(TopicScreen(topic, run=run))

    def export_table(self):
        return (f"matrix-{self.measure}", self.frame) if self.frame is not None else None
