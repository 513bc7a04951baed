"""A small reader for the whitespace-separated auxiliary files of the official evaluators (trec_eval's
prefs, qrels_jg and zscores files, ndeval's subtopic qrels): fixed field count, typed fields, every bad
line reported as file:line."""
from __future__ import annotations

from typing import Callable

from ..errors import FormatError, Problem


def read_fields(path, names: list[str], types: dict[str, Callable[[str], object]], label: str,
                lines: bool = False) -> list[tuple]:
    """Rows of `len(names)` fields (typed by `types`, str otherwise), skipping blank and '#' lines;
    `lines`: each row starts with its line number."""
    from .files import check_text, read_bytes
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    hint = f"{label} lines are '{' '.join(names)}'"
    rows, problems = [], []
    for i, raw in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        f = raw.split()
        if not f or f[0].startswith("#"):
            continue
        if len(f) != len(names):
            problems.append(Problem(spath, i, f"expected {len(names)} fields '{' '.join(names)}', found {len(f)}"))
            continue
        try:
            row = tuple(types[n](v) if n in types else v for n, v in zip(names, f))
            rows.append((i, *row) if lines else row)
        except ValueError:
            bad = next(n for n, v in zip(names, f) if n in types and not _ok(types[n], v))
            kind = "an integer" if types[bad] is int else "a number"
            problems.append(Problem(spath, i, f"{bad} {f[names.index(bad)]!r} is not {kind}"))
    if problems:
        raise FormatError(problems, hint=hint)
    if not rows:
        raise FormatError(Problem(spath, None, f"no {label} lines"), hint=hint)
    return rows


def _ok(conv, v: str) -> bool:
    try:
        conv(v)
        return True
    except ValueError:
        return False
