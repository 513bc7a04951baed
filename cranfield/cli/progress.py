"""The command line's one progress bar: long experiments say what they are doing on a terminal, and write
nothing extra when stderr is not one (pipes, files, tests)."""
from __future__ import annotations

import shutil
import sys
from typing import TextIO


class ProgressBar:
    """A one-line bar on a terminal stream, redrawn in place: `label [####----]  42% message`. Call it as the
    engine's `progress(fraction, message)` callback; it ends its line at 100% or on `close()`."""

    def __init__(self, label: str, stream: TextIO, width: int | None = None) -> None:
        self.label, self.stream = label, stream
        self.width = width or shutil.get_terminal_size((80, 24)).columns
        self.open = False
        self.last = ""

    def __call__(self, fraction: float, message: str = "") -> None:
        f = min(max(float(fraction), 0.0), 1.0)
        cells = 20
        done = int(round(f * cells))
        text = f"{self.label} [{'#' * done}{'-' * (cells - done)}] {f * 100:3.0f}% {message}"
        text = text[: max(self.width - 1, 10)]
        # pad over what the last line left behind, then return to its start
        line = text.ljust(len(self.last))
        self.stream.write("\r" + line)
        self.last = line
        self.open = True
        if f >= 1.0:
            self.close()
        else:
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line (once)."""
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False
            self.last = ""


def progress_bar(label: str, quiet: bool = False, stream: TextIO | None = None) -> ProgressBar | None:
    """A `ProgressBar` on stderr (or `stream`) when it is a terminal and not `quiet`; None otherwise, so the
    engine skips its progress calls."""
    stream = sys.stderr if stream is None else stream
    if quiet or not getattr(stream, "isatty", lambda: False)():
        return None
    return ProgressBar(label, stream)


class bar_context:
    """`with bar_context(progress_bar(...)) as bar:` yields the bar (or None) and ends its line on exit."""

    def __init__(self, bar: ProgressBar | None) -> None:
        self.bar = bar

    def __enter__(self) -> ProgressBar | None:
        return self.bar

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
