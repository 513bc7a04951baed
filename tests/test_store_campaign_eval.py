"""`cranfield eval --campaign` with the store built reads the run parts by topic blocks across the cores
(engine.evaluation.seam, ranked=False) and prints exactly what the text-file path prints (issue 28)."""
from __future__ import annotations

from pathlib import Path

import pytest

import engine.evaluation.blocks as blocks
import engine.evaluation.seam as seam
from cranfield.cli import main
from engine.simulation.campaigns import simulate, write_campaign


@pytest.fixture(scope="module")
def camp(tmp_path_factory) -> Path:
    root = write_campaign(simulate(6, 9, 120, seed=3), tmp_path_factory.mktemp("c") / "camp", pool_depth=20)
    run = sorted((root / "runs").glob("*"))[0]
    tag = run.read_text().split("\n", 1)[0].split()[5]
    with run.open("a") as f:   # a topic nobody judged and the topics file does not list
        f.write("".join(f"zz9 Q0 extra{i} {i + 1} {10 - i} {tag}\n" for i in range(3)))
    assert main(["ingest", str(root)]) == 0
    return root


def _cli(capsys, argv: list[str]) -> tuple[str, str]:
    capsys.readouterr()
    assert main(argv) == 0
    got = capsys.readouterr()
    return got.out, got.err


@pytest.fixture
def spy(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = blocks.evaluate_store

    def counted(*a, **k):
        calls.append(k["block_rows"])
        return real(*a, **k)
    monkeypatch.setattr(blocks, "evaluate_store", counted)
    monkeypatch.setattr(seam.os, "cpu_count", lambda: 2)
    return calls


@pytest.mark.parametrize("q", [[], ["-q"]])
def test_store_blocks_equal_text_files_byte_for_byte(camp, capsys, monkeypatch, spy, q):
    qrels = str(camp / "judgments" / "qrels.txt")
    runs = [str(p) for p in sorted((camp / "runs").glob("*"))]
    text_out, text_err = _cli(capsys, ["eval", "-m", "runid", "-m", "official", *q, qrels, *runs])
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 0)
    out, err = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", *q])
    assert len(spy) == 1 and spy[0] < 6 * 9 * 120           # the block path, more than one block
    assert out == text_out
    assert "zz9" in text_err and "zz9" in err                # the unjudged topic noted by both
    assert len([x for x in out.splitlines() if x.split("\t")[1] == "all"]) == 6 * 30   # runid + 29 measures
    assert len({x.split("\t")[1] for x in out.splitlines()}) == (10 if q else 1)      # 9 topics + all


@pytest.mark.parametrize("q", [[], ["-q"], ["-c", "-q"]])
def test_store_blocks_equal_in_memory_campaign(camp, capsys, monkeypatch, spy, q):
    """The campaign's own measures (graded gains: ndcg) and warnings, blocks against the whole table
    (-c: each block of runs fills its own runs' missing topics)."""
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 10 ** 12)
    mem = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-m", "ndcg_cut.10", *q])
    assert spy == []
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 0)
    got = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-m", "ndcg_cut.10", *q])
    assert len(spy) == 1
    assert got == mem
    assert "not in the topics file" in got[1]                # the run-reading warnings kept on this path


def test_small_store_stays_in_memory(camp, capsys, spy):
    _cli(capsys, ["eval", "--campaign", str(camp), "-m", "map"])
    assert spy == []                                         # below PARALLEL_ROWS: no worker processes
