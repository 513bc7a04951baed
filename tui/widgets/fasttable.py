"""A light read-only table for large, often re-sorted lists (the leaderboard).

Rows are pre-joined into one text line each when the data is set, and only the visible lines are
drawn (Textual's line API), so re-sorting 200 runs costs one list rebuild plus one screen of lines.
"""
from __future__ import annotations

import bisect

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

    def __init__(self, *, fixed: int = 0, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.fixed = fixed                   # leading columns that never scroll (the run name)
        self.column_keys: list[str] = []
        self._header = ""
        self._lines: list[str] = []
        self._cells: list[list[str]] = []
        self._spans: list[tuple[int, int]] = []

    # ------------------------------------------------------------------ data
    def set_data(self, keys: list[str], headers: list[str], rows: list[list[str]],
                 right: list[bool] | None = None) -> None:
        """Replace the content; column widths come from the longest cell or header."""
        n = len(keys)
        right = right or [False] * n
        cols = list(zip(*rows)) if rows else [()] * n
        widths = [max([len(headers[j]), *map(len, cols[j])]) for j in range(n)]
        self.column_keys = list(keys)
        self._cells = rows
        self._header = " " + " ".join(_fit(h, w, rt) for h, w, rt in zip(headers, widths, right)) + " "
        self._spans = []                     # (start, end) of each column in a line
        x = 1
        for w in widths:
            self._spans.append((x, x + w))
            x += w + 1
        # by column: every cell fits its column's width (the widest cell), so padding is ljust / rjust
        padded = [[c.rjust(w) for c in col] if rt else [c.ljust(w) for c in col]
                  for col, w, rt in zip(cols, widths, right)]
        self._lines = [" " + " ".join(parts) + " " for parts in zip(*padded)] if rows else []
        size = Size(len(self._header), len(self._lines) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
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
        width = self.scrollable_content_region.width     # without the scrollbars
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
        f = self._fixed_width(width)
        if f:
            spans = [(a - f, b - f) for a, b in self._spans[self.fixed:]]
            text = text[:f] + self._window(text[f:], sx, width - f, header=y == 0, spans=spans)
            return Strip([Segment(text, style)], width)
        return Strip([Segment(self._window(text, sx, width, header=y == 0), style)], width)

    def _fixed_width(self, width: int) -> int:
        """Cells of the fixed leading columns (0 without any, or when they would leave under 20 cells)."""
        if not self.fixed or len(self._spans) <= self.fixed:
            return 0
        f = self._spans[self.fixed][0]
        return f if width - f >= 20 else 0

    def _window(self, text: str, sx: int, width: int, header: bool,
                spans: list[tuple[int, int]] | None = None) -> str:
        """`width` cells of a line from `sx`: a column that does not fit whole is left blank (never a
        number cut short, e.g. 0 for 0.953); the header shows ← / → where columns are off screen."""
        spans = self._spans if spans is None else spans
        end = sx + width
        line = list(text[sx:end].ljust(width))
        if width < 3:
            return "".join(line)
        right = any(b > end for _, b in spans)
        left = any(a < sx for a, _ in spans)
        lo, hi = sx + left, end - right               # the hint cells are kept for ← and →
        for a, b in spans:
            if a < lo < b or a < hi < b:                # cut by an edge: blank its visible part
                for i in range(max(a, sx), min(b, end)):
                    line[i - sx] = " "
        if right:
            line[-1] = "→" if header else " "
        if left:
            line[0] = "←" if header else " "
        return "".join(line)

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

    def _starts(self) -> list[int]:
        """Scroll positions that show a scrolling column first (cells after the fixed columns)."""
        f = self._fixed_width(self.scrollable_content_region.width)
        first = self.fixed if f else 0
        return [max(0, a - f - 1) for a, _ in self._spans[first:]]

    def action_scroll_right(self) -> None:
        """→: the next whole column comes into view (the scroll moves by a column, not a cell)."""
        sx = self.scroll_offset.x
        nxt = [x for x in self._starts() if x > sx]
        if nxt and sx < self.max_scroll_x:
            self.scroll_to(x=min(nxt[0], self.max_scroll_x), animate=False)

    def action_scroll_left(self) -> None:
        """←: back by one whole column."""
        sx = self.scroll_offset.x
        prev = [x for x in self._starts() if x < sx]
        self.scroll_to(x=prev[-1] if prev else 0, animate=False)

    def on_click(self, event) -> None:
        if event.y >= 1:
            self.move_cursor(self.scroll_offset.y + event.y - 1)


class GridTable(ScrollView, can_focus=True):
    """A styled grid with a cell cursor and fixed leading columns (the per-topic heat map).

    Cells are (text, style) pairs; a frame draws only the visible lines and, of each, the fixed cells and
    those in view (padded then), so re-sorting 50 topics x 1,000 runs costs one rebuild of the cell list."""

    DEFAULT_CSS = """
    GridTable { height: 1fr; }
    GridTable > .gridtable--header { text-style: bold; background: $panel; }
    GridTable > .gridtable--cursor { background: $block-cursor-background; color: $block-cursor-foreground; text-style: bold; }
    """
    COMPONENT_CLASSES = {"gridtable--header", "gridtable--cursor"}
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First column", show=False),
        Binding("end", "edge(1)", "Last column", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    cursor_row = reactive(0)
    cursor_column = reactive(0)

    class CellSelected(Message):
        def __init__(self, table: "GridTable", row: int, column: int) -> None:
            super().__init__()
            self.table = table
            self.row = row
            self.column = column

    def __init__(self, *, fixed: int = 1, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.fixed = fixed
        self.column_keys: list[str] = []
        self._headers: list[str] = []
        self._widths: list[int] = []
        self._x: list[int] = [0]                # column starts (and the end); [0] before any data
        self._rows: list[list[tuple[str, Style | None]]] = []

    def set_data(self, keys: list[str], headers: list[str], rows: list[list[tuple[str, Style | None]]]) -> None:
        n = len(keys)
        # a row may give its cells' widths without making its cells (cells.HeatRow)
        lens = [r.widths() if hasattr(r, "widths") else [len(c[0]) for c in r] for r in rows]
        widths = [max([len(headers[j])] + [w[j] for w in lens]) + 1 for j in range(n)]
        self.column_keys, self._headers, self._widths = list(keys), list(headers), widths
        self._x = [0]
        for w in widths:
            self._x.append(self._x[-1] + w)
        self._rows = rows                    # cells are padded when drawn (only those in view)
        size = Size(self._x[-1] + 1, len(rows) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
        self.cursor_row = min(self.cursor_row, max(0, len(rows) - 1))
        self.cursor_column = min(self.cursor_column, max(0, n - 1))
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def get_row_at(self, i: int) -> list[str]:
        return [_fit(t, w - 1, False).rstrip() for (t, _), w in zip(self._rows[i], self._widths)]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width     # without the scrollbars
        sx, sy = self.scroll_offset
        base = self.rich_style
        nfix = min(self.fixed, len(self._widths))
        fixed_w = 1 + self._x[nfix]
        view = max(0, width - fixed_w)
        x0 = self._x[nfix]
        # only the fixed columns and the scrolling ones in view are drawn (1,000 runs: ~10 of 1,000 cells)
        ja = max(nfix, bisect.bisect_right(self._x, x0 + sx) - 1)
        jb = min(len(self._widths), bisect.bisect_left(self._x, x0 + sx + view) + 1)
        shown = [*range(nfix), *range(ja, jb)]
        skipped = self._x[ja] - x0 if ja < len(self._x) else 0       # cells of the columns left of the view
        if y == 0:
            st = base + self.get_component_rich_style("gridtable--header")
            cells = {j: (_fit(self._headers[j], self._widths[j] - 1, False) + " ", None) for j in shown}
            cur = -1
        else:
            i = sy + y - 1
            if i >= len(self._rows):
                return Strip.blank(width, base)
            st = base
            row = self._rows[i]
            cells = {j: (_fit(row[j][0], self._widths[j] - 1, False) + " ", row[j][1]) for j in shown}
            cur = self.cursor_column if i == self.cursor_row else -1
        cstyle = base + self.get_component_rich_style("gridtable--cursor")
        more_right = self._x[-1] - x0 > sx + view
        lo, hi = sx + (sx > 0), sx + view - more_right      # cells kept for the ← / → hints
        cells = {j: ((" " * len(t), None) if j >= self.fixed and (self._x[j] - x0 < lo < self._x[j + 1] - x0
                                                                  or self._x[j] - x0 < hi < self._x[j + 1] - x0)
                     else (t, sty)) for j, (t, sty) in cells.items()}   # a cell cut by an edge is blank
        segs = [Segment(" ", st)]
        for j, (text, style) in cells.items():
            s = cstyle if j == cur and self.has_focus else (st + style if style is not None else st)
            if j == cur and not self.has_focus:
                s = s + Style(reverse=True)
            segs.append(Segment(text, s))
        strip = Strip(segs)
        left = strip.crop(0, fixed_w)
        right = strip.crop(fixed_w + sx - skipped, fixed_w + sx - skipped + view)
        out = Strip.join([left, right]).extend_cell_length(width, base).crop(0, width)
        if view >= 3 and (more_right or sx > 0):          # the header says more columns are off screen
            hint = st if y == 0 else base
            l_mark, r_mark = ("←", "→") if y == 0 else (" ", " ")
            parts = [out.crop(0, fixed_w)]
            parts.append(Strip([Segment(l_mark, hint)], 1) if sx > 0 else out.crop(fixed_w, fixed_w + 1))
            parts.append(out.crop(fixed_w + 1, width - 1))
            parts.append(Strip([Segment(r_mark, hint)], 1) if more_right else out.crop(width - 1, width))
            out = Strip.join(parts)
        return out

    def _visible(self) -> None:
        h = max(1, self.size.height - 1)
        r = self.cursor_row
        if r < self.scroll_offset.y:
            self.scroll_to(y=r, animate=False)
        elif r >= self.scroll_offset.y + h:
            self.scroll_to(y=r - h + 1, animate=False)
        c = self.cursor_column
        if self.fixed <= c < len(self._widths):
            fixed_w = 1 + self._x[self.fixed]
            view = max(1, self.scrollable_content_region.width - fixed_w)
            x0 = self._x[c] - self._x[self.fixed]
            x1 = self._x[c + 1] - self._x[self.fixed]
            if x0 < self.scroll_offset.x:
                self.scroll_to(x=x0, animate=False)
            elif x1 > self.scroll_offset.x + view:
                self.scroll_to(x=x1 - view, animate=False)
        self.refresh()

    def watch_cursor_row(self) -> None:
        self._visible()

    def watch_cursor_column(self) -> None:
        self._visible()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def move_cursor(self, row: int | None = None, column: int | None = None) -> None:
        if row is not None and self._rows:
            self.cursor_row = max(0, min(len(self._rows) - 1, row))
        if column is not None and self._widths:
            self.cursor_column = max(0, min(len(self._widths) - 1, column))

    def action_move(self, dr: int, dc: int) -> None:
        self.move_cursor(self.cursor_row + dr, self.cursor_column + dc)

    def action_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * max(1, self.size.height - 2))

    def action_edge(self, last: int) -> None:
        self.move_cursor(column=len(self._widths) - 1 if last else 0)

    def action_select(self) -> None:
        if self._rows:
            self.post_message(self.CellSelected(self, self.cursor_row, self.cursor_column))

    def on_click(self, event) -> None:
        if event.y >= 1 and len(self._x) > self.fixed:
            x = event.x - 1
            fixed_w = self._x[self.fixed]
            if x >= fixed_w:
                x += self.scroll_offset.x
            col = max(0, min(len(self._widths) - 1, sum(1 for v in self._x[1:] if v <= x)))
            self.move_cursor(self.scroll_offset.y + event.y - 1, col)
