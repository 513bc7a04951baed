"""A progress line for long work running in a worker (escape cancels)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static


class JobBar(Horizontal):
    DEFAULT_CSS = """
    JobBar { height: 1; display: none; padding: 0 1; }
    JobBar.running { display: block; }
    JobBar Static { width: 1fr; height: 1; }
    JobBar ProgressBar { width: 22; }
    """
    HINT = " (escape cancels) "

    def compose(self) -> ComposeResult:
        yield Static("", id="job-text")
        yield ProgressBar(total=100, show_eta=False, id="job-bar")

    def start(self, text: str) -> None:
        self.add_class("running")
        self.query_one("#job-text", Static).update(self.fit(text))
        self.query_one("#job-bar", ProgressBar).update(total=100, progress=0)

    def fit(self, text: str) -> str:
        """The line's text and its escape hint in the room beside the bar (the text shortened with …,
        never the hint)."""
        from .cells import literal
        room = (self.size.width or self.app.size.width) - 2 - 22 - len(self.HINT)
        if room > 8 and len(text) > room:
            text = text[:room - 1] + "…"
        return literal(text) + self.HINT

    def step(self, fraction: float, text: str = "") -> None:
        self.query_one("#job-bar", ProgressBar).update(progress=100 * max(0.0, min(1.0, fraction)))
        if text:
            self.query_one("#job-text", Static).update(self.fit(text))

    def stop(self) -> None:
        self.remove_class("running")
