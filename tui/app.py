"""The Cranfield Textual application: one mode per screen family, data loaded in workers."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pandas as pd
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from engine.errors import CranfieldError

from .export import write_exports
from .model import CampaignModel
from .screens.base import Cancelled
from .screens.help import HelpScreen, all_bindings
from .source import find_campaigns, is_campaign


def check_cancel() -> None:
    """Call from worker code between steps: stops the work when the user pressed escape."""
    w = get_current_worker()
    if w is not None and w.is_cancelled:
        raise Cancelled()


class CranfieldApp(App):
    """Keyboard-first browser of one evaluation campaign."""

    TITLE = "Cranfield"
    CSS_PATH = "cranfield.tcss"
    ENABLE_COMMAND_PALETTE = True
    DEFAULT_MODE = "home"

    BINDINGS = [
        Binding("h", "goto('home')", show=False, description="Home"),
        Binding("l", "goto('leaderboard')", show=False, description="Leaderboard"),
        Binding("m", "goto('matrix')", show=False, description="Matrix"),
        Binding("p", "goto('pool')", show=False, description="Pool"),
        Binding("j", "goto('judge')", show=False, description="Judge"),
        Binding("v", "goto('stability')", show=False, description="Stability"),
        Binding("c", "goto('cost')", show=False, description="Cost"),
        Binding("x", "compare", show=False, description="Compare two runs"),
        Binding("o", "run_field", show=False, description="Run vs best/median/worst"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("ctrl+r", "reload", "Reload campaign", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, target: Path, *, export_dir: Path | None = None, measures: list[str] | None = None,
                 assessor: str | None = None):
        super().__init__()
        self.target = Path(target)
        self.export_dir = Path(export_dir) if export_dir else Path.cwd()
        self.requested_measures = measures
        self.assessor = assessor or os.environ.get("CRANFIELD_ASSESSOR") or os.environ.get("USER") or "assessor"
        self.model: CampaignModel | None = None
        self.measures: list[str] = []
        self.data_version = 0
        self.judgments_changed = False
        self.status = "starting"
        self.progress: tuple[int, int, str] = (0, 1, "")

    # ------------------------------------------------------------------ screens
    def get_default_screen(self) -> Screen:
        from .screens.home import HomeScreen
        return HomeScreen()

    def _screen_for(self, name: str) -> Screen:
        from .screens import cost, home, judge, leaderboard, matrix, pool, stability
        return {"home": home.HomeScreen, "leaderboard": leaderboard.LeaderboardScreen,
                "matrix": matrix.MatrixScreen, "pool": pool.PoolScreen, "judge": judge.JudgeScreen,
                "stability": stability.StabilityScreen, "cost": cost.CostScreen}[name]()

    def on_mount(self) -> None:
        for name in ("leaderboard", "matrix", "pool", "judge", "stability", "cost"):
            self.add_mode(name, lambda n=name: self._screen_for(n))
        self.sub_title = str(self.target)
        if is_campaign(self.target):
            self.load(self.target)
        elif find_campaigns(self.target):
            from .screens.picker import PickerScreen
            self.push_screen(PickerScreen(find_campaigns(self.target)), self._picked)
        else:
            self.status = "error"
            self.notify(f"{self.target}: neither a campaign (campaign.yaml) nor a folder of campaigns",
                        severity="error", timeout=30)
            self._refresh_current()

    def _picked(self, path: Path | None) -> None:
        if path is None:
            self.exit(0)
        else:
            self.load(path)

    def action_goto(self, mode: str) -> None:
        if self.current_mode == mode and len(self.screen_stack) > 1:
            while len(self.screen_stack) > 1:
                self.pop_screen()
            return
        self.switch_mode(mode)

    def _current_run(self) -> str | None:
        """The run the current screen is about (run screens) or under the leaderboard cursor."""
        scr = self.screen
        run = getattr(scr, "run", None)
        if isinstance(run, str):
            return run
        rows = getattr(scr, "_row_runs", None)
        if rows:
            from .widgets.fasttable import FastTable
            t = scr.query(FastTable)
            i = t.first().cursor_row if t else 0
            return rows[i] if i < len(rows) else None
        return None

    def action_compare(self) -> None:
        """Compare two runs (A: the current run, B: the best other run)."""
        from .screens.compare import CompareScreen
        if self.model is not None and not isinstance(self.screen, CompareScreen):
            self.push_screen(CompareScreen(self._current_run()))

    def action_run_field(self) -> None:
        """The current run per topic against the best, median and worst of all runs."""
        from .screens.runbmw import RunBMWScreen
        if self.model is not None and not isinstance(self.screen, RunBMWScreen):
            self.push_screen(RunBMWScreen(self._current_run()))

    def action_reload(self) -> None:
        """Re-read the campaign (after judging or editing files) and re-evaluate."""
        self.judgments_changed = False
        self.requested_measures = list(self.measures) or self.requested_measures
        self.load(self.target)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette lists every action: the screen's keys, then the app's, then Textual's own."""
        seen = set()
        for owner, cls in ((screen, type(screen)), (self, type(self))):
            for b in all_bindings(cls):
                if not b.description or b.action in seen:
                    continue
                seen.add(b.action)
                yield SystemCommand(f"{b.description}", f"key {b.key_display or b.key} — {b.action}",
                                    lambda o=owner, a=b.action: self.run_action(a, o))
        yield from super().get_system_commands(screen)

    # ------------------------------------------------------------------ loading and evaluation
    def load(self, path: Path) -> None:
        self.target = Path(path)
        self.sub_title = str(self.target)
        self.status = "loading"
        self.progress = (0, 3, "reading the campaign files")
        self._refresh_current()
        self._load_worker(self.target, self.requested_measures)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_worker(self, path: Path, measures: list[str] | None) -> tuple[CampaignModel, list[str], list[str]]:
        model = CampaignModel.load(path)
        check_cancel()
        specs, bad = model.usable_measures(measures or model.default_measures)
        if not specs:
            specs, _ = model.usable_measures(["map", "P.10"])
        self.call_from_thread(self._set_progress, 1, 3, f"evaluating {', '.join(specs)}")
        if len(model.qrels) == 0 or not (model.qrels["grade"] >= 0).any():
            # a new campaign: nothing to score yet, but pools can be built and documents judged
            bad = bad + ["no judgments yet: the leaderboard, matrix, stability and cost screens need some; "
                         "build a pool (p) and judge (j), then ctrl+r"]
            return model, specs, bad
        model.evaluate(specs)
        check_cancel()
        return model, specs, bad

    @work(thread=True, exclusive=True, group="evaluate", exit_on_error=False)
    def _evaluate_worker(self, specs: list[str]) -> tuple[CampaignModel, list[str], list[str]]:
        model = self.model
        ok, bad = model.usable_measures(specs)
        if not ok:
            raise CranfieldError("none of the chosen measures is known: " + "; ".join(bad))
        model.evaluate(ok)
        check_cancel()
        return model, ok, bad

    def set_measures(self, specs: list[str]) -> None:
        """Re-evaluate with another measure list (in a worker)."""
        if self.model is None:
            return
        ok, bad = self.model.usable_measures(list(specs))
        if not ok:
            self.notify("none of the chosen measures is known: " + "; ".join(bad), title="Error",
                        severity="error", timeout=20)
            return
        self.status = "evaluating"
        self.progress = (1, 3, f"evaluating {', '.join(specs)}")
        self._refresh_current()
        self._evaluate_worker(list(specs))

    def _set_progress(self, done: int, total: int, text: str) -> None:
        self.progress = (done, total, text)
        self._refresh_current()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        w = event.worker
        if w.group not in ("load", "evaluate"):
            return
        if event.state == WorkerState.SUCCESS:
            model, specs, bad = w.result
            self.model, self.measures = model, specs
            self.sub_title = model.name
            self.status = "ready"
            self.data_version += 1
            for b in bad:
                self.notify(b if b.startswith("no judgments") else f"measure skipped: {b}",
                            severity="warning", timeout=12)
            self._refresh_current()
        elif event.state == WorkerState.ERROR:
            self.status = "error" if self.model is None else "ready"
            self.report_error(w.error)
            self._refresh_current()
        elif event.state == WorkerState.CANCELLED:
            self.status = "cancelled" if self.model is None else "ready"
            self.notify("cancelled", severity="warning")
            self._refresh_current()

    def cancel_work(self) -> bool:
        """Cancel running load/evaluation workers; True when something was running."""
        running = [w for w in self.workers if w.is_running]
        for w in running:
            w.cancel()
        return bool(running)

    def _refresh_current(self) -> None:
        from .screens.base import CranfieldScreen
        for scr in self.screen_stack:
            if isinstance(scr, CranfieldScreen):
                if hasattr(scr, "show_status"):
                    scr.show_status()
                scr.sync()

    # ------------------------------------------------------------------ errors and exports
    def report_error(self, exc: BaseException | None) -> None:
        """An engine error as a readable notification (never a traceback)."""
        if isinstance(exc, Cancelled):
            self.notify("cancelled", severity="warning")
            return
        if isinstance(exc, CranfieldError):
            msg = str(exc)
        else:
            msg = f"{type(exc).__name__}: {exc}"
        self.notify(msg[:2000], title="Error", severity="error", timeout=20)

    def export(self, stem: str, df: pd.DataFrame) -> list[Path]:
        try:
            paths = write_exports(df, stem, self.export_dir)
        except OSError as exc:
            self.notify(f"export failed: {exc}", severity="error")
            return []
        self.notify("wrote " + ", ".join(str(p) for p in paths), title="Export", timeout=10)
        return paths


def run_app(target: Path, **options) -> int:
    """Open the UI on a campaign directory (or a folder of campaigns: a picker opens first).

    options: measures (list of specs), assessor (name), export_dir (Path)."""
    target = Path(target)
    if not target.exists():
        raise CranfieldError(f"{target}: no such directory; give a campaign directory "
                             f"(with campaign.yaml) or a folder of campaigns")
    if not is_campaign(target) and not find_campaigns(target):
        raise CranfieldError(f"{target}: not a campaign (no campaign.yaml) and holds no campaign directories")
    CranfieldApp(target, **options).run()
    return 0
