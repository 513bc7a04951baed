"""The Cranfield Textual application (placeholder home screen until the TUI issue lands)."""
from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class CranfieldApp(App):
    """Keyboard-first campaign browser."""

    TITLE = "Cranfield"
    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, campaign_dir: Path):
        super().__init__()
        self.campaign_dir = Path(campaign_dir)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Campaign: {self.campaign_dir}", id="home")
        yield Footer()


def run_app(target: Path) -> int:
    """Open the UI on a campaign directory."""
    CranfieldApp(target).run()
    return 0
