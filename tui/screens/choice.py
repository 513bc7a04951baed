"""Small modal pickers: one option from a list, or several (measures); typing filters the list."""
from __future__ import annotations

from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import OptionList, SelectionList, Static
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import Option, OptionDoesNotExist

from engine.util.names import shown

from ..widgets.cells import literal

CHECKED, UNCHECKED = "✓", " "


class NoWrap:
    """Up on the first option and down on the last stay put (a list never wraps from bottom to top)."""

    def action_cursor_down(self) -> None:
        if self.highlighted is None or self.highlighted < self.option_count - 1:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if self.highlighted is None or self.highlighted > 0:
            super().action_cursor_up()


class PlainOptionList(NoWrap, OptionList):
    """An OptionList that does not wrap."""


class MarkedSelectionList(NoWrap, SelectionList):
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


def typed(event) -> str | None:
    """The character a key press types into a filter (letters, digits, punctuation; not space), else None."""
    c = event.character
    return c if c is not None and len(c) == 1 and c.isprintable() and c != " " else None


class ChoiceScreen(ModalScreen):
    """Pick one value (Enter) or, with `multi`, several (space toggles, Enter confirms). Typing filters the
    options (backspace erases); the list opens on `current` (else the first selected option)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, options: list[tuple[str, object]], *, multi: bool = False,
                 selected: list | None = None, current: object = None):
        super().__init__()
        self.title_text = title
        self.options = options
        self.multi = multi
        self.selected = selected or []
        self.current = current
        self.query_text = ""
        self.chosen = {i for i, (_, v) in enumerate(options) if v in self.selected}   # multi: indices chosen
        self.shown: list[int] = list(range(len(options)))                            # indices listed now

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            hint = "space toggles, enter confirms, escape cancels" if self.multi else "enter picks, escape cancels"
            yield Static(f"[b]{literal(self.title_text)}[/b]  ({hint})")
            yield Static(self._filter_line(), id="choice-filter")
            if self.multi:
                yield MarkedSelectionList(*self._items(), id="choice")
            else:
                yield PlainOptionList(*self._items(), id="choice")

    def _filter_line(self) -> str:
        if not self.query_text:
            return f"[dim]type to filter ({len(self.options)} options)[/dim]"
        return (f"filter [b]{literal(self.query_text)}[/b]: {len(self.shown)} of {len(self.options)}"
                " (backspace erases)")

    def _items(self) -> list:
        """The listed options; labels are literal text (a run tag "[b]x" shows as typed, escapes escaped)."""
        def text(label):
            return Content(shown(label)) if isinstance(label, str) else label
        if self.multi:
            return [(text(self.options[i][0]), i, i in self.chosen) for i in self.shown]
        return [Option(text(self.options[i][0]), id=str(i)) for i in self.shown]

    def on_mount(self) -> None:
        lst = self.query_one("#choice")
        lst.focus()
        values = [v for _, v in self.options]
        start = None
        if self.current is not None and self.current in values:
            start = values.index(self.current)
        elif self.multi and self.chosen:
            start = min(self.chosen)
        if start is not None:
            lst.highlighted = start

    def refilter(self) -> None:
        """List the options whose label holds the typed text (any case), keeping what is chosen."""
        q = self.query_text.casefold()
        self.shown = [i for i, (label, _) in enumerate(self.options) if q in str(label).casefold()]
        lst = self.query_one("#choice")
        with self.app.batch_update():
            lst.clear_options()
            lst.add_options(self._items())
            if self.shown:
                lst.highlighted = 0
        self.query_one("#choice-filter", Static).update(self._filter_line())

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        visible = set(self.shown)
        self.chosen = (self.chosen - visible) | (set(event.selection_list.selected) & visible)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.options[int(event.option.id)][1])

    def on_key(self, event) -> None:
        if self.multi and event.key == "enter":
            event.stop()
            self.dismiss([self.options[i][1] for i in sorted(self.chosen)])
            return
        c = typed(event)
        if c is not None:
            event.stop()
            event.prevent_default()
            self.query_text += c
            self.refilter()
        elif event.key == "backspace" and self.query_text:
            event.stop()
            event.prevent_default()
            self.query_text = self.query_text[:-1]
            self.refilter()

    def action_cancel(self) -> None:
        """Escape: clear the filter, else cancel."""
        if self.query_text:
            self.query_text = ""
            self.refilter()
            return
        self.dismiss(None)
