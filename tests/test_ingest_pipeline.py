"""The streamed ingest's pipeline (engine.evaluation.store.ingest): pieces read, hashed and parsed in a
thread ahead of the writer, a refusal raised there handled as before, and an ingest worker that never
imports pandas."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]


def _lines(topics: list[int], per: int, tag: str = "r") -> list[str]:
    return [f"{t} Q0 d{(7 * i) % per} {i + 1} {1.0 / (i + 1):.5f} {tag}" for t in topics for i in range(per)]


def test_a_piece_refused_in_the_reading_thread_falls_back_to_the_whole_file(tmp_path, monkeypatch):
    """Topics leave byte order only in a late piece: the refusal is raised in the reading thread, the
    part written so far is dropped and the file is ingested whole, with the part the whole-file path
    writes."""
    from engine.errors import Warnings
    import engine.evaluation.store.ingest as store_mod
    lines = _lines(list(range(100, 130)), 40) + _lines([10], 40)      # "10" after "129": not byte order
    f = tmp_path / "r.txt"
    f.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(store_mod, "CHUNK_BYTES", 1024)                 # about 45 pieces
    calls = []
    real_whole = store_mod._ingest_whole
    monkeypatch.setattr(store_mod, "_ingest_whole", lambda *a: calls.append(1) or real_whole(*a))
    got = store_mod.ingest_file(str(f), str(tmp_path / "a.parquet"), 200)
    assert calls == [1]
    ref = real_whole(str(f), tmp_path / "b.parquet", 200, Warnings(), f.read_bytes())
    for k in ("sha256", "tag", "rows", "topics", "topic_rows", "topic_rg"):
        assert got[k] == ref[k], k
    assert got["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert got["topics"][0] == "10" and got["rows"] == 31 * 40
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]      # no temporary part left


def test_an_ingest_worker_imports_no_pandas_and_writes_the_part_the_whole_file_path_writes(tmp_path):
    """A separate process ingests a clean file in many pieces as a worker does: pandas is never imported
    (0.2-0.6 s of CPU and ~60 MB per worker), and the part is byte for byte the whole-file path's."""
    lines = _lines([str(t) for t in range(1000, 1040)], 300)
    f = tmp_path / "r.txt"
    f.write_text("\n".join(lines) + "\n")
    code = f"""
import json, sys
import engine.evaluation.store.ingest as m
from engine.errors import Warnings
m.CHUNK_BYTES = 64 * 1024
e = m.ingest_file({str(f)!r}, {str(tmp_path / 'a.parquet')!r}, 1000)
streamed_pandas = 'pandas' in sys.modules
w = m._ingest_whole({str(f)!r}, {str(tmp_path / 'b.parquet')!r}, 1000, Warnings(), open({str(f)!r}, 'rb').read())
print(json.dumps({{"pandas": streamed_pandas, "rows": e["rows"], "topics": len(e["topics"]),
                  "same": e["topic_rg"] == w["topic_rg"] and e["sha256"] == w["sha256"]}}))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"pandas": False, "rows": 40 * 300, "topics": 40, "same": True}
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert pq.read_metadata(tmp_path / "a.parquet").num_row_groups == pq.read_metadata(tmp_path / "b.parquet").num_row_groups > 5


def test_run_heads_finds_every_change_of_value_across_chunks_and_slices():
    """`run_heads` (now by Arrow indices) equals a plain loop over the values, for arrays, chunked
    arrays cut anywhere, slices of them, empty and one-row inputs."""
    import numpy as np
    import pyarrow as pa
    from engine.formats.runs import run_heads
    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(0, 40))
        vals = [f"t{int(x)}" for x in (np.sort(rng.integers(0, 6, n)) if trial % 2 else rng.integers(0, 3, n))]
        a = pa.array(vals, pa.string())
        cuts = sorted(rng.integers(0, n + 1, int(rng.integers(0, 3))).tolist())
        ch = pa.chunked_array([a.slice(s, e - s) for s, e in zip([0, *cuts], [*cuts, n])], pa.string())
        for x in (a, ch, ch.slice(min(1, n)), a.slice(min(2, n))):
            v = x.to_pylist()
            want = [i for i in range(len(v)) if i == 0 or v[i] != v[i - 1]]
            got = run_heads(x)
            assert got.dtype == np.int64 and got.tolist() == want, (v, got)


def test_scale_stages_times_every_step_of_a_file_and_the_writer_options(tmp_path):
    """`benchmarks/scale.py --stages FILE` (a process): every step of the streamed ingest timed on the
    file's lines (a repeated document among them, dropped as the ingest drops it), then each Parquet
    writer option with the bytes it writes; the store's own options first."""
    import re
    lines = _lines([str(t) for t in range(1000, 1030)], 200)
    lines.insert(5, lines[2].replace(" 3 ", " 6 ", 1))                  # document d14 again in topic 1000
    f = tmp_path / "r.txt"
    f.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--stages", str(f)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"{30 * 200:,} rows kept" in text                           # the repeat is not counted
    steps = dict(re.findall(r"^  (?:  of which )?(\S.*?\S) +(\d+\.\d\d)$", text, re.M))
    for k in ("read", "sha256", "Arrow CSV read (tokenize, convert 6 columns)", "topic starts", "repeated documents",
              "trec_eval order", "Parquet writer", "all"):
        assert k in steps, k
    sizes = re.findall(r"^  (.+?) +\d+\.\d\d s +(\d+\.\d{3}) MB$", text, re.M)
    assert [n for n, _ in sizes][:1] == ["the store's (zstd level 1)"] and len(sizes) == 10
    assert float(dict(sizes)["no compression"]) > float(dict(sizes)["the store's (zstd level 1)"])
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 d1 1 1.0 r\n1 Q0 d2 2\n")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--stages", str(bad)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 2 and "not a clean run file" in out.stdout
