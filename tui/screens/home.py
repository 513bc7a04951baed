"""Campaign home: what the campaign holds, judging progress per topic, and what needs attention."""
from __future__ import annotations

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static

from engine.util.names import shown

from ..widgets.cells import bar
from .base import CranfieldScreen, nav_bar


class HomeScreen(CranfieldScreen):
    NEEDS_SCORES = False
    WATCH = ("pools", "judgments", "runs", "answers", "nuggets")
    ALWAYS_ACTIONS = ("back", "cancel", "toggle_warnings")
    TITLE = "Campaign home"
    MODE = "home"
    HELP = """The campaign at a glance: runs, topics and judgments; per topic how many documents are
judged against the target (the campaign's per-topic target, else the pool size); and warnings:
malformed input lines (file:line), runs whose top 10 holds unjudged documents, topics with no
relevant document. Escape cancels loading. i submits a run file (the campaign's intake checks it,
as `cranfield submit`; accepted runs are copied into runs/ and the campaign reloads)."""
    BINDINGS = [Binding("escape", "cancel", "Cancel loading", show=False),
                Binding("w", "toggle_warnings", "Warnings"),
                Binding("i", "submit", "Submit", show=False, tooltip="Submit a run file (intake)")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="home-facts")
        with Horizontal(id="home-load"):
            yield Static("", id="home-load-text")
            yield ProgressBar(total=3, id="home-bar", show_eta=False)
        with Horizontal(id="home-body"):
            yield DataTable(id="home-progress", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="home-warnings"):
                yield Static("", id="home-warn-text")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.show_status()
        self.sync()

    def show_status(self) -> None:
        if not self.composed():
            return
        app = self.app
        load = self.query_one("#home-load")
        done, total, text = app.progress
        if app.status in ("loading", "evaluating", "starting"):
            load.display = True
            self.query_one("#home-load-text", Static).update(f"{text}… (escape cancels) ")
            bar_ = self.query_one("#home-bar", ProgressBar)
            bar_.update(total=total, progress=done)
        else:
            load.display = False
        if app.model is None:
            msg = {"error": "The campaign could not be opened; see the notification.",
                   "cancelled": "Loading was cancelled. Press q to quit."}.get(app.status, f"Opening {app.target} …")
            self.query_one("#home-facts", Static).update(msg)

    def refresh_data(self) -> None:
        self.show_status()
        m = self.model
        f = m.home_facts()
        measures = ", ".join(self.app.measures)
        facts = Text.from_markup(
            f"[b]{f['name']}[/b]\n"
            f"{f['runs']} runs ({f['groups']} groups, {f['manual']} manual, {f['pooled']} pooled) · "
            + (f"{f['answer_runs']} answer runs · " if f["answer_runs"] else "") +
            f"{f['topics']} topics · {f['judged']} judged, {f['relevant']} relevant"
            + (f", {f['unjudged_pooled']} pooled awaiting judgment" if f["unjudged_pooled"] else "")
            + f"\nmeasures: {measures}" + self.pool_line())
        self.query_one("#home-facts", Static).update(facts)
        t = self.query_one("#home-progress", DataTable)
        t.clear(columns=True)
        t.add_column("topic", key="topic")
        t.add_column("judged/target", key="jt")
        t.add_column("progress", key="bar")
        t.add_column("rel", key="rel")
        self._progress = m.pool_progress()
        for r in self._progress.itertuples():
            t.add_row(shown(r.topic), f"{r.judged}/{r.target}", bar(r.done, 8), str(r.relevant), key=str(r.topic))
        probs = m.problems()
        done = int((self._progress["done"] >= 1).sum())
        head = f"[b]Topics fully judged: {done}/{len(self._progress)}[/b]\n"
        if probs:
            body = f"[b]{len(probs)} warnings[/b]\n" + "\n".join(f"• {Text(p).markup}" for p in probs)
        else:
            body = "No warnings."
        self.query_one("#home-warn-text", Static).update(head + body)

    def pool_line(self) -> str:
        """Progress against the active pool (the newest in pools/), when there is one: the engine's one count
        (judging_progress), worded as `cranfield status` words it."""
        try:
            prog = self.model.judging.progress()
        except Exception:   # an unreadable pool file is reported by the pool screen
            return ""
        if prog.pool is None:
            return ""
        return (f"\nactive pool {Text(shown(prog.pool)).markup}: {prog.judged} of {prog.pooled} judged, "
                f"[b]{prog.left} left[/b]")

    def export_table(self) -> tuple[str, pd.DataFrame] | None:
        if self.model is None:
            return None
        return "pool-progress", self.model.pool_progress()

    def action_cancel(self) -> None:
        if not self.app.cancel_work():
            self.notify("nothing is running")

    def action_submit(self) -> None:
        from .intake import SubmitScreen
        self.app.push_screen(SubmitScreen())

    def action_toggle_warnings(self) -> None:
        w = self.query_one("#home-warnings")
        w.display = not w.display
