"""Leaderboard: runs x measures, means with 95% intervals, one-key sorting, filters, significance."""
from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from ..model import measure_choices
from ..widgets.fasttable import FastTable
from .base import CranfieldScreen, nav_bar
from .choice import ChoiceScreen

SIG_MARK = "≈"


class LeaderboardScreen(CranfieldScreen):
    TITLE = "Leaderboard"
    MODE = "leaderboard"
    HELP = f"""Every run's mean over topics for each chosen measure with the half-width of its 95% t interval,
and judged@10 (share of each top 10 that is judged). {SIG_MARK} marks a run NOT significantly different from
the run listed above it (paired t-test over topics, p >= 0.05, on the sort measure, or the first
measure when sorting by a non-measure column). Digits 1-9 sort by that column (numbers in the header);
s moves the sort to the next column; r reverses. Enter opens the run."""
    BINDINGS = [
        Binding("enter", "open_run", "Open run", show=False),
        Binding("s", "next_sort", "Sort", tooltip="Sort next"),
        Binding("r", "reverse", "Rev", tooltip="Reverse"),
        Binding("f", "filter", "Filter"),
        Binding("a", "choose_measures", "Measures"),
    ] + [Binding(str(i), f"sort_col({i})", f"Sort by column {i}", show=False) for i in range(1, 10)]

    def __init__(self):
        super().__init__()
        self.sort_key: str | None = None
        self.descending = True
        self.filt: tuple[str, str] = ("all", "")
        self.filt_label = "all runs"
        self.frame: pd.DataFrame | None = None
        self._row_runs: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="lb-title", classes="title")
        yield FastTable(id="lb")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#lb-title", Static).update("Loading…")
        self.sync()

    # sortable columns: run, group, measures..., judged@10
    def sort_columns(self) -> list[str]:
        s = self.model.scores
        return ["run", "group"] + list(s.measures) + ["judged@10"]

    def refresh_data(self) -> None:
        cols = self.sort_columns()
        if self.sort_key not in cols:
            self.sort_key = self.model.scores.measures[0] if self.model.scores.measures else "run"
            self.descending = True
        self.redraw()

    def redraw(self) -> None:
        """Rebuild the table for the current sort and filter (the hot path of the sort benchmark)."""
        m = self.model
        s = m.scores
        df = m.leaderboard(sort=self.sort_key, descending=self.descending, filt=self.filt)
        self.frame = df
        t = self.query_one("#lb", FastTable)
        cursor_run = self._row_runs[t.cursor_row] if t.cursor_row < len(self._row_runs) else None
        arrow = "▼" if self.descending else "▲"
        sortable = self.sort_columns()

        def label(name: str, text: str | None = None) -> str:
            i = sortable.index(name) + 1
            return f"{i}:{text or name}" + (arrow if name == self.sort_key else "")

        runs = df["run"].to_numpy()
        groups = df["group"].to_numpy()
        flags = (np.where(df["type"].to_numpy() == "manual", "M", "·").astype(object)
                 + np.where(df["pooled"].to_numpy(bool), "P", "·").astype(object))
        same = df["same_as_above"].to_numpy(bool)
        cells = {n: [f"{v:.4f}±{h:.3f}".replace("±0.", "±.") if np.isfinite(h) else f"{v:.4f}"
                     for v, h in zip(df[n].to_numpy(), df[n + " ±"].to_numpy())] for n in s.measures}
        j10 = [f"{v:.2f}" for v in df["judged@10"].to_numpy()]
        pos = [str(i + 1) for i in range(len(df))]
        sig = [SIG_MARK if x else "" for x in same]
        # columns: (key, header, values) of plain strings; FastTable joins each row into one line
        cols = [("pos", "#", pos), ("sig", SIG_MARK, sig), ("run", label("run"), list(runs)),
                ("group", label("group", "grp"), list(groups)), ("flags", "MP", list(flags))]
        cols += [(n, label(n), cells[n]) for n in s.measures]
        cols.append(("judged@10", label("judged@10", "j@10"), j10))
        t.set_data([c[0] for c in cols], [c[1] for c in cols],
                   [[c[2][i] for c in cols] for i in range(len(df))],
                   right=[k in ("pos",) for k, _, _ in cols])
        self._row_runs = list(runs)
        if cursor_run is not None and cursor_run in self._row_runs:
            t.move_cursor(self._row_runs.index(cursor_run))
        sm = df.attrs.get("sig_measure")
        self.query_one("#lb-title", Static).update(Text.from_markup(
            f"[b]{Text(m.name).markup}[/b] · {len(df)}/{len(s.runs)} runs"
            + ("" if self.filt[0] == "all" else f" ({self.filt_label})")
            + f" · by {self.sort_key} {arrow} · {SIG_MARK} = n.s. vs run above ({sm})"), layout=False)

    # ------------------------------------------------------------------ actions
    def action_sort_col(self, i: int) -> None:
        if self.model is None or self.model.scores is None:
            return
        cols = self.sort_columns()
        if i > len(cols):
            self.notify(f"there is no column {i}", severity="warning")
            return
        self.set_sort(cols[i - 1])

    def set_sort(self, key: str) -> None:
        if key == self.sort_key:
            self.descending = not self.descending
        else:
            self.sort_key = key
            self.descending = key not in ("run", "group")
        self.redraw()

    def action_next_sort(self) -> None:
        if self.model is None or self.model.scores is None:
            return
        cols = self.sort_columns()
        i = cols.index(self.sort_key) if self.sort_key in cols else -1
        self.sort_key = cols[(i + 1) % len(cols)]
        self.descending = self.sort_key not in ("run", "group")
        self.redraw()

    def action_reverse(self) -> None:
        if self.frame is not None:
            self.descending = not self.descending
            self.redraw()

    def action_filter(self) -> None:
        if self.model is None:
            return
        opts = [(label, (kind, value, label)) for kind, value, label in self.model.filters()]

        def done(choice) -> None:
            if choice is not None:
                kind, value, label = choice
                self.filt, self.filt_label = (kind, value), label
                self.redraw()
        self.app.push_screen(ChoiceScreen("Show which runs?", opts), done)

    def action_choose_measures(self) -> None:
        if self.model is None:
            return
        current = list(self.app.measures)
        choices = list(dict.fromkeys(current + measure_choices()))

        def done(chosen) -> None:
            if chosen:
                self.app.set_measures(chosen)
        self.app.push_screen(ChoiceScreen("Measures (columns)", [(c, c) for c in choices], multi=True,
                                          selected=current), done)

    def on_fast_table_row_selected(self, event: FastTable.RowSelected) -> None:
        self.open_run(self._row_runs[event.cursor_row])

    def action_open_run(self) -> None:
        t = self.query_one("#lb", FastTable)
        if t.row_count:
            self.open_run(self._row_runs[t.cursor_row])

    def open_run(self, run: str) -> None:
        from .run import RunScreen
        self.app.push_screen(RunScreen(run))

    def action_export(self) -> None:
        """The table as shown, plus the significance table (engine.tables: all pairs, paired t, Holm)."""
        super().action_export()
        if self.frame is None or len(self.frame) < 2:
            return
        from engine.tables import compare_scores
        from .compare import long_table
        s = self.model.scores
        long = pd.concat([long_table(s, m) for m in s.measures], ignore_index=True)
        try:
            res = compare_scores(long, list(s.measures), runs=[str(r) for r in self.frame["run"]])
            paths = res.write(self.app.export_dir, "leaderboard-significance")
        except Exception as exc:       # never kill the UI over an export
            self.app.report_error(exc)
            return
        self.notify("wrote " + ", ".join(str(p) for p in paths), title="Export", timeout=10)

    def export_table(self):
        if self.frame is None:
            return None
        df = self.frame.drop(columns=["same_as_above"]).copy()
        df.insert(0, "position", np.arange(1, len(df) + 1))
        return "leaderboard", df
