"""The plain readers' pieces (engine.formats.plain, engine.formats.grammar) against references: the fields
located from single spaces equal those located from every C white space, tokens read as 8-byte words equal
the bytes of the text (also at its very end), and strcmp codes equal numpy's sorted distinct values."""
from __future__ import annotations

import numpy as np
import pytest

from engine.formats.grammar import token_matrix, token_words
from engine.formats.plain import _fields, _single_spaced, plain_table, strcmp_codes


def _reference(text: bytes, n: int):
    """(starts, lens) per field and line from bytes.split() per line; None unless every line is blank or n fields."""
    starts, lens, at = [], [], 0
    for line in text.split(b"\n"):
        toks, i = [], 0
        while i < len(line):
            if line[i] in b" \t\r\x0b\x0c":
                i += 1
                continue
            j = i
            while j < len(line) and line[j] not in b" \t\r\x0b\x0c":
                j += 1
            toks.append((at + i, j - i))
            i = j
        if toks and len(toks) != n:
            return None
        if toks:
            starts.append([s for s, _ in toks])
            lens.append([k for _, k in toks])
        at += len(line) + 1
    if not starts:
        return None
    return np.array(starts).T, np.array(lens).T


def _text(rng, n: int) -> bytes:
    lines = []
    for _ in range(int(rng.integers(1, 12))):
        k = n if rng.random() < 0.85 else int(rng.integers(0, n + 2))
        toks = [bytes(rng.choice(list(b"abcXYZ019.-_+"), int(rng.integers(1, 20))).astype(np.uint8))
                for _ in range(k)]
        seps = [b" " if rng.random() < 0.8
                else bytes(rng.choice(list(b" \t\r"), int(rng.integers(1, 3))).astype(np.uint8))
                for _ in range(max(k - 1, 0))]
        line = toks[0] if toks else b""
        for s, t in zip(seps, toks[1:]):
            line += s + t
        if rng.random() < 0.05:
            line = b" " + line
        if rng.random() < 0.05:
            line += b" "
        lines.append(line)
    text = b"\n".join(lines)
    return text + b"\n" if rng.random() < 0.7 else text


@pytest.mark.parametrize("scan", [1 << 18, 37, 8])
def test_fields_located_by_single_spaces_equal_every_white_space_reading(scan, monkeypatch):
    """Also when the text is scanned in pieces smaller than a line (`_SCAN`)."""
    import engine.formats.plain as plain
    monkeypatch.setattr(plain, "_SCAN", scan)
    rng = np.random.default_rng(11)
    fast = 0
    for _ in range(3000):
        n = int(rng.integers(2, 7))
        text = _text(rng, n)
        a = np.frombuffer(text, np.uint8)
        ref = _reference(text, n)
        general = _fields(a, n)
        single = _single_spaced(a, n)
        assert (general is None) == (ref is None), text
        if general is not None:
            assert (general[0] == ref[0]).all() and (general[1] == ref[1]).all(), text
        if single is not None:
            fast += 1
            assert ref is not None, text
            assert (single[0] == ref[0]).all() and (single[1] == ref[1]).all(), text
        t = plain_table(text, n)
        assert (t is None) == (ref is None), text
    assert fast > 200                                      # the single-space layout was met and located


@pytest.mark.parametrize("text", [b"a b c d", b"ab cd ef ghijklmnopqrstuvwx\n", b"1 2 3 4\n5 6 7 8",
                                  b"x y z 123456789012345678901234567890", b"a\tb c  d\r\n"])
def test_tokens_as_words_read_every_byte_also_at_the_end(text):
    a = np.frombuffer(text, np.uint8)
    starts, lens = _reference(text, 4)
    s, k = starts.ravel(), lens.ravel()
    words = token_words(a, s, k)
    got = [bytes(r).rstrip(b"\0") for r in words.view(np.uint8)]
    assert got == [text[i:i + j] for i, j in zip(s.tolist(), k.tolist())]
    m = token_matrix(a, s, k)
    assert [bytes(m[:j, i]) for i, j in enumerate(k.tolist())] == got
    assert not m[np.arange(m.shape[0])[:, None] >= k].any()          # zero past each token's end


def test_strcmp_codes_equal_numpy_sorted_distinct_values():
    rng = np.random.default_rng(3)
    for trial in range(300):
        n, longest = int(rng.integers(1, 200)), int(rng.integers(1, 40))
        toks = [bytes(rng.integers(1, 256, int(rng.integers(0, longest)), dtype=np.uint8)) for _ in range(n)]
        if trial % 3 == 0:                                 # long shared prefixes: ranks refined over many bytes
            toks = [b"clueweb09-en00" + t[:2] for t in toks]
        toks += toks[: n // 2]
        arr = np.array(toks, dtype=f"S{max(1, max(map(len, toks)))}")
        values, codes = strcmp_codes(arr)
        u, inv = np.unique(arr, return_inverse=True)
        assert values.tolist() == u.tolist()
        assert codes.tolist() == inv.ravel().tolist()
        assert values[codes].tolist() == arr.tolist()
