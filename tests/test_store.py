"""The columnar run store (engine.evaluation.store) and the block-streamed engine (engine.evaluation.blocks): layout,
incremental ingest, error reporting, and results identical to the in-memory engine."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from engine.evaluation.blocks import evaluate_store
from engine.pooling.store import pool_candidates_store
from engine.campaign.campaign import load_campaign
from engine.errors import FormatError, Warnings
from engine.evaluation.evaluate import compute, evaluate, trec_eval_lines, trec_eval_lines_long
from engine.formats.qrels import read_qrels
from engine.formats.runs import read_runs
from engine.pooling import build_pool
from engine.pooling.candidates import pool_candidates, ranked_runs
from engine.ranking.ranked import EvalOptions
from engine.evaluation.store import RunStore, store_dir


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_lines(tag: str, rows: list[tuple[str, str, float]]) -> str:
    return "".join(f"{t} Q0 {d} {i + 1} {s} {tag}\n" for i, (t, d, s) in enumerate(rows))


@pytest.fixture
def small(tmp_path):
    # run a: topic 2 listed before topic 10 (numeric order), tied scores, out of score order
    a = write(tmp_path / "runs" / "a.txt", run_lines("a", [
        ("2", "d1", 1.0), ("2", "d3", 3.0), ("2", "d2", 3.0), ("10", "x", 0.5), ("10", "y", 0.7)]))
    b = write(tmp_path / "runs" / "b.txt", run_lines("b", [("10", "y", 2.0), ("2", "d9", 1.0)]))
    return tmp_path, [a, b]


def test_layout_order_and_partitions(small):
    root, files = small
    st = RunStore(root)
    rep = st.sync(files)
    assert rep.ingested == [str(f) for f in files] and rep.rows == 7
    # Hive partitions, one part per run
    parts = sorted(p.relative_to(store_dir(root)).parts[:2] for p in store_dir(root).rglob("*.parquet")
                   if p.parent.name.startswith("run="))
    assert [p for p in parts] == [("heads", "run=a"), ("heads", "run=b"), ("runs", "run=a"), ("runs", "run=b")]
    t = pq.read_table(st.part("a")).to_pandas()
    # byte order of topics: "10" < "2"; score desc; tie (3.0) broken by doc id descending: d3 before d2
    assert t["topic"].tolist() == ["10", "10", "2", "2", "2"]
    assert t["doc"].tolist() == ["y", "x", "d3", "d2", "d1"]
    assert t["pos"].tolist() == [1, 2, 1, 2, 3]
    assert t["rank"].tolist() == [5, 4, 2, 3, 1]          # the file's own rank column, kept
    # one topic of every run, one run
    one = st.read(topics=["10"])
    assert one.column("run").to_pylist() == ["a", "a", "b"] and one.column("doc").to_pylist() == ["y", "x", "y"]
    assert st.read(runs=["b"]).num_rows == 2
    assert st.topics() == ["10", "2"]


def test_row_groups_hold_whole_topics(tmp_path):
    rows = [(str(t), f"d{t}-{i}", float(100 - i)) for t in range(1, 40) for i in range(30)]
    f = write(tmp_path / "runs" / "r.txt", run_lines("r", rows))
    from engine.evaluation import store as store_mod
    part = tmp_path / "p.parquet"
    meta = store_mod.ingest_file(str(f), str(part), group_rows=100)
    pf = pq.ParquetFile(part)
    assert pf.num_row_groups > 5
    seen = set()
    for i in range(pf.num_row_groups):
        ts = set(pf.read_row_group(i, columns=["topic"]).column("topic").to_pylist())
        assert not ts & seen                     # a topic never spans two row groups
        seen |= ts
    assert len(meta["topics"]) == 39 and sum(meta["topic_rows"]) == 39 * 30


def test_streamed_ingest_equals_whole_file_ingest(tmp_path, monkeypatch):
    """A clean file with topics in byte order is ingested in text chunks (here a few lines each, so
    topics, row groups and repeated documents straddle chunk boundaries); its part, index entry and
    warnings equal those of the whole-file ingest, and a file whose topics are not in byte order is
    ingested whole with the same result for the same lines."""
    from engine.evaluation.store import ingest as store_mod
    rng = np.random.default_rng(5)
    rows = []
    for t in range(100, 140):                             # byte order = numeric order here
        k = int(rng.integers(1, 60))
        docs = [f"d{int(x)}" for x in rng.integers(0, 80, k)]      # repeats within and across topics
        scores = np.round(rng.normal(size=k), 1)            # ties; lines not in score order
        rows += [(str(t), d, float(s)) for d, s in zip(docs, scores)]
    f = write(tmp_path / "runs" / "r.txt", run_lines("r", rows))
    whole_w = Warnings()
    whole = store_mod._ingest_whole(str(f), tmp_path / "whole.parquet", 50, whole_w, f.read_bytes())
    real_whole = store_mod._ingest_whole
    monkeypatch.setattr(store_mod, "CHUNK_BYTES", 200)
    monkeypatch.setattr(store_mod, "_ingest_whole", lambda *a: pytest.fail("not streamed"))
    got = store_mod.ingest_file(str(f), str(tmp_path / "stream.parquet"), group_rows=50)
    assert got["warnings"] == [(p.path, p.line, p.message) for p in whole_w]
    assert sum("retrieved twice" in m for _, _, m in got["warnings"]) == 50 and got["warnings"][-1][2].endswith(
        "more repeated documents ignored by the same rule")
    for k in ("sha256", "tag", "rows", "topics", "topic_rows", "topic_rg"):
        assert got[k] == whole[k], k
    a, b = pq.ParquetFile(tmp_path / "whole.parquet"), pq.ParquetFile(tmp_path / "stream.parquet")
    assert a.read().equals(b.read()) and a.num_row_groups == b.num_row_groups > 5
    assert b.metadata.metadata[b"cranfield.sha256"].decode() == got["sha256"] == __import__("hashlib").sha256(
        f.read_bytes()).hexdigest()
    assert b.metadata.metadata[b"cranfield.rows"] == str(got["rows"]).encode()
    # topics listed 2 before 10 (not byte order): read whole, the same stored rows as the sorted listing
    monkeypatch.setattr(store_mod, "_ingest_whole", real_whole)
    g = write(tmp_path / "runs" / "s.txt", run_lines("s", [("2", "a", 1.0), ("10", "b", 2.0), ("10", "c", 2.0)]))
    h = write(tmp_path / "runs" / "t.txt", run_lines("s", [("10", "c", 2.0), ("10", "b", 2.0), ("2", "a", 1.0)]))
    ea = store_mod.ingest_file(str(g), str(tmp_path / "g.parquet"))
    eb = store_mod.ingest_file(str(h), str(tmp_path / "h.parquet"))
    assert ea["topics"] == eb["topics"] == ["10", "2"]
    ta, tb = pq.read_table(tmp_path / "g.parquet"), pq.read_table(tmp_path / "h.parquet")
    assert ta.select(["topic", "doc", "pos"]).equals(tb.select(["topic", "doc", "pos"]))
    assert ta.column("doc").to_pylist() == ["c", "b", "a"]


@pytest.mark.parametrize("ids", [
    [f"d{i}" for i in range(60)],                                # 2-3 bytes: padded to one word
    [f"GX{i:06d}" for i in range(60)] + [f"GX{i:014d}" for i in range(40)],      # exactly 8 and 16 bytes
    [f"é{i}ü" for i in range(60)] + ["d1", "d10", "d100"],        # non-ASCII, prefixes of each other
    [f"clueweb12-{i:04d}-" + "x" * 30 for i in range(60)] + ["a"],          # 45 bytes
    [f"clueweb12-{i:04d}-" + "x" * 60 for i in range(60)] + ["a"],          # over 64 bytes: exact slices
])
def test_repeated_documents_by_hash_equal_the_exact_check(ids, monkeypatch):
    """The streamed ingest finds repeated (topic, document) rows from a hash of the id's words and
    checks only the candidates exactly: the same rows as pandas' duplicated, for ids of every length
    and encoding, repeats across topics not counted; and exact when every hash collides."""
    import pyarrow as pa
    from engine.evaluation.store import repeats as store_mod
    from engine.formats.runs import run_heads
    rng = np.random.default_rng(len(ids))
    topics = np.repeat([f"t{k:03d}" for k in range(40)], rng.integers(1, 50, 40))
    docs = np.asarray(ids, dtype=object)[rng.integers(0, len(ids), len(topics))]
    tab = pa.table({"topic": pa.array(topics.tolist()), "doc": pa.array(docs.tolist())})
    heads = run_heads(tab.column("topic"))
    want = pd.DataFrame({"t": topics, "d": docs}).duplicated().to_numpy()
    assert 20 < want.sum() < len(want) - 20
    assert (store_mod._repeat_candidates(tab.column("doc"), heads) is None) == (max(len(x.encode()) for x in ids) > 64)
    got = store_mod._duplicates(tab, heads)
    assert got is not None and (got == want).all()
    assert store_mod._duplicates(tab.slice(0, 0), np.zeros(0, np.int64)) is None
    assert store_mod._duplicates(tab.filter(pa.array(~want)), run_heads(tab.filter(pa.array(~want)).column("topic"))) is None
    monkeypatch.setattr(store_mod, "_repeat_candidates", lambda doc, h: np.arange(len(doc)))   # all collide
    assert (store_mod._duplicates(tab, heads) == want).all()


def test_manifest_packs_topic_lists_and_a_damaged_one_is_rebuilt(small):
    import json
    root, files = small
    RunStore(root).sync(files)
    mp = store_dir(root) / "manifest.json"
    m = json.loads(mp.read_text())
    e = next(x for x in m["files"].values() if x["tag"] == "a")
    assert e["topics"] == "10 2" and isinstance(e["topic_rows"], str)     # packed, not JSON lists
    assert RunStore(root).index.query("run == 'a'")[["topic", "rows"]].values.tolist() == [["10", 2], ["2", 3]]
    # packed lists whose sizes disagree: the manifest is damaged, every file is ingested again
    e["topics"] = "10 2 3"
    mp.write_text(json.dumps(m))
    w = Warnings()
    rep = RunStore(root).sync(files, w)
    assert len(rep.ingested) == 2 and any("manifest is damaged" in str(x) for x in w)
    assert RunStore(root).read(topics=["2"]).column("doc").to_pylist() == ["d3", "d2", "d1", "d9"]


def test_incremental_sync(small):
    root, files = small
    st = RunStore(root)
    st.sync(files)
    rep = RunStore(root).sync(files)
    assert rep.ingested == [] and len(rep.reused) == 2
    # change one file: only it is read again, and the new content is what is served
    time.sleep(0.01)
    write(files[1], run_lines("b", [("10", "z", 9.0)]))
    rep = RunStore(root).sync(files)
    assert rep.ingested == [str(files[1])] and rep.reused == [str(files[0])]
    assert RunStore(root).read(runs=["b"]).column("doc").to_pylist() == ["z"]
    # drop a file: its part goes
    rep = RunStore(root).sync(files[:1])
    assert rep.removed and RunStore(root).runs == ["a"]
    assert not any("run=b" in str(p) for p in store_dir(root).rglob("*.parquet"))


def test_bad_files_are_reported_with_file_and_line(small):
    root, files = small
    bad = write(root / "runs" / "c.txt", "1 Q0 d1 1 0.5 c\n1 Q0 d2 2 notanumber c\n")
    with pytest.raises(FormatError) as e:
        RunStore(root).sync(files + [bad])
    text = str(e.value)
    assert f"{bad}:2" in text and "score" in text
    # the good files were stored; the bad one is not recorded and is read again next time
    assert RunStore(root).runs == ["a", "b"]
    with pytest.raises(FormatError):
        RunStore(root).sync(files + [bad])
    # two files with one tag
    dup = write(root / "runs" / "d.txt", run_lines("a", [("1", "q", 1.0)]))
    with pytest.raises(FormatError, match="run tag 'a' is also the tag of"):
        RunStore(root).sync(files + [dup])


def test_duplicate_documents_warned_and_first_kept(tmp_path):
    f = write(tmp_path / "runs" / "r.txt", run_lines("r", [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d1", 1.0)]))
    w = Warnings()
    RunStore(tmp_path).sync([f], w)
    msgs = [str(p) for p in w]
    assert any(f"{f}:3" in m and "retrieved twice" in m and "first at line 1" in m for m in msgs)
    t = RunStore(tmp_path).read()
    assert t.column("doc").to_pylist() == ["d1", "d2"] and t.column("score").to_pylist() == [3.0, 2.0]
    # the warning is repeated when the stored copy is reused, so nothing is lost silently
    w2 = Warnings()
    RunStore(tmp_path).sync([f], w2)
    assert [str(p) for p in w2] == msgs


def test_campaign_reads_runs_from_the_store(tmp_path):
    import shutil
    from cranfield.cli import demo_campaign
    root = tmp_path / "demo"
    shutil.copytree(demo_campaign(), root, ignore=shutil.ignore_patterns(".cranfield-*"))
    c = load_campaign(root)
    text = read_runs(c.run_files())
    runs = c.runs()
    assert (store_dir(root) / "manifest.json").is_file()
    key = ["run", "topic", "doc"]
    a = text.astype({k: object for k in key}).sort_values(key).reset_index(drop=True)
    b = runs.astype({k: object for k in key}).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[key + ["rank", "score"]], b[key + ["rank", "score"]], check_dtype=False)
    # a later load does not parse the text again
    from engine.evaluation.store import ingest as store_mod
    calls = []
    real = store_mod.ingest_file
    store_mod.ingest_file = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        load_campaign(root).runs()
    finally:
        store_mod.ingest_file = real
    assert calls == []


# --------------------------------------------------------------------------- medium campaign


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    """400 topics x 25 runs x 200 documents (2M rows), judged: 240 topics. The streamed calls below cut it
    into as many topic blocks as they did at 1,000 topics (their block_rows scaled by 0.4): each still runs
    many blocks on two processes, at 40% of the rows."""
    from engine.simulation.large import write_large_campaign
    root = write_large_campaign(tmp_path_factory.mktemp("medium") / "c", n_topics=400, n_runs=25, depth=200,
                                seed=3, judged=240)
    files = sorted((root / "runs").glob("*.txt"))
    st = RunStore(root)
    st.sync(files, workers=2)
    return root, files, st, read_qrels(root / "judgments" / "qrels.txt"), read_runs(files)


MEASURES = ["official", "all_trec", "infAP", "ndcgx", "Q", "bpref_N", "map@cond"]


@pytest.mark.parametrize("opts", [EvalOptions(), EvalOptions(complete=True, rel_level=2),
                                  EvalOptions(max_depth=50, judged_only=True)])
def test_medium_identical_to_in_memory(medium, opts):
    root, files, st, qrels, runs = medium
    assert len(runs) == 2_000_000
    mem = evaluate(qrels, runs, MEASURES, options=opts)
    # small blocks (many per worker), two processes: still the same table, bit for bit
    streamed = evaluate_store(st, qrels, MEASURES, options=opts, block_rows=160_000, workers=2)
    assert len(mem) > 240 * 25 * 100
    pd.testing.assert_frame_equal(mem, streamed, check_exact=True)


def test_medium_trec_output_and_summary(medium):
    root, files, st, qrels, runs = medium
    c = compute(qrels, runs, ["official"], EvalOptions())
    df = evaluate_store(st, qrels, ["official"], block_rows=400_000, workers=1, strings=True)
    assert trec_eval_lines(c) == trec_eval_lines_long(df, ["official"], strings=df.attrs["strings"])
    # topics with results but no judgments are reported, not evaluated
    assert len(df.attrs["notes"]["topics_without_judgments"]) == 160


def test_medium_pools_identical(medium, tmp_path):
    root, files, st, qrels, runs = medium
    pooled = [f"run{i:02d}" for i in range(1, 26, 2)]
    topics = sorted(runs["topic"].astype(str).unique())[::4]        # 100 topics keep the in-memory side quick
    for depth in (10, 100):
        a = pool_candidates(ranked_runs(runs, depth, pooled, topics), depth)
        b = pool_candidates_store(st, depth, pooled, topics, block_rows=40_000, workers=2)
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    cand = pool_candidates_store(st, 100, pooled, topics, workers=1)
    for strategy, budget in (("statap", 30), ("stratified", 0.1), ("depth", 20)):
        p1 = build_pool(runs, strategy, budget, depth=100, seed=5, pooled=pooled, topics=topics)
        p2 = build_pool(None, strategy, budget, depth=100, seed=5, pooled=pooled, candidates=cand)
        pd.testing.assert_frame_equal(p1.table, p2.table, check_exact=True)
    # the whole pool, streamed (static: one generator over streamed candidates; online: per topic block)
    from engine.pooling.store import build_pool_store
    p1 = build_pool(runs, "statap", 30, depth=50, seed=2, pooled=pooled)
    p2 = build_pool_store(st, "statap", 30, depth=50, seed=2, pooled=pooled, block_rows=80_000, workers=2)
    pd.testing.assert_frame_equal(p1.table, p2.table, check_exact=True)
    assert p1.spec == p2.spec
    # issue 39: candidate blocks sized by the rows read (many small blocks): the same pool file, byte for byte
    from engine.pooling import write_pool
    p3 = build_pool_store(st, "statap", 30, depth=50, seed=2, pooled=pooled, block_rows=16_000, workers=2)
    for k in ("a", "b"):
        (tmp_path / k).mkdir()
    files = [write_pool(tmp_path / k, "s", p).read_bytes() for k, p in (("a", p1), ("b", p3))]
    assert files[0] == files[1] and files[0].count(b"\n") == len(p1.table) + 1
    sub = runs[runs["topic"].astype(str).isin(set(topics))]
    for strategy in ("mtf", "hedge"):
        p1 = build_pool(sub, strategy, 15, depth=50, pooled=pooled, oracle=qrels)
        p2 = build_pool_store(st, strategy, 15, depth=50, pooled=pooled, oracle=qrels, block_rows=40_000, workers=2)
        t2 = p2.table[p2.table["topic"].astype(str).isin(set(topics))].reset_index(drop=True)
        pd.testing.assert_frame_equal(p1.table, t2, check_exact=True)
        assert len(t2) == 15 * len(topics)


def test_dask_executor_runs_the_blocks(medium):
    pytest.importorskip("distributed", reason="Dask (distributed) is in the test extras")
    from engine.evaluation.distributed import dask_executor
    root, files, st, qrels, runs = medium
    q = qrels[qrels["topic"].astype(str) < "10080"]
    mem = evaluate(q, runs[runs["topic"].astype(str) < "10080"], ["map", "P.10", "ndcg_cut.10"])
    with dask_executor(n_workers=2) as ex:
        df = evaluate_store(st, q, ["map", "P.10", "ndcg_cut.10"], block_rows=80_000, executor=ex)
    pd.testing.assert_frame_equal(mem, df, check_exact=True)


def test_medium_reductions_streamed_equal_in_memory(medium):
    from engine.stability.reduction import reduction_experiment, reduction_experiment_store
    root, files, st, qrels, runs = medium
    kw = dict(method="bv", levels=(50, 10), trials=2, seed=4)
    mem = reduction_experiment(qrels, runs, ["map", "bpref"], **kw)
    streamed = reduction_experiment_store(st, qrels, ["map", "bpref"], block_rows=240_000, workers=2, **kw)
    assert mem[["level", "trial", "measure", "judged"]].equals(streamed[["level", "trial", "measure", "judged"]])
    assert (mem["tau"] == streamed["tau"]).all() and (mem["tau_ap"] == streamed["tau_ap"]).all()
    np.testing.assert_allclose(streamed[["rms", "drift", "mean_score"]], mem[["rms", "drift", "mean_score"]],
                               rtol=0, atol=1e-12)
    assert mem["tau"].min() < 0.99          # the reductions do move the ranking


def test_medium_pool_bias_streamed_equal_in_memory(medium):
    from engine.stability.poolbias import leave_group_out, leave_manual_out, pool_bias_store
    root, files, st, qrels, runs = medium
    tags = [f"run{i:02d}" for i in range(1, 26)]
    meta = pd.DataFrame({"run": tags, "group": [f"g{(i - 1) // 5}" for i in range(1, 26)],
                         "type": ["manual" if i % 7 == 0 else "automatic" for i in range(1, 26)],
                         "pooled": [i % 9 != 0 for i in range(1, 26)]})
    q = qrels[qrels["topic"].astype(str) < "10160"]         # ~95 judged topics keep the in-memory side quick
    sub = runs[runs["topic"].astype(str) < "10160"]
    for mode, fn in (("group", leave_group_out), ("manual", leave_manual_out)):
        s1, d1 = fn(q, sub, meta, ["map", "P.10"], depth=20)
        s2, d2 = pool_bias_store(st, q, meta, ["map", "P.10"], mode=mode, depth=20, block_rows=120_000, workers=2)
        assert list(s1.columns) == list(s2.columns) and list(d1.columns) == list(d2.columns)
        exact = [c for c in d1.columns if d1[c].dtype.kind in "iOUb" or c in ("run", "group", "measure")]
        pd.testing.assert_frame_equal(d1[exact], d2[exact], check_dtype=False)
        num = [c for c in d1.columns if c not in exact]
        np.testing.assert_allclose(d2[num].to_numpy(float), d1[num].to_numpy(float), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(s2.drop(columns="measure").to_numpy(float),
                                   s1.drop(columns="measure").to_numpy(float), rtol=1e-9, atol=1e-12)
        assert d1["rank_change"].abs().sum() > 0           # leaving runs out does move them


def test_a_store_from_an_earlier_format_is_rebuilt_with_a_note_not_called_damaged(small):
    """A manifest of an earlier store format (here 2, before the per-topic lists were packed) is not
    damaged: the user is told the store is from an earlier version and is rebuilt; a damaged one still
    says damaged."""
    import json
    root, files = small
    RunStore(root).sync(files)
    mp = store_dir(root) / "manifest.json"
    m = json.loads(mp.read_text())
    for e in m["files"].values():                  # format 2 kept the per-topic lists as JSON lists
        if e.get("tag") is not None:
            e["topics"] = e["topics"].split(" ")
    m["format"] = 2
    mp.write_text(json.dumps(m))
    w = Warnings()
    rep = RunStore(root).sync(files, w)
    said = [str(x) for x in w]
    assert len(rep.ingested) == 2
    assert any("earlier version" in s and "ingested again" in s for s in said), said
    assert not any("damaged" in s for s in said), said
    assert RunStore(root).read(topics=["2"]).column("doc").to_pylist() == ["d3", "d2", "d1", "d9"]


def test_streamed_ingest_of_a_topic_spanning_many_pieces_scans_each_row_a_bounded_number_of_times(tmp_path,
                                                                                                 monkeypatch):
    """A topic longer than many text pieces is carried from piece to piece without being copied and
    scanned again with each piece (that was quadratic in the topic's length); the part equals the one
    the whole-file ingest writes."""
    import engine.evaluation.store.ingest as store_mod
    lines = [f"7 Q0 d{i % 997} {i + 1} {1.0 / (i + 1):.6f} s" for i in range(3000)]     # one topic, repeats
    lines += [f"8 Q0 d{i} {i + 1} 1.0 s" for i in range(10)]
    run = write(tmp_path / "r.txt", "\n".join(lines) + "\n")
    monkeypatch.setattr(store_mod, "CHUNK_BYTES", 512)          # about 60 pieces
    scanned = []
    real = store_mod.run_heads
    monkeypatch.setattr(store_mod, "run_heads", lambda col: scanned.append(len(col)) or real(col))
    streamed = store_mod.ingest_file(str(run), str(tmp_path / "a.parquet"), 500)
    assert sum(scanned) <= 4 * len(lines), sum(scanned)          # quadratic: ~30 times the rows
    monkeypatch.setattr(store_mod, "_ingest_stream", lambda *a: (_ for _ in ()).throw(store_mod._NotStreamable))
    whole = store_mod.ingest_file(str(run), str(tmp_path / "b.parquet"), 500)
    for e in (streamed, whole):
        e.pop("seconds")
    assert streamed == whole and any("retrieved twice" in x[2] for x in whole["warnings"])
    a, b = pq.read_table(tmp_path / "a.parquet"), pq.read_table(tmp_path / "b.parquet")
    assert a.equals(b) and a.num_rows == 997 + 10
    assert pq.read_metadata(tmp_path / "a.parquet").num_row_groups == pq.read_metadata(tmp_path / "b.parquet").num_row_groups
