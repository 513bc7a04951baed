"""The strict number grammar of every reader, as trec_eval's C code reads its inputs.

- An integer is ASCII digits with an optional sign (`-3`, `+2`, `007`); not `1e2`, `1_0`, `٣` or ` 1`.
- A score is a finite decimal float: optional sign, digits with an optional point, an optional
  exponent (`12.5`, `-.5`, `1.`, `3e-2`); not `inf`, `nan`, `0x1p3`, `1_0`, or `1e400` (overflows).
- A relevance grade lies within [GRADE_MIN, GRADE_MAX] without a campaign (a campaign's scale is
  checked where a judgment is written), so a stray `1000000000` cannot make the gain tables explode.
- No NUL byte anywhere in a text file.

Python's own `int()` and `float()` accept more than C's `atol`/`strtod` do on these files (digit
separators, non-ASCII digits, `inf`), and pandas' integer parser takes `1e2` for 100: every reader's
fast path checks its columns with the vectorized checks below, and its line-by-line path with
`parse_int` / `parse_float`. `int_tokens` / `float_tokens` read a whole column of tokens as those two
read each token (bulk checks in C, for the readers' pandas-free path).
"""
from __future__ import annotations

import math
import re

import numpy as np

from .errors import FormatError, Problem

GRADE_MIN = -1000
GRADE_MAX = 1000
INT_RE = re.compile(r"[+-]?[0-9]+\Z")
FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INT_PATTERN = r"^[+-]?[0-9]+$"
_I64 = 2 ** 63


def parse_int(token: str) -> int:
    """An ASCII integer with an optional sign, within int64; ValueError otherwise."""
    if not INT_RE.match(token):
        raise ValueError("not an ASCII integer")
    v = int(token)
    if not -_I64 <= v < _I64:
        raise ValueError("out of range")
    return v


def parse_float(token: str) -> float:
    """A finite decimal float; ValueError otherwise (inf, nan, hex, digit separators, overflow)."""
    if not FLOAT_RE.match(token):
        raise ValueError("not a decimal number")
    v = float(token)
    if not math.isfinite(v):
        raise ValueError("overflows to infinity")
    return v


def int_tokens(tokens: list[bytes], values: bool = True) -> list[int] | bool | None:
    """Every token (ASCII bytes) read as `parse_int` reads it, or None when any token breaks the grammar;
    without `values`, only whether every token is an integer."""
    joined = b"".join(tokens)
    if not joined.isascii():                  # int() takes other scripts' digits; the grammar does not
        return None if values else False
    if joined.isdigit() and max(map(len, tokens), default=0) <= 18:
        if not values:                        # unsigned, at most 18 digits: within int64
            return True
    elif not all(INT_RE.match(t.decode("ascii")) for t in tokens):   # signs: token by token
        return None if values else False
    out = list(map(int, tokens))              # ASCII digits with at most a sign: int() reads them exactly
    ok = not out or (-_I64 <= min(out) and max(out) < _I64)
    return (out if ok else None) if values else ok


def float_tokens(tokens: list[bytes]) -> list[float] | None:
    """Every token (bytes) read as `parse_float` reads it, or None when any token breaks the grammar. On
    ASCII without digit separators, float() accepts FLOAT_RE plus inf/nan spellings, which are not finite."""
    joined = b"".join(tokens)
    if not joined.isascii() or b"_" in joined:
        return None
    try:
        values = list(map(float, tokens))
    except ValueError:
        return None
    if not math.isfinite(sum(values)) and not all(map(math.isfinite, values)):
        return None
    return values


def strict_int_column(values) -> np.ndarray | None:
    """An object/str column of integer tokens as int64, or None when any token breaks the grammar
    (the caller then re-reads line by line to name the lines). Vectorized through Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(values, pa.string()) if not isinstance(values, (pa.Array, pa.ChunkedArray)) else values
    if len(arr) == 0:
        return np.zeros(0, np.int64)
    if arr.null_count or not pc.all(pc.match_substring_regex(arr, _INT_PATTERN)).as_py():
        return None
    if pc.any(pc.starts_with(arr, "+")).as_py():
        arr = pc.replace_substring_regex(arr, r"^\+", "")
    try:
        return pc.cast(arr, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, OverflowError):
        return None


def all_finite(values: np.ndarray) -> bool:
    """True when every float is finite (neither inf nor NaN)."""
    return bool(np.isfinite(values).all())


def find_nul(path: str, data: bytes) -> None:
    """Raise naming the line of the first NUL byte anywhere in `data` (one memchr scan)."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise FormatError(Problem(path, line, "binary data (NUL byte): this is not a text file"),
                          hint="pass the text file itself (plain or .gz), not an archive or binary")


def check_grade_bounds(path: str, grades: np.ndarray, lines: np.ndarray, low: int = GRADE_MIN,
                       high: int = GRADE_MAX, what: str = "the documented bound") -> None:
    """Raise naming every line whose grade lies outside [low, high]."""
    bad = (grades < low) | (grades > high)
    if not bad.any():
        return
    idx = np.flatnonzero(bad)
    problems = [Problem(path, int(lines[i]), f"grade {int(grades[i])} is outside {what} [{low}, {high}]")
                for i in idx[:200]]
    if len(idx) > 200:
        problems.append(Problem(path, None, f"{len(idx) - 200} more lines with a grade out of bounds"))
    raise FormatError(problems, hint="grades are small integers (e.g. 0-4; negative = pooled, not judged); "
                                     "fix the grade column")
