"""Topic blocks of the run store cut where row groups end: no row group is read by two blocks when the
runs' row groups allow it, blocks stay within their size, topics keep their order, and the streamed
evaluation is the in-memory one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from engine.evaluation import store as store_mod
from engine.evaluation.blocks import evaluate_store, plan_blocks, sorted_topics
from engine.evaluation.evaluate import evaluate
from engine.formats.qrels import read_qrels
from engine.formats.runs import read_runs
from engine.evaluation.store import RunStore


def _campaign(root: Path, depth_of) -> list[Path]:
    rng = np.random.default_rng(11)
    files = []
    for r in range(3):
        lines = [f"{t:03d} Q0 d{t}-{i} {i + 1} {100 - i + rng.random():.4f} r{r}\n"
                 for t in range(1, 41) for i in range(depth_of(r, t))]
        f = root / "runs" / f"r{r}.txt"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("".join(lines))
        files.append(f)
    q = root / "judgments" / "qrels.txt"
    q.parent.mkdir(parents=True, exist_ok=True)
    q.write_text("".join(f"{t:03d} 0 d{t}-{i} {int(rng.integers(0, 3))}\n" for t in range(1, 41) for i in range(0, 60, 3)))
    return files


def _row_groups_read(st: RunStore, plan) -> list[tuple[str, int]]:
    return [(r, g) for _, parts in plan for r, _, gs in parts for g in gs]


def test_blocks_are_cut_where_every_run_starts_a_row_group(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod.ingest_file, "__defaults__", (250,))    # row groups of 5 topics x 50 rows
    files = _campaign(tmp_path, lambda r, t: 50)
    st = RunStore(tmp_path)
    st.sync(files, workers=1)
    topics = sorted_topics(st.topics())
    for max_rows in (800, 1000, 1700, 2500):
        blocks = st.topic_blocks(topics, max_rows)
        assert [t for b in blocks for t in b] == topics
        assert all(len(b) * 50 * 3 <= max_rows for b in blocks)
        plan = plan_blocks(st, topics, st.runs, max_rows)
        read = _row_groups_read(st, plan)
        assert len(read) == len(set(read)) == len(st.index.groupby(["run", "row_group"]))   # each once
    # a block filled up to 1000 rows (6 topics) would split a row group: cut after 5
    assert [len(b) for b in st.topic_blocks(topics, 1000)] == [5] * 8


def test_uneven_runs_cut_where_fewest_row_groups_are_split_and_streaming_is_exact(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod.ingest_file, "__defaults__", (200,))
    files = _campaign(tmp_path, lambda r, t: 20 + (7 * r + 3 * t) % 45)      # runs' row groups end apart
    st = RunStore(tmp_path)
    st.sync(files, workers=1)
    topics = sorted_topics(st.topics())
    blocks = st.topic_blocks(topics, 900)
    assert [t for b in blocks for t in b] == topics and len(blocks) > 3
    rows = st.index.groupby("topic")["rows"].sum()
    assert all(rows[b].sum() <= 900 or len(b) == 1 for b in blocks)
    qrels = read_qrels(tmp_path / "judgments" / "qrels.txt")
    want = evaluate(qrels, read_runs(files), ["map", "P.5", "ndcg", "bpref"])
    got = evaluate_store(st, qrels, ["map", "P.5", "ndcg", "bpref"], block_rows=900, workers=1)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)


def test_no_block_of_several_topics_outgrows_its_size_whatever_the_row_groups():
    """A cut made before the topic that overflows the block leaves the topics after it to be cut again:
    a block of several topics never holds more than `max_rows` rows (generated indexes: uneven topics,
    empty ones, row groups of one or several topics, several runs)."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.lists(st.tuples(st.integers(0, 12), st.booleans()), min_size=1, max_size=9),
                    min_size=1, max_size=3), st.integers(1, 20))
    def check(runs, max_rows):
        n = max(len(r) for r in runs)
        topics = [f"t{i:02d}" for i in range(n)]
        rows = []
        for k, per in enumerate(runs):
            rg = 0
            for i, (c, new_group) in enumerate(per):
                rg += bool(new_group and i)
                rows.append((f"r{k}", topics[i], c, rg))
        fake = type("Index", (), {})()
        fake.index = pd.DataFrame(rows, columns=["run", "topic", "rows", "row_group"])
        blocks = RunStore.topic_blocks(fake, topics, max_rows)
        assert [t for b in blocks for t in b] == topics
        per_topic = fake.index.groupby("topic")["rows"].sum().reindex(topics, fill_value=0)
        assert all(len(b) == 1 or per_topic[b].sum() <= max_rows for b in blocks), blocks

    check()
