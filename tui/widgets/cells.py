"""Cell formatting: heat-map cells readable in 256 colours and in monochrome (NO_COLOR), grade marks."""
from __future__ import annotations

import math

from rich.text import Text

# a sequential ramp of xterm-256 colours (dark blue -> teal -> yellow): exact in 256-colour terminals
RAMP = [17, 18, 24, 30, 36, 72, 108, 144, 180, 186, 222, 228]
# shade glyphs carry the level when colours are stripped
GLYPHS = " ░▒▓█"


def level(v: float, lo: float, hi: float, n: int) -> int:
    if not math.isfinite(v):
        return -1
    if hi <= lo:
        return n - 1
    return max(0, min(n - 1, int((v - lo) / (hi - lo) * n)))


def heat(v: float, lo: float = 0.0, hi: float = 1.0, width: int = 5) -> Text:
    """A heat-map cell: shade glyph + value on a background from RAMP."""
    if v is None or not math.isfinite(v):
        return Text("  —".ljust(width), style="dim")
    k = level(v, lo, hi, len(RAMP))
    g = GLYPHS[level(v, lo, hi, len(GLYPHS))]
    fg = "color(16)" if k >= 6 else "color(231)"
    s = f"{v:.3f}"[1:] if 0 <= v < 1 else f"{v:.2f}"
    return Text(f"{g}{s}".ljust(width), style=f"{fg} on color({RAMP[k]})")


_STYLE_CACHE: dict = {}


def heat_part(v: float, lo: float = 0.0, hi: float = 1.0):
    """(text, rich Style) of a heat-map cell for GridTable: shade glyph + value on the RAMP colour."""
    from rich.style import Style
    if v is None or not math.isfinite(v):
        return "  —", None
    k = level(v, lo, hi, len(RAMP))
    g = GLYPHS[level(v, lo, hi, len(GLYPHS))]
    st = _STYLE_CACHE.get(k)
    if st is None:
        st = _STYLE_CACHE[k] = Style.parse(f"{'color(16)' if k >= 6 else 'color(231)'} on color({RAMP[k]})")
    s = f"{v:.3f}"[1:] if 0 <= v < 1 else f"{v:.2f}"
    return f"{g}{s}", st


class HeatRow:
    """A row of GridTable cells: `lead` cells, then one heat-map cell per value, each made (`heat_part`)
    only when the table draws or reads it: a frame shows ~10 of a 1,000-run matrix row. `widths` gives
    every cell's width without making the cells."""

    __slots__ = ("lead", "values", "lo", "hi", "_made")

    def __init__(self, lead: list, values, lo: float, hi: float):
        import numpy as np
        self.lead, self.values, self.lo, self.hi = list(lead), np.asarray(values, dtype=np.float64), lo, hi
        self._made: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self.lead) + len(self.values)

    def __getitem__(self, j: int):
        if j < 0:
            j += len(self)
        n = len(self.lead)
        if j < n:
            return self.lead[j]
        cell = self._made.get(j)
        if cell is None:
            if not 0 <= j - n < len(self.values):
                raise IndexError(j)
            cell = self._made[j] = heat_part(float(self.values[j - n]), self.lo, self.hi)
        return cell

    def __iter__(self):
        return (self[j] for j in range(len(self)))

    def widths(self) -> list[int]:
        """Each cell's text length: a heat cell is 5 for a value in [0, 1), 3 for none, else its text's."""
        import numpy as np
        v = self.values
        ok = np.isfinite(v)
        w = np.where(ok, 5, 3)
        for i in np.flatnonzero(ok & ~((v >= 0) & (v < 1))).tolist():
            w[i] = 1 + len(f"{v[i]:.2f}")
        return [len(t) for t, _ in self.lead] + w.tolist()


def grade_mark(grade: int, rel_level: int = 1) -> Text:
    """Grade as shown in ranked lists: the grade, '?' pooled but unjudged, '·' never pooled."""
    if grade == -2:
        return Text("?", style="bold yellow")
    if grade < 0:
        return Text("·", style="dim")
    if grade >= rel_level:
        return Text(str(grade), style="bold green")
    return Text(str(grade), style="dim")


def num(v, digits: int = 4) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return "—"
    return f"{f:.{digits}f}"


def bar(frac: float, width: int = 10) -> Text:
    """A progress bar drawn with block glyphs (visible without colour)."""
    frac = 0.0 if not math.isfinite(frac) else max(0.0, min(1.0, frac))
    full = int(round(frac * width))
    return Text("█" * full, style="green") + Text("░" * (width - full), style="dim")


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`n` and the noun in the number it takes: "1 run", "2 runs", "0 runs"."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def plain(value: object) -> Text:
    """An id (run tag, topic, document, nugget) as literal cell text: never markup, control characters
    escaped (engine.util.names.shown)."""
    from engine.util.names import shown
    return Text(shown(value))


def literal(text: object, keep: str = "\n\t") -> str:
    """Text for a markup string that shows as it is: control characters escaped (`shown`, but those in
    `keep`) and every "[" escaped (Rich's and Textual's `escape` leave "[31m" after an escaped ESC as it is,
    which Textual's parser then reads as the start of a tag)."""
    from engine.util.names import shown
    return shown(text, keep).replace("[", "\\[")
