"""Picker shown when the directory given holds several campaigns."""
from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header

from .choice import ChoiceScreen

from engine.util import fs


def _label(p: Path) -> str:
    from engine.formats.safeload import safe_yaml
    from engine.util.names import shown
    try:
        cfg = safe_yaml(fs.read_text(p / "campaign.yaml", encoding="utf-8"), str(p / "campaign.yaml")) or {}
        name = str(cfg.get("name") or p.name)
    except Exception:  # a broken campaign.yaml still shows, by folder name
        name = p.name + "  (campaign.yaml unreadable)"
    n_runs = len(fs.listdir(p / "runs")) if fs.is_dir(p / "runs") else 0
    return shown(f"{name}  —  {p.name}/, {n_runs} run files")


class PickerScreen(ChoiceScreen):
    """Choose one campaign of a folder (typing filters; escape quits)."""

    TITLE = "Choose a campaign"
    BINDINGS = [Binding("escape", "quit_picker", "Quit")]

    def __init__(self, campaigns: list[Path]):
        super().__init__(f"{len(campaigns)} campaigns here; enter opens one", [(_label(p), p) for p in campaigns])
        self.campaigns = campaigns

    def action_quit_picker(self) -> None:
        """Escape: clear the filter, else leave (the app ends)."""
        self.action_cancel()

    def compose(self) -> ComposeResult:
        yield Header()
        yield from super().compose()
        yield Footer(compact=True)
