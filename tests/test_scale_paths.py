"""Helpers of the scale paths checked against their slow definitions: the vectorized JSON nesting check
(the run store's manifest is read on every re-sync) against the character scan, and the Arrow <-> numpy
buffer conversions (worker processes without pandas) against pyarrow's own."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import engine.formats.safeload as safeload
from engine.util.arrowbuf import arrow_bytes, arrow_numpy, bytes_arrow, numpy_arrow


@pytest.mark.parametrize("depth", [2, 3, 5])
def test_json_depth_check_equals_the_character_scan(monkeypatch, depth):
    monkeypatch.setattr(safeload, "MAX_DEPTH", depth)
    rng = random.Random(depth)
    alphabet = ['[', ']', '{', '}', '"', '\\', 'a', ',', ':', ' ', 'é', '\n']
    for _ in range(5000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        want = safeload._too_deep(s, False) is not None
        assert safeload.json_too_deep(s) is want, repr(s)
        assert safeload.json_too_deep(s.encode()) is want, repr(s)


def test_json_depth_limit_and_strings():
    n = safeload.MAX_DEPTH
    assert not safeload.json_too_deep("[" * n + "]" * n)
    assert safeload.json_too_deep("[" * (n + 1) + "]" * (n + 1))
    assert not safeload.json_too_deep('["' + "[" * (n + 5) + '"]')                 # inside a string
    assert safeload.json_too_deep('["a\\"b",' + "[" * n)                            # escaped quote, then n more
    assert not safeload.json_too_deep('["a\\"' + "[" * (n + 1))                    # still inside the string
    with pytest.raises(ValueError, match="nested deeper"):
        safeload.loads_json(b"[" * (n + 1) + b"]" * (n + 1), "m.json")


def test_arrow_buffers_round_trip():
    s = np.array([x.encode() for x in ["a", "bé", "xyz", "é€", "z", "GX000-00-0000001"]])
    a = bytes_arrow(s)
    assert a.to_pylist() == [x.decode() for x in s]
    assert list(arrow_bytes(a)) == list(s)
    assert list(arrow_bytes(a.slice(1, 3))) == list(s[1:4])                # offsets and multi-byte ids
    ascii_ = bytes_arrow(np.array([b"ab", b"c", b"def"]))
    assert list(arrow_bytes(ascii_.slice(1))) == [b"c", b"def"]
    assert list(arrow_bytes(pa.chunked_array([ascii_, ascii_]))) == [b"ab", b"c", b"def"] * 2
    for arr, want in ((ascii_, [b"ab", b"c", b"def"]), (a, list(s))):         # padded to whole 64-bit words
        got = arrow_bytes(arr, multiple=8, copy=False)
        assert got.dtype.itemsize % 8 == 0 and list(got) == want
    fixed = pa.array(["GX000-00-0000001", "GX000-00-0000002", "GX999-99-9999999é"[:16]])    # 16 bytes each
    for arr in (fixed, fixed.slice(1), pa.chunked_array([fixed.slice(0, 1), fixed.slice(2)])):
        got = arrow_bytes(arr, multiple=8, copy=False)          # Arrow's buffer as it is, not padded again
        assert got.dtype == np.dtype("S16") and [x.decode() for x in got] == pa.chunked_array([arr]).to_pylist()
    v = np.arange(10, dtype=np.int64) * 3
    assert (arrow_numpy(numpy_arrow(v)) == v).all()
    assert (arrow_numpy(numpy_arrow(v).slice(4, 3)) == v[4:7]).all()
    f = pa.array([1.5, None, 2.5])
    assert arrow_numpy(f, fill=-1.0).tolist() == [1.5, -1.0, 2.5]
    with pytest.raises(ValueError):
        arrow_numpy(f)
    with pytest.raises(pa.ArrowInvalid):
        bytes_arrow(np.array([b"\xff"]))                                 # not UTF-8
