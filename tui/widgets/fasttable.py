"""A light read-only table for large, often re-sorted lists (the leaderboard).

Rows are pre-joined into one text line each when the data is set, and only the visible lines are
drawn (Textual's line API), so re-sorting 200 runs costs one list rebuild plus one screen of lines.
"""
from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


def _fit(text: str, width: int, right: bool) -> str:
    if len(text) > width:
        return text[: max(0, width - 1)] + "…" if width > 0 else ""
    return text.rjust(width) if right else text.ljust(width)


class FastTable(ScrollView, can_focus=True):
    """Header line + rows of plain-text cells; a row cursor; Enter posts RowSelected."""

    DEFAULT_CSS = """
    FastTable { height: 1fr; }
    FastTable > .fasttable--header { text-style: bold; background: $panel; }
    FastTable > .fasttable--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    FastTable > .fasttable--odd { background: $surface-lighten-1 10%; }
    """
    COMPONENT_CLASSES = {"fasttable--header", "fasttable--cursor", "fasttable--odd"}
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "select", "Open", show=False),
        Binding("left", "scroll_left", "Left", show=False),
        Binding("right", "scroll_right", "Right", show=False),
    ]

    cursor_row = reactive(0)

    class RowSelected(Message):
        def __init__(self, table: "FastTable", row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = row

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.column_keys: list[str] = []
        self._header = ""
        self._lines: list[str] = []
        self._cells: list[list[str]] = []

    # ------------------------------------------------------------------ data
    def set_data(self, keys: list[str], headers: list[str], rows: list[list[str]],
                 right: list[bool] | None = None) -> None:
        """Replace the content; column widths come from the longest cell or header."""
        n = len(keys)
        right = right or [False] * n
        widths = [max([len(headers[j])] + [len(r[j]) for r in rows]) for j in range(n)]
        self.column_keys = list(keys)
        self._cells = rows
        self._header = " " + " ".join(_fit(h, w, rt) for h, w, rt in zip(headers, widths, right)) + " "
        self._lines = [" " + " ".join(_fit(c, w, rt) for c, w, rt in zip(r, widths, right)) + " " for r in rows]
        self.virtual_size = Size(len(self._header), len(self._lines) + 1)
        if self.cursor_row >= len(self._lines):
            self.cursor_row = max(0, len(self._lines) - 1)
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self._lines)

    def get_row_at(self, i: int) -> list[str]:
        return list(self._cells[i])

    # ------------------------------------------------------------------ drawing
    def render_line(self, y: int) -> Strip:
        width = self.size.width
        sx, sy = self.scroll_offset
        base = self.rich_style
        if y == 0:
            text, style = self._header, base + self.get_component_rich_style("fasttable--header")
        else:
            i = sy + y - 1
            if i >= len(self._lines):
                return Strip.blank(width, base)
            text = self._lines[i]
            if i == self.cursor_row and self.has_focus:
                style = base + self.get_component_rich_style("fasttable--cursor")
            elif i == self.cursor_row:
                style = base + Style(reverse=True)
            elif i % 2:
                style = base + self.get_component_rich_style("fasttable--odd")
            else:
                style = base
        line = text[sx: sx + width].ljust(width)
        return Strip([Segment(line, style)], width)

    def watch_cursor_row(self, old: int, new: int) -> None:
        h = max(1, self.size.height - 1)
        if new < self.scroll_offset.y:
            self.scroll_to(y=new, animate=False)
        elif new >= self.scroll_offset.y + h:
            self.scroll_to(y=new - h + 1, animate=False)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ------------------------------------------------------------------ keys
    def move_cursor(self, row: int) -> None:
        if self._lines:
            self.cursor_row = max(0, min(len(self._lines) - 1, row))

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        self.move_cursor(where if where >= 0 else len(self._lines) - 1)

    def action_select(self) -> None:
        if self._lines:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event) -> None:
        if event.y >= 1:
            self.move_cursor(self.scroll_offset.y + event.y - 1)
