"""`?`: every key of the current screen and of the app, with the screen's description."""
from __future__ import annotations

from rich.text import Text
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


def long_description(b: Binding) -> str:
    """A binding's full description (its tooltip when the footer label is short)."""
    return b.tooltip or b.description


class HelpScreen(ModalScreen):
    """Keys and purpose of the screen below."""

    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, under) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        under = self.under
        # plain text with styled spans, never markup: help and keys may contain [ and ] (topic keys)
        title = under.TITLE if hasattr(under, "TITLE") and under.TITLE else type(under).__name__
        text = Text()
        text.append(str(title), style="bold")
        if getattr(under, "HELP", ""):
            text.append("\n\n" + unwrap(under.HELP))
        text.append("\n\nKeys on this screen", style="bold")
        seen = set()
        for b in all_bindings(type(under)):
            if b.description and b.key not in seen:
                seen.add(b.key)
                text.append(f"\n  {b.key_display or b.key:<12} {long_description(b)}")
        text.append("\n\nEverywhere", style="bold")
        for b in all_bindings(type(self.app)):
            if b.description and b.key not in seen:
                text.append(f"\n  {b.key_display or b.key:<12} {long_description(b)}")
        text.append("\n\nctrl+p opens the command palette (every action, searchable). Escape closes this help.")
        with VerticalScroll(id="help-box"):
            yield Static(text, id="help-text")

    def action_dismiss(self) -> None:
        self.dismiss()
