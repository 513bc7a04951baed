"""Small modal pickers: one option from a list, or several (measures)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList, Static
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import Option, OptionDoesNotExist

CHECKED, UNCHECKED = "✓", " "


class MarkedSelectionList(SelectionList):
    """A SelectionList whose box shows ✓ when selected and stays blank when not (not colour alone)."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            sel = self.get_option_at_index(self.scroll_offset[1] + y)
        except OptionDoesNotExist:
            return strip
        segs = list(strip)
        if len(segs) > 1 and segs[1].text == ToggleButton.BUTTON_INNER:
            segs[1] = Segment(CHECKED if sel.value in self._selected else UNCHECKED, segs[1].style)
            return Strip(segs, strip.cell_length)
        return strip


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
                yield MarkedSelectionList(*[(label, i, value in self.selected) for i, (label, value) in enumerate(self.options)],
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
