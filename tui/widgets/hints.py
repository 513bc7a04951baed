"""Key hints laid out in whole pieces: a line breaks between hints, never inside one ("r rationale")."""
from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text


class Hints:
    """A Rich renderable of hints (each a Text, e.g. a bold key and its label) joined by `sep`, wrapped
    at the width it is drawn at between hints only; a hint wider than a line is wrapped as text."""

    def __init__(self, hints: list[Text], sep: str = "  "):
        self.hints = [h for h in hints if h.cell_len]
        self.sep = sep

    def lines(self, width: int) -> list[Text]:
        out: list[Text] = []
        cur = Text()
        for h in self.hints:
            if cur.cell_len and cur.cell_len + len(self.sep) + h.cell_len > width:
                out.append(cur)
                cur = Text()
            if cur.cell_len:
                cur.append(self.sep)
            cur.append_text(h)
        out.append(cur)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n").join(self.lines(max(1, options.max_width)))


def key_hint(key: str, label: str) -> Text:
    """`key` in bold, then its label."""
    return Text.assemble((key, "bold"), " ", label)
