"""The pool file writer (issue 39): streamed in chunks and formatted in Arrow, byte for byte the text of
pandas' to_csv with prob as repr (the writer it replaced, kept here as the oracle)."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from engine.pooling import POOL_COLUMNS, Pool, build_pool, pool_log, read_pool, write_pool
from engine.pooling import files as pool_files
from engine.pooling.files import float_text, pool_bytes


def _reference(table: pd.DataFrame) -> bytes:
    t = table[POOL_COLUMNS].copy()
    t["prob"] = t["prob"].map(repr)
    return t.to_csv(sep="\t", index=False).encode("utf-8")


def test_float_text_is_repr():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.random(50_000), rng.random(5_000) / 1e3, 10 ** rng.uniform(-12, 20, 50_000),
                        -10 ** rng.uniform(-8, 18, 5_000), np.arange(-5, 6.0),
                        [1e-5, 1e-4, 9.9999e-5, 1e9, 1e15, 1e16, 123456789.0, 999999999.5, 5e-324,
                         np.inf, -np.inf, np.nan, -0.0, 0.1, 1 / 3, 0.30000000000000004]])
    got = float_text(x).to_pylist()
    want = [repr(v) for v in x.tolist()]
    assert [(w, g) for w, g in zip(want, got) if w != g] == []


def _table(n: int, rng, text=str) -> pd.DataFrame:
    topic = np.repeat([f"{t:03d}" for t in range(n // 50 + 1)], 50)[:n]
    doc = np.asarray([f"D{i}-x" for i in range(n)], dtype=object)
    prob = rng.random(n)
    prob[::7] = 1.0
    prob[::11] = rng.random(len(prob[::11])) / 1e5
    return pd.DataFrame({"topic": pd.Series(topic, dtype=text), "doc": pd.Series(doc, dtype=text),
                         "stratum": rng.integers(0, 4, n).astype(np.int64), "prob": prob,
                         "method": "statap", "order": rng.integers(0, 60, n).astype(np.int64)})


@pytest.mark.parametrize("text", ["str", object, "category"])
def test_pool_bytes_equal_to_csv_across_chunks(monkeypatch, text):
    monkeypatch.setattr(pool_files, "CHUNK_ROWS", 1_000)
    t = _table(4_321, np.random.default_rng(5), text)
    pieces = list(pool_bytes(t))
    assert len(pieces) == 1 + 5                                      # the header, then 5 chunks
    assert b"".join(pieces) == _reference(t)


@pytest.mark.parametrize("text", ["str", object])
def test_pool_bytes_falls_back_where_csv_quotes_or_values_are_missing(monkeypatch, text):
    monkeypatch.setattr(pool_files, "CHUNK_ROWS", 100)
    t = _table(550, np.random.default_rng(6), text)
    t.loc[30, "doc"] = 'say "x"'                   # quoted by csv, its chunk through to_csv
    t.loc[150, "doc"] = "tab\there"
    t.loc[499, "doc"] = "cr\r"                     # the last row of a chunk (its bytes end the chunk's text)
    t.loc[500, "topic"] = "the next chunk is plain"
    t.loc[250, "topic"] = None                     # written empty
    t.loc[350, "method"] = "line\nbreak"
    assert b"".join(pool_bytes(t)) == _reference(t)
    empty = t.iloc[:0]
    assert b"".join(pool_bytes(empty)) == _reference(empty) == b"topic\tdoc\tstratum\tprob\tmethod\torder\n"


def test_write_pool_streams_the_same_file_and_its_hash(tmp_path, monkeypatch):
    rng = np.random.default_rng(8)
    runs = pd.DataFrame({"run": np.repeat([f"r{i}" for i in range(6)], 400),
                         "topic": np.tile(np.repeat([str(t) for t in range(8)], 50), 6),
                         "doc": [f"d{rng.integers(0, 120)}" for _ in range(2400)],
                         "score": rng.random(2400)})
    runs = runs.drop_duplicates(["run", "topic", "doc"]).reset_index(drop=True)
    p = build_pool(runs, "statap", 12, depth=50, seed=4)
    monkeypatch.setattr(pool_files, "CHUNK_ROWS", 97)
    path = write_pool(tmp_path, "s", p)
    data = path.read_bytes()
    assert data == _reference(p.table)
    assert pool_log(tmp_path)[-1]["sha256"] == hashlib.sha256(data).hexdigest()
    back = read_pool(path)
    assert back["prob"].tolist() == p.table["prob"].tolist()        # exact round trip
    assert isinstance(p, Pool) and len(back) == len(p.table)
