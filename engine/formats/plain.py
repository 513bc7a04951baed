"""Plain readers without pandas for small clean files (the start-up path): token matrices and strcmp codes."""
from __future__ import annotations

import numpy as np

from ..util.lazy import LazyPattern
from ..errors import FormatError
from .grammar import GRADE_MAX, GRADE_MIN, float_column, int_column, token_matrix, token_words
from .files import PathLike, _COMMENT_RE, read_bytes
from .qrels import QRELS_COLS
from .runs import RUN_COLS
from .detect import detect_judgment_kind


_WHITESPACE = np.zeros(256, bool)

_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True       # C isspace = bytes.split(): what the line reader splits on


_OTHER_COMMENT = LazyPattern(rb"(?m)^[ \t\r\x0b\x0c]*#")


class PlainTable:
    """A text's fields located: `chars` its bytes, `starts[k]` / `lens[k]` field k of every line (each contiguous)."""

    def __init__(self, chars: np.ndarray, starts: np.ndarray, lens: np.ndarray):
        self.chars, self.starts, self.lens = chars, starts, lens

    def __len__(self) -> int:
        return self.starts.shape[1]

    def column(self, k: int) -> np.ndarray:
        """Field k of every line as a byte matrix by position (`grammar.token_matrix`)."""
        return token_matrix(self.chars, self.starts[k], self.lens[k])

    def words(self, k: int) -> np.ndarray:
        """Field k of every line as rows of 8-byte words, zero-padded (`grammar.token_words`)."""
        return token_words(self.chars, self.starts[k], self.lens[k])

    def same_as_previous(self, k: int) -> np.ndarray:
        """Per line after the first: whether field k equals the previous line's."""
        w = self.words(k)
        same = w[1:, 0] == w[:-1, 0]
        for j in range(1, w.shape[1]):
            same &= w[1:, j] == w[:-1, j]
        return same

    def blocks(self, k: int) -> tuple[np.ndarray, list[str]]:
        """Field k in runs of equal values: (first line of each run, its value as text)."""
        heads = np.flatnonzero(np.concatenate(([True], ~self.same_as_previous(k))))
        c = self.chars
        return heads, [c[a:a + n].tobytes().decode("utf-8")
                       for a, n in zip(self.starts[k][heads].tolist(), self.lens[k][heads].tolist())]

    def strings(self, k: int) -> np.ndarray:
        """Field k of every line as a numpy bytes array (compares and sorts as strcmp: no NUL in a text)."""
        w = self.words(k)
        return w.view(f"S{8 * w.shape[1]}").ravel()


def plain_table(data: bytes, n: int) -> PlainTable | None:
    """The fields of a UTF-8 text whose every line is blank, a comment or exactly `n` fields, split as
    `_slow_parse` splits them (C isspace); None otherwise (NUL, not UTF-8, another field count, no line)."""
    if b"\x00" in data:
        return None
    if b"#" in data:
        data = _COMMENT_RE.sub(b"", data)
        if _OTHER_COMMENT.search(data):                    # a comment after CR/VT/FF: the line reader's case
            return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    a = np.frombuffer(data, np.uint8)
    located = _single_spaced(a, n)
    if located is None:
        located = _fields(a, n)
        if located is None:
            return None
    return PlainTable(a, *located)


_SCAN = 1 << 18
"""Bytes scanned at a time for white space (a buffer that small is paid for once, not the text's size)."""


def _single_spaced(a: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, lens), each (n, lines), of a text whose every line is `n` fields apart by single spaces, with
    no other white space or control byte (the common layout, located from the spaces and newlines alone);
    None for any other text (`_fields` decides)."""
    if not len(a):
        return None
    at = np.int32 if len(a) < 2 ** 31 else np.int64
    mark = np.empty(min(len(a), _SCAN), bool)              # one small buffer for every piece of the text
    newline_parts, space_parts = [], []
    for lo in range(0, len(a), _SCAN):
        piece = a[lo:lo + _SCAN]
        m = mark[:len(piece)]
        np.less(piece, 32, out=m)
        control = np.count_nonzero(m)
        np.equal(piece, 10, out=m)
        newline_parts.append(np.add(np.flatnonzero(m), lo, dtype=at, casting="unsafe"))
        if control != len(newline_parts[-1]):
            return None                                    # tabs, CR, ...
        np.equal(piece, 32, out=m)
        space_parts.append(np.add(np.flatnonzero(m), lo, dtype=at, casting="unsafe"))
    del mark
    newlines, spaces = np.concatenate(newline_parts), np.concatenate(space_parts)
    ends = newlines if len(a) and a[-1] == 10 else np.append(newlines, len(a))
    lines = len(ends)
    if not lines or len(spaces) != lines * (n - 1):
        return None
    # the k-th n-1 spaces taken as line k's: any line with more or fewer (or a blank line, a space at a
    # line's start or end, two in a row) leaves some field empty or negative
    sep = spaces.reshape(lines, n - 1).T
    starts = np.empty((n, lines), at)
    starts[0, 0] = 0
    np.add(ends[:-1], 1, out=starts[0, 1:], casting="unsafe")
    np.add(sep, 1, out=starts[1:], casting="unsafe")
    lens = np.empty((n, lines), at)
    lens[:-1] = sep
    lens[-1] = ends
    lens -= starts
    if not (lens > 0).all():
        return None
    return starts, lens


def _fields(a: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, lens), each (n, lines), of a text whose every line is blank or `n` fields apart by C white
    space; None otherwise."""
    newlines = np.flatnonzero(a == 10)
    field = np.zeros(len(a) + 2, bool)                    # padded: a field starts after, ends before it
    control = a < 32
    if np.count_nonzero(control) == len(newlines) or _WHITESPACE[a[control]].all():
        np.greater(a, 32, out=field[1:-1])                 # no other control byte: white space is <= 32
    else:
        np.logical_not(_WHITESPACE[a], out=field[1:-1])
    del control
    edges = np.flatnonzero(field[1:] != field[:-1])        # where a field starts, where it ends: in pairs
    del field
    bounds = np.concatenate(([0], newlines + 1, [len(a) + 1]))     # (the last field may end the text)
    per_line = np.diff(np.searchsorted(edges, bounds))     # a line's edges: two per field
    if not len(edges) or not ((per_line == 0) | (per_line == 2 * n)).all():
        return None
    pairs = edges.reshape(-1, n, 2)
    starts = np.ascontiguousarray(pairs[:, :, 0].T)
    return starts, pairs[:, :, 1].T - starts


