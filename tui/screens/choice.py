"""Small modal pickers: one option from a list, or several (measures)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, SelectionList, Static
from textual.widgets.option_list import Option


class ChoiceScreen(ModalScreen):
    """Pick one value (Enter) or, with `multi`, several (space toggles, Enter confirms)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, options: list[tuple[str, object]], *, multi: bool = False,
                 selected: list | None = None):
        super().__init__()
        self.title_text = title
        self.options = options
        self.multi = multi
        self.selected = selected or []

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            hint = "space toggles, enter confirms, escape cancels" if self.multi else "enter picks, escape cancels"
            yield Static(f"[b]{self.title_text}[/b]  ({hint})")
            if self.multi:
                yield SelectionList(*[(label, i, value in self.selected) for i, (label, value) in enumerate(self.options)],
                                    id="choice")
            else:
                yield OptionList(*[Option(label, id=str(i)) for i, (label, _) in enumerate(self.options)], id="choice")

    def on_mount(self) -> None:
        self.query_one("#choice").focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.options[int(event.option.id)][1])

    def on_key(self, event) -> None:
        if self.multi and event.key == "enter":
            event.stop()
            sel = self.query_one(SelectionList)
            idx = sorted(sel.selected)
            self.dismiss([self.options[i][1] for i in idx])

    def action_cancel(self) -> None:
        self.dismiss(None)
