"""The Cranfield Textual application: one mode per screen family, data loaded in workers."""
from __future__ import annotations

import inspect
import stat
import threading
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Iterable

import pandas as pd
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker

from engine.errors import CranfieldError
from engine.judging.checks import default_assessor
from engine.util.names import shown
from engine.util import fs

from .export import write_exports
from .model import CampaignModel
from .screens.help import HelpScreen, all_bindings, long_description
from .source import find_campaigns, is_campaign
from .work import Cancelled, check_cancel, start_work

CAMPAIGN_WORK = "campaign"
"""The worker group of the campaign's load and evaluations (one at a time: a newer request cancels the older)."""


@dataclass(frozen=True)
class Notice:
    """One notification the app showed (kept in `CranfieldApp.notices`, for tests and scripts)."""

    message: str
    title: str
    severity: str


def _screen_factory(name: str) -> Callable[[], Screen]:
    def make() -> Screen:
        from .screens import agreement, cost, home, judge, leaderboard, matrix, nuggets, pool, stability, training
        return {"nuggets": nuggets.NuggetsModeScreen,"training": training.TrainingScreen, "agreement": agreement.AgreementScreen,
                "home": home.HomeScreen, "leaderboard": leaderboard.LeaderboardScreen,
                "matrix": matrix.MatrixScreen, "pool": pool.PoolScreen, "judge": judge.JudgeScreen,
                "stability": stability.StabilityScreen, "cost": cost.CostScreen}[name]()
    return make


FILE_KINDS = ("runs", "pools", "judgments", "sources", "config", "answers", "nuggets")
"""The campaign files screens watch (`CranfieldScreen.WATCH`): run files, pools, the judgment log and
imported judgments, judgment sources, campaign.yaml, answer runs, the nugget and assignment stores."""


def _stat_or_none(p: Path):
    """The stat of `p` through the anchored open (None: gone, or a link refused)."""
    try:
        return fs.stat(p)
    except (OSError, CranfieldError):
        return None


POLL_SECONDS = 0.5
"""How often the app compares the campaign's files with what its screens last saw (`check_files`): a
judgment another assessor records (the CLI, another terminal, a browser) shows within this."""


class FilesChanged(Message):
    """Campaign files of `kinds` (FILE_KINDS) changed on disk, whoever wrote them: sent by the app's one poll
    (`CranfieldApp.check_files`) to every screen on the stack; a screen that follows other writers (Judging
    moves off a document someone else judged, Assign reloads the assignments) handles `on_files_changed`.
    Screens that only redraw need nothing: they watch the kinds (`CranfieldScreen.WATCH`)."""

    bubble = False

    def __init__(self, kinds: frozenset[str]):
        super().__init__()
        self.kinds = kinds


def _import_stats() -> None:
    import scipy.stats  # noqa: F401


def file_signature(root: Path) -> dict[str, tuple]:
    """Per FILE_KINDS kind, (name, size, mtime) of its files: a change of any means the campaign changed.
    Leases are left out (they change whenever an assessor moves to the next document)."""
    def listing(folder: Path, pattern: str = "*") -> tuple:
        try:                # one anchored walk to the folder, each entry's stat by its descriptor (fs.stats)
            return tuple((name, st.st_size, st.st_mtime_ns) for name, st in fs.stats(folder, pattern)
                         if name != "leases.jsonl" and stat.S_ISREG(st.st_mode))
        except OSError:
            return ()
    root = Path(root)
    cfg = _stat_or_none(root / "campaign.yaml")
    config = (cfg.st_size, cfg.st_mtime_ns) if cfg is not None else ()
    return {"runs": listing(root / "runs"), "pools": listing(root / "pools"),
            "judgments": listing(root / "judgments"), "sources": listing(root / "judgments" / "sources"),
            "config": config, "answers": listing(root / "answers"),
            "nuggets": listing(root / "nuggets") + listing(root / "nuggets" / "assign")
            + listing(root / "nuggets" / "support")}


