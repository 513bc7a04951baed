"""The strict number grammar of every reader, as trec_eval's C code reads its inputs.

- An integer is ASCII digits with an optional sign (`-3`, `+2`, `007`); not `1e2`, `1_0`, `٣` or ` 1`.
- A score is a finite decimal float: optional sign, digits with an optional point, an optional
  exponent (`12.5`, `-.5`, `1.`, `3e-2`); not `inf`, `nan`, `0x1p3`, `1_0`, or `1e400` (overflows).
- A relevance grade lies within C's int range [GRADE_MIN, GRADE_MAX] without a campaign (a campaign's
  scale is checked where a judgment is written). Gain tables are built from the grades present
  (`Ranked.level_grades`, `measures._gains.sparse_entries`), so `1000000000` costs what `3` does; a
  grade beyond C's int is refused because trec_eval's level arithmetic (num_rel_levels, the gain
  comparator's `(int)` of a difference) would misread it.
- No NUL byte anywhere in a text file.

Python's own `int()` and `float()` accept more than C's `atol`/`strtod` do on these files (digit
separators, non-ASCII digits, `inf`), and pandas' integer parser takes `1e2` for 100: every reader's
fast path checks its columns with the vectorized checks below, and its line-by-line path with
`parse_int` / `parse_float`. `int_column` / `float_column` read a column of tokens as those two read
each token, vectorized (the readers' pandas-free path).
"""
from __future__ import annotations

import math

import numpy as np

from ..util.lazy import LazyPattern
from ..errors import FormatError, Problem

GRADE_MIN = -(2 ** 31)       # C int: trec_eval's levels and gain comparator
GRADE_MAX = 2 ** 31 - 1
INT_RE = LazyPattern(r"[+-]?[0-9]+\Z")
FLOAT_RE = LazyPattern(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
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


_POW10 = np.array([10.0 ** k for k in range(23)])      # exact: every 10^k, k <= 22, is a double

_KEEP = np.frombuffer(b"".join(b"\xff" * i + b"\x00" * (8 - i) for i in range(9)), np.uint64)
"""Per count i <= 8 the 8-byte word that keeps a word's first i bytes (in memory order) and zeroes the rest."""


def token_words(data: np.ndarray, starts: np.ndarray, lens: np.ndarray, words: int | None = None) -> np.ndarray:
    """Tokens as rows of 8-byte words, shape (tokens, words): row i holds token i's bytes in memory order,
    zero past its end (viewed as bytes, the token zero-padded; as `S{8 * words}`, the token itself). `data`:
    the text's bytes (uint8); `words`: enough for the longest token when None. One gather of 8 bytes per
    token and word, not one per byte."""
    n = len(starts)
    if words is None:
        words = max(-(-int(lens.max(initial=0)) // 8), 1)
    if len(data) < 16:
        data = np.concatenate((data, np.zeros(16, np.uint8)))
    limit = len(data) - 8                                 # the last offset an 8-byte read may start at
    window = np.ndarray((limit + 1,), np.uint64, data, 0, (1,))
    tail = np.ndarray((9,), np.uint64, np.concatenate((data[limit:], np.zeros(8, np.uint8))), 0, (1,))
    out = np.empty((n, words), np.uint64)
    for w in range(words):
        at = starts + 8 * w if w else starts
        late = np.flatnonzero(at > limit)
        if len(late):                                     # a read past the end: from `tail`
            word = window[np.minimum(at, limit)]
            word[late] = tail[np.minimum(at[late] - limit, 8)]
        else:
            word = window[at]
        word &= _KEEP[np.clip(lens - 8 * w, 0, 8) if w else np.minimum(lens, 8)]
        out[:, w] = word
    return out


def token_matrix(data: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Tokens as a byte matrix by position: row j holds every token's j-th byte (0 past its end; `data`:
    the text's bytes, see `token_words`)."""
    width = max(int(lens.max(initial=0)), 1)
    m = token_words(data, starts, lens).view(np.uint8)
    return np.ascontiguousarray(m[:, :width].T)


def _irregular(chars: np.ndarray, lens: np.ndarray, rows: np.ndarray, out: np.ndarray, parse) -> bool:
    """Read tokens `rows` one by one with `parse` into `out`; False if one breaks the grammar."""
    for i in rows.tolist():
        try:
            out[i] = parse(chars[:lens[i], i].tobytes().decode("ascii"))
        except (ValueError, UnicodeDecodeError):
            return False
    return True


def _digits(chars: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of a `token_matrix` (tokens hold no NUL: a zero byte is past a token's end), per byte: whether it is
    an ASCII digit, its value as a digit (0 for any other byte), whether it lies past the token's end."""
    value = chars - np.uint8(48)                  # wraps below '0': a digit is < 10
    digit = value < 10
    np.multiply(value, digit, out=value)
    return digit, value, chars == 0


def _horner(digit: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per token the integer its digits make, the other bytes skipped (exact below 2^63)."""
    out = np.zeros(digit.shape[1], np.int64)
    for d, v in zip(digit, value):
        np.multiply(out, 10, out=out, where=d)
        out += v
    return out


def int_column(chars: np.ndarray, lens: np.ndarray) -> np.ndarray | None:
    """Per token (a `token_matrix`) the integer `parse_int` reads, or None when a token breaks the
    grammar. Unsigned tokens of at most 18 digits are read position by position, any other by `parse_int`."""
    digit, value, past = _digits(chars)
    past |= digit
    regular = (lens <= 18) & past.all(axis=0)
    out = _horner(digit, value)
    return out if _irregular(chars, lens, np.flatnonzero(~regular), out, parse_int) else None


def float_column(chars: np.ndarray, lens: np.ndarray) -> np.ndarray | None:
    """Per token (a `token_matrix`) the float `parse_float` reads, or None when a token breaks the
    grammar. Tokens of a sign, at most one point and 1 to 15 digits are read position by position,
    exactly: their digits M (< 2^53) over 10^d (exact) is one correctly rounded division, as float()
    rounds; any other (an exponent, more digits) by `parse_float`."""
    digit, value, ok = _digits(chars)
    point = chars == 46
    ok |= digit
    ok |= point
    ok[0] |= (chars[0] == 43) | (chars[0] == 45)
    count = np.uint8 if len(chars) < 256 else np.int64          # counts of at most len(chars) bytes
    digits = digit.sum(axis=0, dtype=count)
    regular = ok.all(axis=0) & (point.sum(axis=0, dtype=count) <= 1) & (digits >= 1) & (digits <= 15)
    n = len(lens)
    decimals = np.zeros(n, np.int64)              # a regular token's decimals: the bytes after its point
    for j, p in enumerate(point):
        if p.any():
            np.copyto(decimals, lens - (j + 1), where=p)
    out = _horner(digit, value) / _POW10[np.minimum(decimals, 22)]
    np.negative(out, out=out, where=chars[0] == 45)
    return out if _irregular(chars, lens, np.flatnonzero(~regular), out, parse_float) else None


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
