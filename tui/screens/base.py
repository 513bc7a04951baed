"""What every Cranfield screen shares: access to the campaign model, refresh on new data, export."""
from __future__ import annotations

import functools
from typing import Callable

import pandas as pd
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker

from ..widgets.cells import literal
from ..widgets.jobbar import JobBar
from ..work import start_work


class Unavailable(Static):
    """A panel standing in for a screen whose engine part has not landed."""

    def __init__(self, what: str, module: str, reason: str = ""):
        text = (f"[b]{what}[/b] is not available yet.\n\n"
                f"It needs the engine module [b]{module}[/b], which is not present in this checkout"
                + (f" ({reason})" if reason else "") + ".\nThe other screens work; press h for home.")
        super().__init__(text, classes="unavailable")


NAV = [("h", "home", "home"), ("l", "leaderboard", "board"), ("m", "matrix", "matrix"), ("p", "pool", "pool"),
       ("j", "judge", "judge"), ("v", "stability", "stability"), ("c", "cost", "cost"),
       ("N", "nuggets", "nuggets")]


def desk_only(app) -> bool:
    """The app serves the judging desk alone (`app.desk_only`, set by `cranfield serve` for assessors): the
    desk's screens (Judging, Assign) leave out the organizer's keys (export) and the other screens' bar."""
    return bool(getattr(app, "desk_only", False))


def nav_bar(screen) -> Static:
    """One line naming the screens and their keys (the current one highlighted)."""
    mode = getattr(screen, "MODE", "")
    nav = getattr(screen.app, "NAV", NAV)          # the judging desk (tui.desk_app) names only its own screens
    parts = [f"[reverse] {k} {label} [/]" if name == mode else f"[b]{k}[/b] {label}" for k, name, label in nav]
    return Static(" ".join(parts) + "  [b]?[/b] help", classes="nav")


def missing_scores(model) -> str:
    """One line for a screen that needs scores the campaign cannot have yet: what is missing, what to do."""
    if model.runs is None or len(model.runs) == 0:
        if getattr(model, "answer_run_count", 0):          # counted when the app loaded the campaign
            return "only answer runs here: l lists their nugget scores, N creates and assigns nuggets"
        return "no runs yet: copy run files into runs/ (answer runs: answers/), then ctrl+r"
    return "no judgments yet: build a pool (p) and judge it (j); the scores follow"


def has_runs(model) -> bool:
    """The campaign has retrieval runs, or pool files to judge from."""
    return bool(len(model.runs)) or bool(len(model.pools()))


def _guard(fn: Callable, needs_data: bool) -> Callable:
    @functools.wraps(fn)
    def action(self, *args, **kw):
        if needs_data and not self.ready():
            what = {"loading": "the campaign is still loading", "evaluating": "the campaign is being evaluated",
                    "cancelled": "loading was cancelled (ctrl+r loads again)",
                    "error": "the campaign could not be opened"}.get(self.app.status)
            what = what or (missing_scores(self.app.model) if self.app.model is not None else "no scores yet")
            self.notify(f"{self.TITLE}: not available, {what}", severity="warning", timeout=4)
            return None
        try:
            return fn(self, *args, **kw)
        except Exception as exc:  # an engine or formatting error must not kill the UI
            self.app.report_error(exc)
            return None
    action._guarded = True
    return action


