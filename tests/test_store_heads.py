"""Heads of the run store's parts (issue 39, item 2): the first 100 rows of each ranking written beside
each part at ingest, read by pools instead of the whole rankings. A head holds exactly the part's top
rows; pools read through heads equal pools read from the parts (stores without heads, damaged or
foreign heads, deeper pools) and in-memory pools, byte for byte in the pool file."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.evaluation.store import RunStore, heads
from engine.formats.runs import read_runs
from engine.formats.qrels import read_qrels
from engine.pooling import build_pool, write_pool
from engine.pooling.store import build_pool_store, pool_candidates_store
from engine.simulation.large import write_large_campaign

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setattr(heads, "HEAD_GROUP_ROWS", 3_000)          # several head row groups per run, cut at topic starts
    try:
        root = write_large_campaign(tmp_path_factory.mktemp("heads") / "c", n_topics=120, n_runs=6, depth=150,
                                    seed=7)
        files = sorted((root / "runs").glob("*.txt"))
        st = RunStore(root)
        st.sync(files, workers=1)
    finally:
        mp.undo()
    return root, files, read_runs(files)


def _no_heads(root: Path) -> None:
    for f in (root / ".cranfield-store" / "heads").rglob("*.parquet"):
        f.unlink()


def test_a_head_is_the_top_of_each_ranking(camp):
    root, files, _ = camp
    st = RunStore(root)
    plan = heads.head_plan(st, st.runs, 100)
    assert sorted(plan) == sorted(st.runs) and len(st.runs) == 6
    for run in st.runs:
        path, rg_of, md = plan[run]
        part = pq.read_table(st.part(run))
        head = pq.read_table(path)
        assert head.schema.remove_metadata() == part.schema.remove_metadata()
        want = part.filter(pa.compute.less_equal(part.column("pos"), 100))
        assert head.equals(want.cast(head.schema)) and len(head) < len(part)
        assert md.num_row_groups > 2
        # each topic's head rows sit in the row group the plan names, whole
        t = pq.ParquetFile(path)
        for g in range(md.num_row_groups):
            got = set(t.read_row_group(g, columns=["topic"]).column("topic").to_pylist())
            assert got == {k for k, v in rg_of.items() if v == g}
    assert heads.head_plan(st, st.runs, 101) == {}                  # deeper than a head: the parts


def test_pools_through_heads_equal_pools_from_parts(camp, tmp_path):
    root, files, runs = camp
    st = RunStore(root)
    got = {}
    for k in ("heads", "parts"):
        if k == "parts":
            _no_heads(root)
            assert heads.head_plan(RunStore(root), st.runs, 100) == {}
        s = RunStore(root)
        got[k] = [pool_candidates_store(s, d, None, block_rows=b, workers=1) for d, b in ((100, 30_000), (20, 5_000))]
        got[k].append(build_pool_store(s, "statap", 17, depth=100, seed=3, block_rows=20_000, workers=1))
        got[k].append(build_pool_store(s, "depth", 10, depth=50, seed=3, workers=1))
        got[k].append(build_pool_store(s, "mtf", 9, depth=60, oracle=read_qrels(root / "judgments" / "qrels.txt"),
                                       block_rows=20_000, workers=1))
    for a, b in zip(got["heads"][:2], got["parts"][:2]):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    for i, (a, b) in enumerate(zip(got["heads"][2:], got["parts"][2:])):
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
        assert a.spec == b.spec
        (tmp_path / f"h{i}").mkdir()
        (tmp_path / f"p{i}").mkdir()
        assert write_pool(tmp_path / f"h{i}", "x", a).read_bytes() == write_pool(tmp_path / f"p{i}", "x", b).read_bytes()
    mem = build_pool(runs, "statap", 17, depth=100, seed=3)
    pd.testing.assert_frame_equal(mem.table, got["heads"][2].table, check_exact=True)
    # the sync that follows writes nothing (the parts are fresh) and leaves the store without heads
    st2 = RunStore(root)
    st2.sync(files, workers=1)
    assert heads.head_plan(st2, st2.runs, 100) == {}


def test_a_head_that_does_not_match_is_not_read(tmp_path):
    root = write_large_campaign(tmp_path / "c", n_topics=30, n_runs=3, depth=120, seed=2)
    files = sorted((root / "runs").glob("*.txt"))
    st = RunStore(root)
    st.sync(files, workers=1)
    plan = heads.head_plan(st, st.runs, 100)
    ref = build_pool_store(st, "statap", 11, depth=100, seed=1, workers=1).table
    a, b, c = st.runs
    # a head that lost its last row group's rows, one naming other content, one cut at another depth
    p = Path(plan[a][0])
    t = pq.read_table(p)
    pq.write_table(t.slice(0, len(t) - 1), p)
    p = Path(plan[b][0])
    t = pq.read_table(p)
    pq.write_table(t.replace_schema_metadata({**t.schema.metadata, b"cranfield.sha256": b"0" * 64}), p)
    p = Path(plan[c][0])
    t = pq.read_table(p)
    pq.write_table(t.replace_schema_metadata({**t.schema.metadata, b"cranfield.head": b"90"}), p)
    st = RunStore(root)
    assert heads.head_plan(st, st.runs, 100) == {}
    pd.testing.assert_frame_equal(ref, build_pool_store(st, "statap", 11, depth=100, seed=1, workers=1).table,
                                  check_exact=True)


def test_heads_follow_their_parts(tmp_path):
    root = write_large_campaign(tmp_path / "c", n_topics=20, n_runs=2, depth=110, seed=3)
    files = sorted((root / "runs").glob("*.txt"))
    st = RunStore(root)
    st.sync(files, workers=1)
    hd = root / ".cranfield-store" / "heads"
    before = sorted(hd.rglob("*.parquet"))
    assert len(before) == 2
    (hd / "run=run01" / ".orphan.tmp").write_bytes(b"x")              # a killed write's leftover
    lines = files[0].read_text().splitlines(keepends=True)
    files[0].write_text("".join(lines[:-1]))                           # the run file changes: a new part and head
    st.sync(files, workers=1)
    after = sorted(hd.rglob("*"))
    assert len([f for f in after if f.is_file()]) == 2 and before[0] not in after and before[1] in after
    st.sync(files[1:], workers=1)                                       # a run dropped: its head goes
    assert [f.parent.name for f in hd.rglob("*.parquet")] == ["run=run02"]
    # a part ingested outside a store writes no head
    from engine.evaluation.store import ingest_file
    ingest_file(str(files[1]), str(tmp_path / "part.parquet"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "part.parquet"]


def test_pool_command_reads_heads_and_writes_the_same_file(tmp_path):
    root = write_large_campaign(tmp_path / "c", n_topics=40, n_runs=4, depth=130, seed=5)
    env = dict(os.environ, PYTHONPATH=str(REPO))

    def pool(name: str) -> bytes:
        r = subprocess.run([sys.executable, "-m", "cranfield.cli", "pool", str(root), "--strategy", "statap",
                            "--budget", "12", "--seed", "4", "--name", name], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        return (root / "pools" / f"pool-{name}.tsv").read_bytes()

    subprocess.run([sys.executable, "-m", "cranfield.cli", "ingest", str(root)], check=True, env=env,
                   capture_output=True)
    assert len(list((root / ".cranfield-store" / "heads").rglob("*.parquet"))) == 4
    with_heads = pool("h")
    # a head whose page fails its checksum: refused like a damaged part, naming it and the way out
    head = sorted((root / ".cranfield-store" / "heads").rglob("*.parquet"))[0]
    data = bytearray(head.read_bytes())
    data[200:260] = bytes(b ^ 0xFF for b in data[200:260])
    head.write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-m", "cranfield.cli", "pool", str(root), "--strategy", "statap", "--budget",
                        "12", "--dry-run"], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "Traceback" not in r.stderr and str(head) in r.stderr and "--rebuild" in r.stderr
    subprocess.run([sys.executable, "-m", "cranfield.cli", "ingest", "--rebuild", str(root)], check=True, env=env,
                   capture_output=True)
    assert pool("r") == with_heads
    _no_heads(root)
    without = pool("p")
    assert with_heads == without and with_heads.count(b"\n") > 40 * 12
    assert np.all(heads.groups(np.array([5, 5, 5, 5]), 10) == [0, 0, 1, 1])


@pytest.mark.parametrize("chunks", [1, 3, 17])
def test_a_head_written_in_chunks_has_the_row_groups_its_reader_expects(tmp_path, monkeypatch, chunks):
    """A part's rows arrive in chunks of whole topics (a streamed ingest): the head's row groups close at the
    same topic starts whatever the chunks, so `head_plan`'s check (`groups` over the topic sizes) accepts it."""
    monkeypatch.setattr(heads, "HEAD_GROUP_ROWS", 250)
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 180, 40)                               # rows per topic, some above HEAD_ROWS
    topics = np.repeat([f"t{i:03d}" for i in range(len(sizes))], sizes)
    pos = np.concatenate([np.arange(1, n + 1) for n in sizes]).astype(np.int32)
    tab = pa.table({"topic": topics, "doc": [f"d{i}" for i in range(len(topics))],
                    "score": rng.random(len(topics)), "rank": pos.astype(np.int64), "pos": pos})
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    part = tmp_path / ".cranfield-store" / "runs" / ".pending" / "p.parquet"
    cuts = np.array_split(np.arange(len(sizes)), chunks)
    with heads.writing(part):
        w = heads.HeadWriter("r1", "r1.txt")
        for c in cuts:
            lo, hi = int(starts[c[0]]), int(starts[c[-1]] + sizes[c[-1]])
            w.add(tab.slice(lo, hi - lo), starts[c] - lo)
        w.close("ab" * 32)
    path = heads.head_name(tmp_path / ".cranfield-store", "r1", "ab" * 32)
    md = pq.read_metadata(path)
    kept = np.minimum(sizes, heads.HEAD_ROWS)
    assert heads._groups_of(md, "r1", "ab" * 32, kept) is not None and md.num_row_groups > 5
    head = pq.read_table(path)
    assert head.equals(tab.filter(pa.compute.less_equal(tab.column("pos"), heads.HEAD_ROWS)).cast(head.schema))
