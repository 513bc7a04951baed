"""Errors and warnings that name the file, the line and what to do."""
from __future__ import annotations

from dataclasses import dataclass, field


class CranfieldError(Exception):
    """Base class for every error the engine reports to a user."""


@dataclass
class Problem:
    """One located problem in an input file."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else f"{self.path}"
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


@dataclass
class Warnings:
    """Collects non-fatal notices (duplicates resolved, topics ignored) so nothing is dropped silently."""

    items: list[Problem] = field(default_factory=list)

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