class CranfieldScreen(Screen):
    """Base screen: `refresh_data()` is called whenever the campaign or its scores change."""

    HELP = ""
    NEEDS_SCORES = True   # False for screens that work before anything is judged (home, pool, judge)
    ALWAYS_ACTIONS: tuple = ("back", "cancel")   # actions that work before the campaign is loaded
    NEEDS_RUNS = False    # True for screens that pool or judge retrieval runs (nothing to do without runs or pools)
    WATCH: tuple = ()     # campaign files (tui.app.FILE_KINDS) whose change redraws the screen
    BINDINGS = [
        Binding("e", "export", "Export"),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init_subclass__(cls, **kw) -> None:
        """Every key of a screen is guarded: before scores exist a screen that needs them says so
        instead of acting, and an error in an action becomes a notification, never a crash."""
        super().__init_subclass__(**kw)
        for klass in cls.__mro__:                # its own actions and those of the app's mixins and screens
            if klass is not cls and not klass.__module__.startswith("tui."):
                continue
            for name, fn in list(klass.__dict__.items()):
                if (name.startswith("action_") and callable(fn) and not getattr(fn, "_guarded", False)
                        and getattr(cls, name) is fn):
                    setattr(cls, name, _guard(fn, name[7:] not in cls.ALWAYS_ACTIONS))

    def ready(self) -> bool:
        """The screen has what it shows (scores, when it needs them)."""
        m = self.app.model
        return (m is not None and (not self.NEEDS_SCORES or m.scores is not None)
                and (not self.NEEDS_RUNS or has_runs(m)))

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._seen_version = -1
        self._seen_files: tuple = ()
        self._jobs: set[Worker] = set()       # this screen's run_job workers

    # ------------------------------------------------------------------ long work
    def run_job(self, title: str, fn: Callable, done: Callable) -> Worker:
        """Run fn(progress) in the screen's worker (tui.work.start_work; a newer job cancels the running
        one); `progress(fraction, message)` moves the JobBar and stops the work when cancelled;
        done(result) runs on the UI thread unless cancelled. Errors become notifications."""
        bars = self.query(JobBar)
        bar = bars.first() if bars else None
        if bar is not None:
            bar.start(title)
        def ended(this: Worker) -> None:
            if not any(not j.is_finished and not j.is_cancelled for j in self._jobs - {this}):   # no newer job
                for b in self.query(JobBar):
                    b.stop()
        w = start_work(self, "job", fn, done, group="job", on_progress=bar.step if bar is not None else None,
                       on_end=ended)
        self._jobs = {j for j in self._jobs if not j.is_finished} | {w}
        return w

    def job_running(self) -> bool:
        """A job of this screen is waiting or running, not cancelled."""
        return any(not w.is_finished and not w.is_cancelled for w in self._jobs)

    def leave_input(self) -> bool:
        """Move focus out of a text input or select (to the screen's first other focusable widget, e.g.
        its table); True when the focus was in one."""
        from textual.widgets import Input, Select, TextArea
        typing = (Input, Select, TextArea)
        f = self.focused
        if f is None or not any(isinstance(x, typing) for x in (f, *f.ancestors)):
            return False
        other = [w for w in self.focus_chain
                 if not any(isinstance(x, typing) for x in (w, *w.ancestors))]
        self.set_focus(other[0] if other else None)
        return True

    @property
    def model(self):
        return self.app.model

    def pick_measure(self, title: str, then: Callable[[], None]) -> None:
        """Let the user choose one of the evaluated measures; set `self.measure` and call `then()`."""
        if self.model is None or self.model.scores is None:
            return
        from .choice import ChoiceScreen

        def done(choice) -> None:
            if choice:
                self.measure = choice
                then()
        ms = self.model.scores.measures
        self.app.push_screen(ChoiceScreen(title, [(x, x) for x in ms], current=getattr(self, "measure", None)), done)

    def on_screen_resume(self) -> None:
        self.sync()

    def sync(self) -> None:
        """Refresh when the app's data, or a campaign file the screen watches, changed since this screen
        last drew it."""
        files = tuple(self.app.file_versions.get(k, 0) for k in self.WATCH)
        if self.app.model is not None and self.composed() and (
                self.app.data_version != self._seen_version or files != self._seen_files):
            if self.NEEDS_RUNS and not self.NEEDS_SCORES and not has_runs(self.app.model):
                if self.app.data_version != self._seen_version or files != self._seen_files:
                    self.show_missing(missing_scores(self.app.model))
                self._seen_version, self._seen_files = self.app.data_version, files
                return
            if self.NEEDS_SCORES and self.app.model.scores is None:
                if self.app.data_version != self._seen_version:
                    self.show_missing(missing_scores(self.app.model))
                self._seen_version = self.app.data_version
                return
            self._seen_version, self._seen_files = self.app.data_version, files
            try:
                self.refresh_data()
            except Exception as exc:  # an engine error must not kill the UI
                self.app.report_error(exc)

    def show_missing(self, text: str) -> None:
        """Say on the screen (its title line) what it lacks to show anything, and what to do."""
        titles = self.query(".title")
        if titles and isinstance(titles.first(), Static):
            titles.first().update(literal(text))
        else:
            self.notify(f"{self.TITLE}: {text}", severity="warning")

    def composed(self) -> bool:
        """The screen's widgets exist (compose ran), even while its Mount event is still running."""
        return bool(self.query("Footer"))

    def refresh_data(self) -> None:  # pragma: no cover - overridden
        pass

    def export_table(self) -> tuple[str, pd.DataFrame] | None:
        """(file stem, table) of what the screen shows, for `e`."""
        return None

    def action_export(self) -> None:
        t = self.export_table()
        if t is None:
            self.notify("Nothing to export on this screen", severity="warning")
            return
        self.app.export(*t)

    def action_back(self) -> None:
        """Escape: leave a text input (screen keys work again), else cancel the screen's job or the
        campaign's load or evaluation, else go back."""
        if self.leave_input():
            return
        running = [w for w in self._jobs if not w.is_finished and not w.is_cancelled]
        if running:
            for w in running:
                w.cancel()
            self.notify("cancelled", severity="warning")
            return
        if self.app.busy:                        # the campaign's load or evaluation (e.g. new measures)
            self.app.cancel_work()
            return
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
