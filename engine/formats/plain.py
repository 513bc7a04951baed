"""Plain readers without pandas for small clean files (the start-up path): token matrices and strcmp codes."""
from __future__ import annotations

import numpy as np

from ..util.lazy import LazyPattern
from ..errors import FormatError
from .grammar import GRADE_MAX, GRADE_MIN, float_column, int_column, token_matrix
from .files import PathLike, _COMMENT_RE, read_bytes
from .qrels import QRELS_COLS
from .runs import RUN_COLS
from .detect import detect_judgment_kind


_WHITESPACE = np.zeros(256, bool)

_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True       # C isspace = bytes.split(): what the line reader splits on


_OTHER_COMMENT = LazyPattern(rb"(?m)^[ \t\r\x0b\x0c]*#")


class PlainTable:
    """A text's fields located: `chars` its bytes (zero-padded), `starts` / `lens` per line and field."""

    def __init__(self, chars: np.ndarray, starts: np.ndarray, lens: np.ndarray):
        self.chars, self.starts, self.lens = chars, starts, lens

    def __len__(self) -> int:
        return len(self.starts)

    def column(self, k: int) -> np.ndarray:
        """Field k of every line as a byte matrix by position (`grammar.token_matrix`)."""
        return token_matrix(self.chars, self.starts[:, k], self.lens[:, k])

    def same_as_previous(self, k: int) -> np.ndarray:
        """Per line after the first: whether field k equals the previous line's."""
        lens = self.lens[:, k]
        same = lens[1:] == lens[:-1]
        for c in self.column(k):
            same &= c[1:] == c[:-1]
        return same

    def blocks(self, k: int) -> tuple[np.ndarray, list[str]]:
        """Field k in runs of equal values: (first line of each run, its value as text)."""
        heads = np.flatnonzero(np.concatenate(([True], ~self.same_as_previous(k))))
        c = self.chars
        return heads, [c[a:a + n].tobytes().decode("utf-8")
                       for a, n in zip(self.starts[heads, k].tolist(), self.lens[heads, k].tolist())]

    def strings(self, k: int) -> np.ndarray:
        """Field k of every line as a numpy bytes array (compares and sorts as strcmp: no NUL in a text)."""
        m = np.ascontiguousarray(self.column(k).T)
        return m.view(f"S{m.shape[1]}").ravel()


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
    field = np.zeros(len(a) + 2, bool)                    # padded: a field starts after, ends before it
    if _WHITESPACE[a[a < 32]].all():
        np.greater(a, 32, out=field[1:-1])                 # no other control byte: white space is <= 32
    else:
        np.logical_not(_WHITESPACE[a], out=field[1:-1])
    edges = np.flatnonzero(field[1:] != field[:-1])        # where a field starts, where it ends
    starts, ends = edges[0::2], edges[1::2]
    bounds = np.concatenate(([0], np.flatnonzero(a == 10) + 1, [len(a)]))
    per_line = np.diff(np.searchsorted(starts, bounds))
    if not len(starts) or not ((per_line == 0) | (per_line == n)).all():
        return None
    lens = ends - starts
    chars = np.concatenate((a, np.zeros(int(lens.max()), np.uint8)))
    return PlainTable(chars, starts.reshape(-1, n), lens.reshape(-1, n))


def strcmp_codes(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values in strcmp order, per value its index among them) of a numpy bytes array
    (NUL-free): sorted as big-endian 8-byte integers, which order as the bytes do."""
    n, w = len(strings), max(strings.dtype.itemsize, 1)
    b = np.zeros((n, -(-w // 8) * 8), np.uint8)
    b[:, :strings.dtype.itemsize] = strings.view(np.uint8).reshape(n, strings.dtype.itemsize)
    keys = [np.ascontiguousarray(k, np.uint64) for k in b.view(">u8").T]
    order = np.lexsort(keys[::-1]) if len(keys) > 1 else np.argsort(keys[0], kind="stable")
    first = np.zeros(n, bool)
    first[:1] = True
    for k in keys:
        ks = k[order]
        first[1:] |= ks[1:] != ks[:-1]
    codes = np.empty(n, np.int64)
    codes[order] = np.cumsum(first) - 1
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
    if int_column(t.column(3), t.lens[:, 3]) is None:
        return None
    scores = float_column(t.column(4), t.lens[:, 4])
    if scores is None:
        return None
    tag = t.chars[t.starts[0, 5]:t.starts[0, 5] + t.lens[0, 5]].tobytes().decode("utf-8")
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
    grades = int_column(t.column(3), t.lens[:, 3])
    if grades is None or grades.min() < GRADE_MIN or grades.max() > GRADE_MAX:
        return None
    return t.blocks(0), t.strings(2), grades