def strcmp_codes(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values in strcmp order, per value its index among them) of a numpy bytes array
    (NUL-free): the first 8 bytes as a big-endian integer are sorted and ranked, then each rank with the
    next bytes that fit beside it in 64 bits, until every byte has counted (integers order as bytes do)."""
    strings = np.ascontiguousarray(strings)
    n, w = len(strings), strings.dtype.itemsize
    if n == 0 or w == 0:
        return strings[:min(n, 1)], np.zeros(n, np.int64)
    if w % 8:                                              # whole 8-byte words: the strings' own memory
        strings = strings.astype(f"S{-(-w // 8) * 8}")
    raw = strings.view(np.uint64).reshape(n, -1)
    words = [raw[:, k].view(">u8").astype(np.uint64) for k in range(raw.shape[1])]   # big-endian values
    while len(words) > 1 and not words[-1].any():
        words.pop()
    zero_bits = (int(np.bitwise_or.reduce(words[-1])) & -int(np.bitwise_or.reduce(words[-1]))).bit_length() - 1
    w = 8 * len(words) - max(zero_bits, 0) // 8            # the longest string's length
    words.append(np.zeros(n, np.uint64))

    def chunk(at: int, take: int) -> np.ndarray:          # bytes at..at+take-1 of every string, as an integer
        k, r = divmod(at, 8)
        v = words[k] << np.uint64(8 * r) | words[k + 1] >> np.uint64(64 - 8 * r) if r else words[k]
        return v >> np.uint64(64 - 8 * take)

    key, at = words[0], 8
    while True:
        order = np.argsort(key)
        ordered = key[order]
        first = np.empty(n, bool)
        first[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        rank = np.cumsum(first, dtype=np.int64) - 1        # in sorted order
        if at >= w:
            break
        take = min((64 - int(rank[-1]).bit_length()) // 8, 7, w - at)   # bytes that fit beside the rank
        key = np.empty(n, np.uint64)
        key[order] = rank
        key <<= np.uint64(8 * take)
        key |= chunk(at, take)
        at += take
    codes = np.empty(n, np.int64)
    codes[order] = rank
    return strings[order[first]], codes


def plain_run(path: PathLike, data: bytes | None = None):
    """A run file `read_runs` reads without a warning, read without pandas: (tag, topic blocks (first
    line, topic), documents (numpy bytes), scores); None when it needs `read_runs`."""
    try:
        data = read_bytes(path) if data is None else data
    except FormatError:
        return None
    t = plain_table(data, len(RUN_COLS))
    if t is None or (len(t) > 1 and not t.same_as_previous(5).all()):
        return None                                        # a malformed file, or a second tag (a warning)
    if int_column(t.column(3), t.lens[3]) is None:
        return None
    scores = float_column(t.column(4), t.lens[4])
    if scores is None:
        return None
    tag = t.chars[t.starts[5, 0]:t.starts[5, 0] + t.lens[5, 0]].tobytes().decode("utf-8")
    return tag, t.blocks(0), t.strings(2), scores


def plain_qrels(path: PathLike, data: bytes | None = None):
    """A qrels file `read_judgments` reads without a warning, read without pandas: (topic blocks (first
    line, topic), documents (numpy bytes), grades); None when it needs `read_judgments`."""
    try:
        data = read_bytes(path) if data is None else data
        if detect_judgment_kind(path, data) != "qrels":
            return None
    except FormatError:
        return None
    t = plain_table(data, len(QRELS_COLS))
    if t is None:
        return None
    grades = int_column(t.column(3), t.lens[3])
    if grades is None or grades.min() < GRADE_MIN or grades.max() > GRADE_MAX:
        return None
    return t.blocks(0), t.strings(2), grades