def break_paths(text: str, width: int) -> str:
    """Text whose words longer than `width` (file paths) start a line and are broken into lines after a
    `/` (or, with none in reach, at `width`), so a notice never wraps inside a file name."""
    import re

    def split(word: str) -> str:
        lines, cur = [], ""
        for part in re.split(r"(?<=/)", word):
            while len(part) > width:                 # one path component longer than a line
                if cur:
                    lines.append(cur)
                    cur = ""
                lines.append(part[:width])
                part = part[width:]
            if len(cur) + len(part) > width and cur:
                lines.append(cur)
                cur = ""
            cur += part
        return "\n".join(lines + [cur])
    return re.sub(r"\S{%d,}" % (width + 1), lambda m: "\n" + split(m.group()), text) if width > 8 else text


def _blocks_done(progress, text: str) -> Callable[[int, int], None]:
    """progress(done, total) of an evaluation's blocks as the load's progress line (each whole percent
    once: 1,000 runs are 500 blocks); cancelled work stops waiting for its blocks here."""
    seen = [-1]

    def step(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        if pct != seen[0]:
            seen[0] = pct
            progress(1 / 3 + done / max(total, 1) / 3, f"{text}: {pct}% of the runs")
    return step


def _answer_run_count(root: Path) -> int:
    """Answer runs in answers/ (engine.nuggets.campaign.answer_runs); 0 when unreadable (N says why)."""
    from engine.nuggets.campaign import answer_runs
    try:
        return len(answer_runs(root))
    except (CranfieldError, OSError):
        return 0


SCREEN_MODES = ("home", "leaderboard", "matrix", "pool", "judge", "stability", "cost", "training", "agreement",
                "nuggets")
"""Every screen family, one mode each (declared once, in CranfieldApp.MODES)."""


class CranfieldApp(App):
    """Keyboard-first browser of one evaluation campaign."""

    TITLE = "Cranfield"
    CSS_PATH = "cranfield.tcss"
    ENABLE_COMMAND_PALETTE = True
    MODES = {name: _screen_factory(name) for name in SCREEN_MODES}
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
        Binding("g", "goto('training')", show=False, description="Training"),
        Binding("k", "goto('agreement')", show=False, description="Agreement"),
        Binding("N", "goto('nuggets')", show=False, description="Nuggets (answer runs)"),
        Binding("question_mark", "help", "Help", key_display="?", show=False),  # the nav line says "? help"
        Binding("ctrl+r", "reload", "Reload campaign", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, target: Path, *, export_dir: Path | None = None, measures: list[str] | None = None,
                 assessor: str | None = None):
        super().__init__()
        self.target = Path(target)
        self.export_dir = Path(export_dir).resolve() if export_dir else None
        self.requested_measures = measures
        self.assessor = default_assessor(assessor or None) or "assessor"   # the one default; a nameless session still judges
        self.model: CampaignModel | None = None
        self.measures: list[str] = []
        self.data_version = 0
        self.judgments_changed = False
        self.status = "starting"
        self.progress: tuple[int, int, str] = (0, 1, "")
        self.job: Worker | None = None         # the running load or evaluation (group CAMPAIGN_WORK)
        self.worker_failures: list[BaseException] = []   # unexplained errors of background work (tests check)
        self.last_export = ""                   # what the last `e` wrote (also shown as a notification)
        self.judgment_spec: str | None = None    # the judgments scores use (None: the campaign's own)
        self.notices: list[Notice] = []          # every notification shown, oldest first (last 1000)
        self._held: list[tuple] = []             # notifications waiting for a dialog to close (last 20)
        self.file_versions: dict[str, int] = dict.fromkeys(FILE_KINDS, 0)   # bumped when those files change
        self._file_sig: dict[str, tuple] | None = None

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Show a notification and record it in `notices` (a public record: toasts expire)."""
        self.notices.append(Notice(str(message), str(title), str(severity)))
        del self.notices[:-1000]
        self._held.append((str(message), str(title), severity, timeout, markup))
        del self._held[:-20]
        self._show_held()

    def _dialog_open(self) -> bool:
        """A modal screen (a picker, a form, help) is on top: toasts would cover it."""
        from textual.screen import ModalScreen
        return bool(self.screen_stack) and isinstance(self.screen, ModalScreen)

    def _show_held(self) -> None:
        """Show the notifications held while a dialog was open (never drawn over a dialog)."""
        if self._dialog_open():
            return
        width = min(60, max(self.size.width // 2, 20)) - 5      # the toast's text width (Textual: 60, <= 50%)
        held, self._held = self._held, []
        for message, title, severity, timeout, markup in held:
            super().notify(break_paths(shown(message, "\n"), width), title=shown(title), severity=severity,
                           timeout=timeout, markup=markup)

    def pop_screen(self):
        """As App.pop_screen; notifications held while a dialog was open are shown once it closes."""
        done = super().pop_screen()
        self.call_after_refresh(self._show_held)
        return done

    # ------------------------------------------------------------------ screens
    def on_mount(self) -> None:
        self.sub_title = str(self.target)
        self.set_interval(POLL_SECONDS, self.check_files)
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

    def push_screen(self, screen, callback=None, wait_for_dismiss: bool = False):
        """As App.push_screen; an error in `callback` (what a modal's answer does) becomes a notification
        instead of ending the app, as screen actions do."""
        if callback is not None and not inspect.iscoroutinefunction(callback):
            given = callback

            def callback(result, _given=given):
                try:
                    return _given(result)
                except Exception as exc:
                    self.report_error(exc)
                    return None
        return super().push_screen(screen, callback, wait_for_dismiss=wait_for_dismiss)

    def _picked(self, path: Path | None) -> None:
        if path is None:
            self.exit(0)
        else:
            self.load(path)

    def action_goto(self, mode: str) -> None:
        """Show the mode's own screen (its drill-downs are left: `l` shows the leaderboard, not a run
        opened from it earlier)."""
        if self.current_mode != mode:
            self.switch_mode(mode)
        while len(self.screen_stack) > 1:
            self.pop_screen()

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
                keys = ", ".join(k.strip() for k in (b.key_display or b.key).split(","))
                where = "" if owner is self else f" ({getattr(screen, 'TITLE', '') or type(screen).__name__})"
                yield SystemCommand(long_description(b), f"key {keys}{where}",
                                    lambda o=owner, a=b.action: self.run_action(a, o))
        yield from super().get_system_commands(screen)

    # ------------------------------------------------------------------ loading and evaluation
    @property
    def busy(self) -> bool:
        """A load or evaluation is running (and not cancelled)."""
        return self.job is not None and self.job.is_running and not self.job.is_cancelled

    def load(self, path: Path) -> None:
        self.target = Path(path)
        self.sub_title = str(self.target)
        self.status = "loading"
        self.progress = (0, 3, "reading the campaign files")
        self._refresh_current()
        measures, spec, target = self.requested_measures, self.judgment_spec, self.target
        self._start("load", lambda progress: self._load(progress, target, measures, spec))

    def _start(self, kind: str, fn: Callable) -> None:
        """Run fn(progress) in the campaign worker (a newer request supersedes the running one); its
        (model, measures, problems) is committed in `_commit` on the UI thread unless cancelled."""
        self.job = start_work(self, kind, fn, self._commit, group=CAMPAIGN_WORK, on_progress=self._set_progress,
                              on_end=self._work_ended)

    def _load(self, progress, path: Path, measures: list[str] | None,
              judgment_spec: str | None) -> tuple[CampaignModel, list[str], list[str]]:
        model = CampaignModel.load(path)
        model.answer_run_count = _answer_run_count(model.root)
        check_cancel()
        specs, bad = model.usable_measures(measures or model.default_measures)
        if judgment_spec is not None:
            try:
                model.use_judgments(judgment_spec)
            except CranfieldError as exc:
                bad = bad + [f"judgments {judgment_spec}: {exc}; scored with the official judgments"]
        if not specs:
            specs, _ = model.usable_measures(["map", "P.10"])
        progress(1 / 3, f"evaluating {', '.join(specs)}")
        if len(model.qrels) == 0 or not (model.qrels["grade"] >= 0).any():
            # a new campaign: nothing to score yet, but pools can be built and documents judged
            from .screens.nuggets import has_answer_runs
            if has_answer_runs(model.root):
                bad = bad + ["no judgments of retrieval runs yet: the leaderboard (l) shows the answer runs' "
                             "nugget scores; N opens the nuggets"]
            else:
                from .screens.base import missing_scores
                bad = bad + [missing_scores(model)]
            return model, specs, bad
        # the leaderboard's intervals need scipy.stats (1-2 s cold): imported off the UI thread, beside the
        # evaluation (whose blocks run in worker processes when the campaign is large)
        warm = threading.Thread(target=_import_stats, name="import-scipy-stats", daemon=True)
        warm.start()
        model.evaluate(specs, progress=_blocks_done(progress, f"evaluating {', '.join(specs)}"))
        check_cancel()
        warm.join()
        return model, specs, bad

    @staticmethod
    def _evaluate(model: CampaignModel, specs: list[str],
                  judgments: tuple = ()) -> tuple[CampaignModel, list[str], list[str]]:
        """`model` (a fork of the app's: the app's own is left as it is) with `specs` evaluated, under the
        judgment spec judgments[0] when given."""
        if judgments:
            model.use_judgments(judgments[0])
        ok, bad = model.usable_measures(specs)
        if not ok:
            raise CranfieldError("none of the chosen measures is known: " + "; ".join(bad))
        model.evaluate(ok)
        check_cancel()
        return model, ok, bad

    def set_measures(self, specs: list[str], *, judgments: tuple = ()) -> None:
        """Re-evaluate with another measure list (in the background, on a fork of the model: the scores on
        screen, the model and `measures` change only when it finishes uncancelled); `judgments`: (spec,)
        to also change the judgments the scores use."""
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
        model, specs = self.model.fork(), list(specs)
        self._start("evaluate", lambda progress: self._evaluate(model, specs, judgments))

    def set_judgments(self, spec: str | None) -> None:
        """Re-evaluate with the judgments `spec` combines (engine.judgments.sources; None: the campaign's own)."""
        if self.model is None:
            return
        self.set_measures(list(self.measures) or self.model.default_measures, judgments=(spec,))

    def _set_progress(self, fraction: float, text: str) -> None:
        if self.busy:
            self.progress = (max(1, round(3 * fraction)), 3, text)
            self._refresh_current()

    def _work_ended(self, worker: Worker) -> None:
        """The campaign worker ended (done, failed or cancelled): the status says so."""
        if worker is not self.job:
            return                               # superseded by newer work
        self.job = None
        if self.status in ("loading", "evaluating"):
            self.status = "error" if self.model is None else "ready"
            self._refresh_current()

    def _commit(self, result) -> None:
        """On the UI thread, the finished (uncancelled) load or evaluation becomes the app's state."""
        model, specs, bad = result
        self.model, self.measures = model, specs
        self.sub_title = model.name
        self.status = "ready"
        self.judgments_changed = False
        self.data_version += 1
        self.judgment_spec = model.judgment_spec
        self._file_sig = file_signature(model.root)
        for b in bad:
            self.notify(b if b.startswith(("no judgments", "no runs", "judgments ")) else f"measure skipped: {b}",
                        severity="warning", timeout=12)
        self._announce_problems(model)
        self._refresh_current()

    def _announce_problems(self, model: CampaignModel) -> None:
        """Input problems (a malformed run, ...) stay on screen until dismissed; Home lists them."""
        errors = model.load_errors()
        if errors:
            self.notify(f"{len(errors)} input problem(s), listed on Home (h) until fixed; first: {errors[0]}",
                        title="Input problems", severity="error", timeout=10 ** 6)

    def cancel_work(self) -> bool:
        """Cancel the running load or evaluation and the screens' work; True when something was running.
        The UI is usable (and quits) at once; what the abandoned work computed is dropped."""
        running = [w for w in self.workers if w.is_running and not w.is_cancelled]
        if self.busy:
            self.status = "cancelled" if self.model is None else "ready"
        for w in running:
            w.cancel()
        self.job = None
        if running:
            self.notify("cancelled", severity="warning")
        self._refresh_current()
        return bool(running)

    def mark_stale(self) -> None:
        """New judgments were recorded: the scores on screen predate them until ctrl+r."""
        self.judgments_changed = True
        self.check_files(redraw=True)

    def take_file_changes(self) -> list[str]:
        """The FILE_KINDS whose files changed since the last look (each kind's `file_versions` bumped)."""
        sig = file_signature(self.model.root)
        old, self._file_sig = self._file_sig, sig
        changed = [k for k in FILE_KINDS if old is not None and old.get(k) != sig[k]]
        for k in changed:
            self.file_versions[k] += 1
        return changed

    def check_files(self, redraw: bool = False) -> None:
        """Compare the campaign's files with what screens last saw (every POLL_SECONDS and after the app
        writes): changed kinds bump `file_versions` and go to the screens on the stack as one FilesChanged;
        new judgments or runs mark the scores stale; the screens that watch a changed kind redraw (no
        ctrl+r needed)."""
        if self.model is None or self.busy:
            if redraw:
                self._refresh_current()
            return
        changed = self.take_file_changes()
        if changed:
            for scr in self.screen_stack:
                scr.post_message(FilesChanged(frozenset(changed)))
        if set(changed) & {"judgments", "sources", "runs", "config"}:
            self.judgments_changed = True
            if self.model.scores is None:        # the first judgments: nothing on screen to keep, score now
                self.action_reload()
                return
        if changed or redraw:
            self._refresh_current()

    def campaign_changed(self) -> None:
        """The app wrote campaign files (a pool, a run, judgments): screens watching them redraw now."""
        self.check_files(redraw=True)

    @property
    def stale(self) -> bool:
        return self.judgments_changed and self.model is not None and self.model.scores is not None

    def _refresh_current(self) -> None:
        from .screens.base import CranfieldScreen
        if self.model is not None:
            self.sub_title = self.model.name + (" · STALE: ctrl+r re-scores" if self.stale else "")
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

    def export_folder(self) -> Path:
        """Where `e` writes: --export-dir, else the campaign's exports/ folder (never the current directory)."""
        if self.export_dir is not None:
            return self.export_dir
        from engine.util.confine import campaign_path
        root = self.model.root if self.model is not None else self.target
        return campaign_path(root, "exports")

    def export_about(self):
        """What an export now is made with: the judgments the scores use (official, or the spec chosen
        with J), how many are in force, the time (engine.formats.about.ExportAbout)."""
        from engine.formats.about import ExportAbout
        m = self.model
        if m is None:
            return ExportAbout("none", 0)
        q = m.judgments()
        return ExportAbout(m.judgments_label(), int((q["grade"] >= 0).sum()), campaign=str(m.name))

    def export(self, stem: str, df: pd.DataFrame) -> list[Path]:
        """Write a screen's table (tui.export.write_exports) named and described by its judgments and the
        time, never over an earlier export; `last_export` and a notification say what was written."""
        folder = None
        try:
            folder = self.export_folder()
            self._export_about = about = self.export_about()
            paths = write_exports(df, stem, folder, about)
        except CranfieldError as exc:
            self.notify(str(exc)[:2000], title="Export refused", severity="error", timeout=20)
            return []
        except OSError as exc:
            self.notify(f"export to {folder} failed: {exc}", severity="error", timeout=20)
            return []
        self.last_export = (f"wrote {len(df)} rows to {folder}/: " + ", ".join(p.name for p in paths))
        self.notify(self.last_export, title="Export", timeout=15)
        return paths

    def export_texts(self, stem: str, texts: dict[str, str]) -> list[Path]:
        """Write texts (file suffix -> text) already rendered, as `export` names and describes a table,
        with the judgments and time of the export just made (a table that goes with it)."""
        from engine.formats.about import write_described
        from .export import clean_stem
        about = getattr(self, "_export_about", None) or self.export_about()
        return write_described(self.export_folder(), clean_stem(stem), texts, about, clean_stem(stem))


def run_app(target: Path, **options) -> int:
    """Open the UI on a campaign directory (or a folder of campaigns: a picker opens first).

    options: measures (list of specs), assessor (name), export_dir (Path)."""
    target = Path(target)
    if not target.exists():
        raise CranfieldError(f"{target}: no such directory; give a campaign directory "
                             f"(with campaign.yaml) or a folder of campaigns")
    if not is_campaign(target) and not find_campaigns(target):
        raise CranfieldError(f"{target}: not a campaign (no campaign.yaml) and holds no campaign directories")
    app = CranfieldApp(target, **options)
    app.run()
    return app.return_code or 0          # non-zero when the app ended on an error (e.g. its styles failed)
