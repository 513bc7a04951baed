"""Errors and warnings that name the file, the line and what to do."""
from __future__ import annotations


class CranfieldError(Exception):
    """Base class for every error the engine reports to a user."""


# files outside the campaign directory a person's granted root admitted (engine.util.confine.inside),
# as named and resolved: a problem located in one shows its file and line, never its content
OUTSIDE_FILES: set[str] = set()
OUTSIDE_TEXT = "not valid here (content not shown: the file lies outside the campaign directory; open it there)"


class Problem:
    """One located problem in an input file (a plain class: a dataclass costs every start-up its code
    generation; equal when path, line and message are)."""

    __match_args__ = ("path", "line", "message")

    def __init__(self, path: str, line: int | None, message: str):
        self.path, self.line, self.message = path, line, message

    def __eq__(self, other) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.path, self.line, self.message) == (other.path, other.line, other.message)

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(path={self.path!r}, line={self.line!r}, message={self.message!r})"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else f"{self.path}"
        if OUTSIDE_FILES and str(self.path) in OUTSIDE_FILES:
            return f"{where}: {OUTSIDE_TEXT}"
        return f"{where}: {self.message}"


class FormatError(CranfieldError):
    """A malformed input file; carries every problem found (file:line: what is wrong)."""

    def __init__(self, problems: list[Problem] | Problem, hint: str | None = None):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems = problems
        self.hint = hint
        shown = problems[:20]
        text = "\n".join(str(p) for p in shown)
        if len(problems) > len(shown):
            text += f"\n... and {len(problems) - len(shown)} more problems"
        if hint:
            text += f"\nhint: {hint}"
        super().__init__(text)


class Warnings:
    """Collects non-fatal notices (duplicates resolved, topics ignored) so nothing is dropped silently."""

    __match_args__ = ("items",)

    def __init__(self, items: list[Problem] | None = None):
        self.items = [] if items is None else items

    def __eq__(self, other) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.items == other.items

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(items={self.items!r})"

    def add(self, path: str, line: int | None, message: str) -> None:
        self.items.append(Problem(path, line, message))

    def extend(self, other: "Warnings") -> None:
        self.items.extend(other.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
