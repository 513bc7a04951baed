"""`?`: every key of the current screen and of the app, with the screen's description."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def unwrap(text: str) -> str:
    """Join the hard-wrapped lines of each paragraph (the help box wraps to its own width)."""
    paras = [" ".join(p.split()) for p in text.strip().split("\n\n")]
    return "\n\n".join(paras)


def key_rows(app, screen) -> list[tuple[str, str, str]]:
    """(key, description, action) for the screen's and the app's bindings, screen first."""
    rows, seen = [], set()
    for owner in (screen, app):
        for b in owner.BINDINGS if isinstance(owner.BINDINGS, list) else []:
            if not isinstance(b, Binding):
                b = Binding(*b)
            keys = b.key_display or b.key
            if (keys, b.action) in seen or not b.description:
                continue
            seen.add((keys, b.action))
            rows.append((keys, b.description, b.action))
    return rows


def all_bindings(cls) -> list[Binding]:
    out = []
    for klass in reversed(cls.__mro__):
        for b in getattr(klass, "BINDINGS", []) if "BINDINGS" in klass.__dict__ else []:
            out.append(b if isinstance(b, Binding) else Binding(*b))
    return out


class HelpScreen(ModalScreen):
    """Keys and purpose of the screen below."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, under) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        under = self.under
        lines = [f"[b]{under.TITLE if hasattr(under, 'TITLE') and under.TITLE else type(under).__name__}[/b]"]
        if getattr(under, "HELP", ""):
            lines += ["", unwrap(under.HELP)]
        lines += ["", "[b]Keys on this screen[/b]"]
        seen = set()
        for b in all_bindings(type(under)):
            if b.description and b.key not in seen:
                seen.add(b.key)
                lines.append(f"  {b.key_display or b.key:<12} {b.description}")
        lines += ["", "[b]Everywhere[/b]"]
        for b in all_bindings(type(self.app)):
            if b.description and b.key not in seen:
                lines.append(f"  {b.key_display or b.key:<12} {b.description}")
        lines += ["", "ctrl+p opens the command palette (every action, searchable). Escape closes this help."]
        with VerticalScroll(id="help-box"):
            yield Static("\n".join(lines), id="help-text")

    def action_dismiss(self) -> None:
        self.dismiss()
