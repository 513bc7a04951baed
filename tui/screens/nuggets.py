"""The Nuggets and Assign screens (tui.nuggets) as screens of the main app: mode `N`, available when the
campaign has answer runs (answers/) or nuggets (nuggets/nuggets.jsonl); otherwise a one-line explanation."""
from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from engine.errors import CranfieldError

from ..nuggets import AssignScreen, NuggetData, NuggetsScreen
from .base import CranfieldScreen, nav_bar

SOURCE = "human"
"""The assignment source the main app's screens write and its leaderboard scores (as the CLI's default)."""


def has_answer_runs(root: Path) -> bool:
    """The campaign has answer runs (answers/*.jsonl)."""
    from engine.nuggets.campaign import answer_files
    try:
        return bool(answer_files(root))
    except (CranfieldError, OSError):
        return False


def has_rag(root: Path) -> bool:
    """The campaign has answer runs (answers/) or nuggets: the nugget screens have something to show."""
    from engine.nuggets.store import nuggets_path
    try:
        return has_answer_runs(root) or nuggets_path(root).is_file()
    except (CranfieldError, OSError):
        return False


NO_RAG = ("Nuggets: this campaign has no answer runs (answers/) and no nuggets; "
          "see docs/rag.md (cranfield nuggets ...).")


class NuggetsModeScreen(CranfieldScreen, NuggetsScreen):
    """Mode `N`: a topic's nuggets (importance, provenance, progress); enter assigns them to answers."""

    TITLE = "Nuggets"
    MODE = "nuggets"
    NEEDS_SCORES = False
    ALWAYS_ACTIONS = ("back", "cancel", "cancel_input", "quit")
    WATCH = ("nuggets", "answers")
    HELP = """Nugget evaluation of generated answers (TREC RAG style, docs/rag.md): the topic's nuggets with their
importance (VITAL / okay), provenance and edit count, and how many (answer, nugget) pairs the `human`
source has assigned. a adds a nugget, r rewords, i toggles vital/okay, d retires, v shows the cited
passages, [ ] change topic, enter assigns the topic's nuggets to its answers (s / p / n, u undoes).
The leaderboard (l, then n) shows the nugget scores of the answer runs."""
    BINDINGS = [  # the footer holds them whole at 80 columns beside the palette hint
        Binding("escape", "cancel_input", "Cancel", show=False),
        Binding("left_square_bracket", "topic(-1)", "Topic", show=False),
        Binding("right_square_bracket", "topic(1)", "Topic", key_display="[ ]"),
        Binding("e", "export", "Export", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(None)
        self._root: Path | None = None
        self._why: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield from self.body()
        yield nav_bar(self)
        yield Footer(compact=True)

    def refresh_data(self) -> None:
        """The campaign's files changed (answer runs, the stores, a reload): read them again."""
        self.data = None
        self.show()

    def _load(self) -> str | None:
        """Read the campaign's nugget data (when missing or the campaign changed); the reason when none."""
        m = self.app.model
        if m is None:
            return "Nuggets: the campaign is not loaded yet."
        root = Path(m.root)
        if not has_rag(root):
            self.data, self._root = None, None
            return NO_RAG
        try:
            if self._root != root:
                self.t = 0
            if self.data is None or self._root != root:
                self.data, self._root = NuggetData(root, SOURCE, self.app.assessor), root
        except CranfieldError as exc:
            self.data = None
            return f"Nuggets: {exc}"
        return None

    def show(self) -> None:
        why = self._why = self._load()
        if why is not None:
            self.query_one(DataTable).clear()
            self.query_one("#nug-title", Static).update(why)
            self.query_one("#nug-text", Static).update("")
            return
        if self.data is not None:
            self.t = min(self.t, max(len(self.data.topics) - 1, 0))
            NuggetsScreen.show(self)

    def show_text(self) -> None:
        if self.data is not None:
            NuggetsScreen.show_text(self)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Enter's Assign hint only when there is a topic to assign (the title says why otherwise)."""
        if action == "assign" and self.topic is None:
            return False
        return super().check_action(action, parameters)

    def action_assign(self) -> None:
        if self.topic is None:
            self.notify(self._why or NO_RAG, severity="warning", timeout=6)
            return
        NuggetsScreen.action_assign(self)

    def assign_screen(self, data: NuggetData, topic: str) -> AssignScreen:
        return AssignModeScreen(data, topic)

    def export_table(self):
        if self.topic is None:
            return None
        return f"nuggets-{self.topic}", self.data.topic_nuggets(self.topic)


class AssignModeScreen(AssignScreen):
    """The Assign screen of the main app: one answer and one nugget at a time (s / p / n, u undoes)."""

    TITLE = "Assign"
    HELP = """One answer of the topic beside one nugget: s support, p partial support, n not support (each
recorded in the `human` assignment source with the seconds it took, then the next nugget), u undoes this
session's last assignment, c shows the cited passages, left / right change nugget, , and . change answer,
escape goes back. The leaderboard's nugget scores (l, n) follow at once."""
    BINDINGS = [
        Binding("comma", "answer(-1)", "Answer", show=False),
        Binding("full_stop", "answer(1)", "Answer", key_display=", ."),
    ]

    def on_files_changed(self, event) -> None:
        """The stores changed on disk (`cranfield nuggets assign`, another assessor): read them again and
        redraw the answer and nugget on screen (its timer keeps running)."""
        if event.kinds & {"nuggets", "answers"} and self.is_mounted:
            shown_at = self.shown_at
            self.data.reload()
            self.show()
            self.shown_at = shown_at
