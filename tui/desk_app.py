"""The assessor's judging desk: the Judging screen and nugget assignment for one assessor, nothing else.

What `cranfield serve` runs per browser session (`python -m tui.desk_app DIR --assessor NAME`, under
textual-serve's web driver). It is the main app (tui.app.CranfieldApp) with the organizer's reach taken
away: only the keys of `BINDINGS` (no inherited app keys, no command palette), only the modes of
`MODES`, no exports, no reload or re-evaluation, no Home, pools, settings, intake or leaderboard. The
campaign is read without scoring it. Leases the assessor holds stay theirs when the session ends (a
reload of the page re-attaches them to the same documents; unused leases expire after
judging.lease_seconds)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from .app import CranfieldApp
from .model import CampaignModel
from .screens.base import CranfieldScreen, nav_bar

DESK_NAV = [("j", "judge", "judge"), ("N", "assign", "assign nuggets")]
"""The desk's screens and their keys (the nav line of every desk screen)."""

REFUSED = "not on the judging desk: the organizer's screens are not served to assessors"


class DeskAssignScreen(CranfieldScreen):
    """Nugget assignment: the topics with answers to assess; enter opens Assign for the chosen topic."""

    TITLE = "Assign nuggets"
    MODE = "assign"
    NEEDS_SCORES = False
    WATCH = ("nuggets", "answers")
    HELP = """The topics whose generated answers have nuggets to assess, with how many (answer, nugget) pairs are
assessed. Enter opens one answer beside one nugget: s support, p partial support, n not support (recorded
in the `human` assignment source under your name), u undoes, c shows the cited passages, escape comes
back here. j goes to relevance judging."""
    BINDINGS = [Binding("enter", "open_topic", "Assign", key_display="⏎")]

    def __init__(self) -> None:
        super().__init__()
        self.data = None
        self.topics: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="desk-assign-title", classes="title")
        yield OptionList(id="desk-assign-topics")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """The base screen's export is the organizer's: hidden and refused on the desk."""
        return action != "export"

    def refresh_data(self) -> None:
        from .nuggets import NuggetData
        from .screens.nuggets import NO_RAG, SOURCE, has_rag
        title = self.query_one("#desk-assign-title", Static)
        box = self.query_one(OptionList)
        was = box.highlighted or 0                # the topic under the cursor stays there on a redraw
        box.clear_options()
        root = Path(self.model.root)
        if not has_rag(root):
            self.data, self.topics = None, []
            title.update(NO_RAG)
            return
        self.data = NuggetData(root, SOURCE, self.app.assessor)
        self.topics = [t for t in self.data.topics if len(self.data.topic_nuggets(t)) and self.data.topic_answers(t)]
        from engine.util.names import shown
        for t in self.topics:
            done, total = self.data.progress(t)
            box.add_option(Option(f"{shown(t)}  {done}/{total} assessed", id=None))
        title.update(f"Assign nuggets as {shown(self.app.assessor)}: {len(self.topics)} topics with answers "
                     f"and nuggets" if self.topics else "No topic has both nuggets and answers to assess yet.")
        if self.topics:
            box.highlighted = min(was, len(self.topics) - 1)
        box.focus()

    def action_open_topic(self) -> None:
        box = self.query_one(OptionList)
        if self.data is None or box.highlighted is None or box.highlighted >= len(self.topics):
            return
        from .screens.nuggets import AssignModeScreen
        self.app.push_screen(AssignModeScreen(self.data, self.topics[box.highlighted]))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.query_one(OptionList).highlighted = event.option_index
        self.action_open_topic()


def _judge_screen():
    from .screens.judge import JudgeScreen
    return JudgeScreen()


class DeskApp(CranfieldApp, inherit_bindings=False):   # none of the main app's keys (h l m p v c x o ...)
    """The judging desk of one assessor (see the module's docstring for what it leaves out)."""

    TITLE = "Cranfield judging desk"
    ENABLE_COMMAND_PALETTE = False
    MODES = {"judge": _judge_screen, "assign": DeskAssignScreen}
    DEFAULT_MODE = "judge"
    NAV = DESK_NAV
    desk_only = True          # tui.screens.base.desk_only: the desk's screens leave out the organizer's keys and figures
    BINDINGS = [
        Binding("j", "goto('judge')", show=False, description="Judge"),
        Binding("N", "goto('assign')", show=False, description="Assign nuggets"),
        Binding("question_mark", "help", "Help", key_display="?", show=False),
        Binding("ctrl+q", "quit", "End this judging session", show=False),
    ]

    def __init__(self, target: Path, assessor: str):
        super().__init__(target, assessor=assessor)
        self.keep_leases = True              # tui.screens.judge: a session's end keeps its leases
        self.refused: list[str] = []         # what was asked for and refused (tests read it)

    def on_mount(self) -> None:
        self.sub_title = f"{self.target.name} · assessor {self.assessor}"
        self.set_interval(1.0, self.check_files)
        self.load(self.target)

    def action_goto(self, mode: str) -> None:
        if mode not in self.MODES:
            self._refuse(mode)
            return
        super().action_goto(mode)

    def _refuse(self, what: str) -> None:
        self.refused.append(what)
        self.notify(f"{what}: {REFUSED}", severity="warning", timeout=4)

    def action_compare(self) -> None:
        self._refuse("compare")

    def action_run_field(self) -> None:
        self._refuse("run field")

    def action_reload(self) -> None:
        self._refuse("reload")

    def set_measures(self, specs, *, judgments=()) -> None:
        self._refuse("measures")

    def export(self, stem, df) -> list:
        self._refuse("export")
        return []

    def _load(self, progress, path: Path, measures, judgment_spec):
        """The campaign without scores: the desk judges, it does not evaluate."""
        return CampaignModel.load(path), [], []

    def _announce_problems(self, model) -> None:
        """Input problems are the organizer's (Home lists them in the TUI); the desk does not show them."""

    def check_files(self, redraw: bool = False) -> None:
        """New judgments, pools or nuggets from other assessors: the screens watching them redraw (the
        campaign is never re-scored here)."""
        if self.model is None:
            return
        changed = self.take_file_changes()
        if changed or redraw:
            self._refresh_current()
        if "judgments" in changed:
            self._follow_judgments()

    def _follow_judgments(self) -> None:
        """Other assessors judged: the Judging screen's counts follow; a document on screen that someone
        else judged meanwhile (an override of the lease) gives way to the next one."""
        from .screens.judge import JudgeScreen
        for scr in self.screen_stack:
            if isinstance(scr, JudgeScreen) and scr.composed() and scr.topic is not None:
                try:
                    others = set(scr.judged_by().get((scr.topic, scr.doc), set())) - {self.assessor}
                    if scr.doc is not None and others and (scr.topic, scr.doc) not in scr.double_set([scr.doc]):
                        scr.next_doc()
                    else:
                        scr.draw()
                except Exception as exc:      # noqa: BLE001 - a failed redraw must not end the session
                    self.report_error(exc)


def main(argv: list[str] | None = None) -> int:
    """`python -m tui.desk_app DIR --assessor NAME` (what cranfield serve starts per session)."""
    from engine.judging.tokens import check_assessor
    p = argparse.ArgumentParser(prog="python -m tui.desk_app", description="the judging desk of one assessor")
    p.add_argument("campaign")
    p.add_argument("--assessor", required=True)
    a = p.parse_args(argv)
    app = DeskApp(Path(a.campaign), check_assessor(a.assessor))
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
