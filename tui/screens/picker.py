"""Picker shown when the directory given holds several campaigns."""
from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option
from engine.util import fs


def _label(p: Path) -> str:
    from engine.formats.safeload import safe_yaml
    try:
        cfg = safe_yaml(fs.read_text(p / "campaign.yaml", encoding="utf-8"), str(p / "campaign.yaml")) or {}
        name = str(cfg.get("name") or p.name)
    except Exception:  # a broken campaign.yaml still shows, by folder name
        name = p.name + "  (campaign.yaml unreadable)"
    n_runs = len(fs.listdir(p / "runs"))
    return f"{name}  —  {p.name}/, {n_runs} run files"


class PickerScreen(Screen):
    """Choose one campaign of a folder."""

    TITLE = "Choose a campaign"
    BINDINGS = [Binding("q,escape", "quit_picker", "Quit")]

    def __init__(self, campaigns: list[Path]):
        super().__init__()
        self.campaigns = campaigns

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"{len(self.campaigns)} campaigns here; enter opens one.", classes="title")
        yield OptionList(*[Option(_label(p), id=str(i)) for i, p in enumerate(self.campaigns)], id="picker")
        yield Footer(compact=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.campaigns[int(event.option.id)])

    def action_quit_picker(self) -> None:
        self.dismiss(None)
