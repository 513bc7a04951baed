"""Issue 14: real SIGKILLs of `cranfield ingest`, `judgments add` and `pool` (a small seeded version of
benchmarks/kills.py, whose 100-kill figures are in docs/reliability.md), and the races they found."""
from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kills():
    spec = importlib.util.spec_from_file_location("kills_bench", ROOT / "benchmarks" / "kills.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kills_bench"] = mod          # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_ingest_sigkills_give_reference_numbers_or_refusal(kills, tmp_path):
    st = kills.ingest_kills(tmp_path, 10, seed=5, runs=6, topics=20, depth=300, in_process=True, log=lambda s: None)
    assert st.kills == 10, st
    assert st.committed_damaged == 0 and st.tracebacks == 0 and st.wrong_numbers == 0 and st.other_failures == 0, \
        st.notes
    assert st.right_numbers + st.refusals == 10
    assert st.recovered == 10 and st.leftovers_after_recovery == 0, st.notes


def test_judgment_add_sigkills_lose_nothing_acknowledged(kills, tmp_path):
    st = kills.judgment_kills(tmp_path, 10, seed=5, max_delay=0.8, log=lambda s: None)
    assert st.kills == 10 and st.acknowledged > 0
    assert st.lost == 0 and st.unreadable == 0 and st.not_clean_after_next_add == 0, st.notes


def test_pool_sigkills_keep_file_and_log_together(kills, tmp_path):
    st = kills.pool_kills(tmp_path, 8, seed=5, runs=4, topics=10, depth=60, log=lambda s: None)
    assert st.kills == 8 and st.committed + st.not_built == 8
    assert st.inconsistent == 0 and st.concurrent_failed == 0, st.notes


def test_concurrent_pool_build_does_not_remove_anothers_pending_table(tmp_path, monkeypatch):
    """Found by the kill benchmark's design: write_pool B used to run recover_pools while A's table was
    pending (written, log entry not yet appended) and deleted it; A then logged a pool with no file.
    The pools lock makes B wait."""
    import pandas as pd

    import engine.pooling.files as pooling
    from engine.pooling import build_pool, pool_log, read_pool, write_pool
    runs = pd.DataFrame({"run": ["r"] * 4, "topic": ["1"] * 4, "doc": list("abcd"),
                         "rank": [1, 2, 3, 4], "score": [4.0, 3.0, 2.0, 1.0]})
    pa_, pb = build_pool(runs, "depth", depth=2), build_pool(runs, "depth", depth=3)
    real = pooling._append_pool_record
    other: dict = {}

    def slow_append(path, rec):
        if rec["name"] == "a":          # while a's table is pending, b is built in another thread
            t = threading.Thread(target=lambda: other.setdefault("path", write_pool(tmp_path, "b", pb)))
            t.start()
            other["thread"] = t
            time.sleep(0.3)
        real(path, rec)
    monkeypatch.setattr(pooling, "_append_pool_record", slow_append)
    write_pool(tmp_path, "a", pa_)
    other["thread"].join(10)
    assert [r["name"] for r in pool_log(tmp_path)] == ["a", "b"]
    assert read_pool(tmp_path / "pools" / "pool-a.tsv")["doc"].tolist() == pa_.table["doc"].tolist()
    assert read_pool(tmp_path / "pools" / "pool-b.tsv")["doc"].tolist() == pb.table["doc"].tolist()
    assert not list((tmp_path / "pools").glob("*.pending"))


def _pool_p_then_q_killed_after_entry(root: Path, monkeypatch, second: str) -> None:
    """Pool p (depth 1) built, then pool `second` (depth 3) killed right after its log entry (the commit
    point), before the rename: it exists only as its `.pending` file."""
    import pandas as pd

    import engine.pooling.files as pooling
    from engine.pooling import build_pool, write_pool
    runs = pd.DataFrame({"run": ["r"] * 3, "topic": ["1"] * 3, "doc": list("abc"),
                         "rank": [1, 2, 3], "score": [3.0, 2.0, 1.0]})
    write_pool(root, "p", build_pool(runs, "depth", depth=1))
    real = pooling._append_pool_record

    def entry_then_die(path, rec):
        real(path, rec)
        raise KeyboardInterrupt
    monkeypatch.setattr(pooling, "_append_pool_record", entry_then_die)
    with pytest.raises(KeyboardInterrupt):
        write_pool(root, second, build_pool(runs, "depth", depth=3))
    monkeypatch.undo()
    assert (root / "pools" / f"pool-{second}.tsv.pending").is_file()


def test_read_pool_finishes_a_build_killed_after_its_log_entry(tmp_path, monkeypatch):
    from engine.pooling import read_pool
    _pool_p_then_q_killed_after_entry(tmp_path, monkeypatch, "p")
    assert read_pool(tmp_path / "pools" / "pool-p.tsv")["doc"].tolist() == ["a", "b", "c"]   # not the old 1


def test_pool_listings_see_a_pool_killed_after_its_log_entry(tmp_path, monkeypatch):
    """A first pool built, then a second one killed between its log entry (the commit point) and the
    rename. The judging desk's active pool, the automatic judge's pairs and the TUI's pool table list
    files through `list_pools`, which recovers first, so they follow the committed pool q, not the
    older p."""
    from engine.judging.sessions import active_pool
    from engine.pooling import list_pools
    _pool_p_then_q_killed_after_entry(tmp_path, monkeypatch, "q")
    assert not (tmp_path / "pools" / "pool-q.tsv").exists()
    os.utime(tmp_path / "pools" / "pool-p.tsv", (time.time() - 60, time.time() - 60))  # p is older
    name, table = active_pool(tmp_path)
    assert name == "q" and table["doc"].tolist() == ["a", "b", "c"]
    assert [p.name for p in list_pools(tmp_path)] == ["pool-p.tsv", "pool-q.tsv"]
    assert not list((tmp_path / "pools").glob("*.pending"))


def test_campaign_cache_sees_in_place_edit_keeping_size_and_mtime(tmp_path):
    """The evaluation cache (and the TUI's) keyed files by size and mtime only: a run edited in place
    with both kept returned the old numbers. ctime cannot be set back, so it is now in the key."""
    from engine.campaign.campaign import load_campaign
    from cranfield.cli import main
    root = tmp_path / "c"
    assert main(["init", str(root)]) == 0
    run = root / "runs" / "r.txt"
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    (root / "judgments").mkdir(exist_ok=True)
    (root / "judgments" / "q.qrels").write_text("1 0 a 0\n1 0 b 1\n")
    first = load_campaign(root).evaluate(["map"])
    assert first["value"].tolist() == [0.5]
    st = run.stat()
    run.write_text("1 Q0 a 1 1.0 r\n1 Q0 b 2 2.0 r\n")            # same size, b now first
    os.utime(run, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run.stat().st_size == st.st_size and run.stat().st_mtime_ns == st.st_mtime_ns
    assert load_campaign(root).evaluate(["map"])["value"].tolist() == [1.0]
