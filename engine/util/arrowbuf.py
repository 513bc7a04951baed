"""Arrow arrays to and from numpy through their buffers.

pyarrow's own conversions (`to_numpy`, `np.asarray`, `pa.array(ndarray)`) import pandas on first use
(about 0.2 s and 60 MB per process); a worker that reads and evaluates run files needs none of it.
These functions handle the arrays such workers see: primitive values without nulls, and strings.
"""
from __future__ import annotations

import numpy as np


def _one_chunk(arr):
    import pyarrow as pa
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def arrow_numpy(arr, fill=None) -> np.ndarray:
    """A primitive Arrow array (or chunked array: int, uint, float) as numpy, a view when it has no
    nulls; nulls become `fill` (a ValueError when there are nulls and no `fill`)."""
    a = _one_chunk(arr)
    dt = np.dtype(str(a.type))               # int8..int64, uint8..uint64, float ("float"), double
    n = len(a)
    if n == 0:
        return np.zeros(0, dt)
    values = np.frombuffer(a.buffers()[1], dt, count=n, offset=a.offset * dt.itemsize)
    if not a.null_count:
        return values
    if fill is None:
        raise ValueError("arrow_numpy: the array has nulls")
    bits = np.unpackbits(np.frombuffer(a.buffers()[0], np.uint8), bitorder="little")
    return np.where(bits[a.offset:a.offset + n].astype(bool), values, fill)


def numpy_arrow(values: np.ndarray):
    """A primitive numpy array as an Arrow array (copied only when not contiguous)."""
    import pyarrow as pa
    v = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(v.dtype), len(v), [None, pa.py_buffer(v)])


def bytes_arrow(values: np.ndarray):
    """A numpy bytes array (dtype S, no NUL inside a value) as an Arrow string array (UTF-8 checked)."""
    import pyarrow as pa
    n, w = len(values), values.dtype.itemsize
    m = values.view(np.uint8).reshape(n, w) if n and w else np.zeros((n, 0), np.uint8)
    keep = m != 0
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(keep.sum(axis=1), out=offsets[1:])
    small = offsets[-1] < 2**31
    arr = pa.Array.from_buffers(pa.string() if small else pa.large_string(), n,
                                [None, pa.py_buffer(offsets.astype(np.int32) if small else offsets),
                                                       pa.py_buffer(np.ascontiguousarray(m[keep]))])
    arr.validate(full=True)                  # UTF-8
    return arr


def arrow_bytes(arr, multiple: int = 1, copy: bool = True) -> np.ndarray:
    """An Arrow string array without nulls (and without NUL inside a value) as a numpy bytes array
    (dtype S): padded with NUL to the longest value (rounded up to a `multiple` of bytes) by Arrow, then
    viewed (`copy=False`: a read-only view of Arrow's buffer, when it can be one)."""
    import pyarrow.compute as pc
    a = _one_chunk(arr)
    if a.null_count:
        raise ValueError("arrow_bytes: the array has nulls")
    n = len(a)
    if n == 0:
        return np.zeros(0, f"S{multiple}")
    span = pc.min_max(pc.binary_length(a))
    w = max(int(span["max"].as_py()), 1)
    w = -(-w // multiple) * multiple
    # every value already w bytes long (fixed-width ids): Arrow's buffer as it is, else padded by Arrow
    p = a if int(span["min"].as_py()) == w else pc.utf8_rpad(a, width=w, padding="\x00")
    large = str(p.type) == "large_string"
    width = 8 if large else 4
    off = np.frombuffer(p.buffers()[1], f"i{width}", count=n + 1, offset=p.offset * width)
    if off[-1] - off[0] == n * w:           # every value w bytes long
        data = np.frombuffer(p.buffers()[2], np.uint8, count=n * w, offset=int(off[0]))
        return data.view(f"S{w}").copy() if copy else data.view(f"S{w}")
    # multi-byte characters (padding counts code points): place each value's bytes
    data = np.frombuffer(a.buffers()[2], np.uint8)
    aoff = np.frombuffer(a.buffers()[1], f"i{width}", count=n + 1, offset=a.offset * width).astype(np.int64)
    lens = np.diff(aoff)
    out = np.zeros((n, w), np.uint8)
    total = int(aoff[-1] - aoff[0])
    rows = np.repeat(np.arange(n), lens)
    cols = np.arange(total) - np.repeat(aoff[:-1] - aoff[0], lens)
    out[rows, cols] = data[aoff[0]:aoff[-1]]
    return out.view(f"S{w}").ravel()
