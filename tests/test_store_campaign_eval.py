"""`cranfield eval --campaign` with the store built reads the run parts across the cores and prints exactly
what the text-file path prints (issue 28): run by run in worker processes by the file path's kernel
(engine.evaluation.seam.campaign_trec_lines, "parts"), or by blocks of runs in threads when that path
declines (engine.evaluation.blocks, "blocks")."""
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


@pytest.fixture
def parts(monkeypatch) -> list[bool]:
    """Per call of the run-by-run store path: whether it evaluated (else the blocks did)."""
    calls: list[bool] = []
    real = seam.campaign_trec_lines

    def counted(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got
    monkeypatch.setattr(seam, "campaign_trec_lines", counted)
    return calls


def _take(path: str, monkeypatch) -> None:
    """Send `eval --campaign` down one store path."""
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 0)
    if path == "blocks":
        monkeypatch.setattr(seam, "campaign_trec_lines", lambda *a, **k: None)


def _took(path: str, spy: list[int], parts: list[bool]) -> bool:
    if path == "parts":
        return parts == [True] and spy == []
    return len(spy) == 1 and spy[0] < 6 * 9 * 120           # the block path, more than one block


@pytest.mark.parametrize("path", ["parts", "blocks"])
@pytest.mark.parametrize("q", [[], ["-q"]])
def test_store_blocks_equal_text_files_byte_for_byte(camp, capsys, monkeypatch, spy, parts, q, path):
    qrels = str(camp / "judgments" / "qrels.txt")
    runs = [str(p) for p in sorted((camp / "runs").glob("*"))]
    text_out, text_err = _cli(capsys, ["eval", "-m", "runid", "-m", "official", *q, qrels, *runs])
    _take(path, monkeypatch)
    out, err = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", *q])
    assert _took(path, spy, parts)
    assert out == text_out
    assert "zz9" in text_err and "zz9" in err                # the unjudged topic noted by both
    assert len([x for x in out.splitlines() if x.split("\t")[1] == "all"]) == 6 * 30   # runid + 29 measures
    assert len({x.split("\t")[1] for x in out.splitlines()}) == (10 if q else 1)      # 9 topics + all


@pytest.mark.parametrize("path", ["parts", "blocks"])
@pytest.mark.parametrize("q", [[], ["-q"], ["-c", "-q"]])
def test_store_blocks_equal_in_memory_campaign(camp, capsys, monkeypatch, spy, parts, q, path):
    """The campaign's own measures (graded gains: ndcg) and warnings, the store paths against the whole
    table (-c: each run, or each block of runs, fills its own runs' missing topics)."""
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 10 ** 12)
    mem = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-m", "ndcg_cut.10", *q])
    assert spy == [] and parts == [False]
    parts.clear()
    _take(path, monkeypatch)
    got = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-m", "ndcg_cut.10", *q])
    assert _took(path, spy, parts)
    assert got == mem
    assert "not in the topics file" in got[1]                # the run-reading warnings kept on this path


def test_small_store_stays_in_memory(camp, capsys, spy):
    _cli(capsys, ["eval", "--campaign", str(camp), "-m", "map"])
    assert spy == []                                         # below PARALLEL_ROWS: no worker processes


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err


def _small(root: Path) -> Path:
    return write_campaign(simulate(4, 6, 100, seed=5), root / "camp", pool_depth=20)


@pytest.fixture(scope="module")
def odd(tmp_path_factory) -> Path:
    """A campaign whose run file `renamed`'s tag differs from its campaign.yaml key, whose other run file
    retrieves a document twice (a warning the store's manifest keeps) and whose judgments use a grade the
    relevance scale does not list (a warning of the judgments, given before the store's)."""
    import yaml
    root = _small(tmp_path_factory.mktemp("odd"))
    cfg_path = root / "campaign.yaml"
    cfg = yaml.safe_load(cfg_path.read_text())
    tag = next(iter(cfg["runs"]))
    cfg["runs"]["renamed"] = cfg["runs"].pop(tag)
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    other = sorted(p for p in (root / "runs").glob("*") if not p.name.startswith(tag))[0]
    first = other.read_text().split("\n", 1)[0].split()
    with other.open("a") as f:
        f.write(" ".join(first[:3] + ["999", "-5", first[5]]) + "\n")
    with (root / "judgments" / "qrels.txt").open("a") as f:
        f.write(f"{first[0]} 0 {first[2]}-not-retrieved 5\n")
    assert main(["ingest", str(root)]) == 0
    return root


@pytest.mark.parametrize("measures", [["official"], ["official", "Q", "ndcgx"]])
def test_parts_path_applies_renames_gains_and_reports_the_manifests_warnings(odd, capsys, monkeypatch, spy, parts,
                                                                             measures):
    ms = [x for m in measures for x in ("-m", m)]
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 10 ** 12)
    with monkeypatch.context() as m:           # the in-memory path alone: its warnings in its order
        m.setattr(seam, "campaign_trec_lines", lambda *a, **k: None)
        mem = _cli(capsys, ["eval", "--campaign", str(odd), *ms, "-q"])
    _take("parts", monkeypatch)
    got = _cli(capsys, ["eval", "--campaign", str(odd), *ms, "-q"])
    assert parts[-1] is True and spy == []
    assert got == mem
    assert "runid                 \tall\trenamed" in got[0]
    assert "evaluated as run 'renamed'" in got[1] and "retrieved twice" in got[1]
    assert "judgments use grade(s) [5]" in got[1]
    if "Q" in measures:      # the campaign's gains (0, 1, 3) reach Q and ndcgx: not the grades as gains
        qrels = str(odd / "judgments" / "qrels.txt")
        files = _cli(capsys, ["eval", *ms, "-q", qrels, *map(str, sorted((odd / "runs").glob("*")))])[0]
        ndcgx = lambda out: sorted(x for x in out.splitlines() if x.startswith("ndcgx"))  # noqa: E731
        assert ndcgx(files) != ndcgx(got[0])


def test_parts_path_declines_judgments_it_would_have_to_merge(tmp_path, capsys, monkeypatch, spy, parts):
    root = _small(tmp_path)
    q = (root / "judgments" / "qrels.txt").read_text().splitlines()
    (root / "judgments" / "later.qrels").write_text(
        "".join(f"{a} {b} {c} {1 - int(d) if d in '01' else d}\n" for a, b, c, d in (x.split() for x in q[::3])))
    assert main(["ingest", str(root)]) == 0
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 10 ** 12)
    mem = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    _take("parts", monkeypatch)
    got = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    assert parts[-1] is False and len(spy) == 1               # two judgment files: the blocks merge them
    assert got == mem


def test_parts_path_repairs_a_truncated_part_and_refuses_a_damaged_page_as_the_blocks_do(tmp_path, capsys,
                                                                                       monkeypatch, spy, parts):
    from engine.evaluation.store import RunStore
    root = _small(tmp_path)
    assert main(["ingest", str(root)]) == 0
    _take("parts", monkeypatch)
    before = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official"])[0]
    st = RunStore(root)
    run = st.runs[1]
    part = st.part(run)
    part.write_bytes(part.read_bytes()[:-100])               # truncated: re-ingested from its run file
    out, err = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    assert out == before and run in err and "re-ingested" in err
    assert parts[-1] is True
    part = RunStore(root).part(run)
    data = bytearray(part.read_bytes())
    at = 8 + (len(data) - 8) // 3                             # a data page, same size: the checksum fails
    data[at:at + 64] = bytes(b ^ 0xFF for b in data[at:at + 64])
    part.write_bytes(bytes(data))
    rc, out, err = _run(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    assert parts[-1] is False                                 # the parts path leaves it to the blocks
    _take("blocks", monkeypatch)
    assert (rc, out, err) == _run(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    assert rc != 0 and str(part) in err and "--rebuild" in err


@pytest.mark.parametrize("path", ["parts", "blocks"])
def test_store_paths_refuse_judgments_linked_outside_the_campaign(tmp_path, capsys, monkeypatch, spy, path):
    root = _small(tmp_path)
    assert main(["ingest", str(root)]) == 0
    q = root / "judgments" / "qrels.txt"
    outside = tmp_path / "elsewhere.txt"
    outside.write_bytes(q.read_bytes())
    q.unlink()
    q.symlink_to(outside)
    _take(path, monkeypatch)
    rc, out, err = _run(capsys, ["eval", "--campaign", str(root), "-m", "official"])
    assert rc != 0 and out == "" and "outside the campaign directory" in err and "qrels.txt" in err
    assert spy == []                                          # refused before any run is read


def test_parts_path_applies_the_campaigns_options(tmp_path, capsys, monkeypatch, spy, parts):
    """campaign.yaml's evaluation.depth (-M) and binary_threshold (-l), and a command line flag over them."""
    import yaml
    root = _small(tmp_path)
    cfg = yaml.safe_load((root / "campaign.yaml").read_text())
    cfg["evaluation"]["depth"] = 30
    cfg["relevance"]["binary_threshold"] = 2
    (root / "campaign.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert main(["ingest", str(root)]) == 0
    qrels = str(root / "judgments" / "qrels.txt")
    runs = [str(p) for p in sorted((root / "runs").glob("*"))]
    for flags, same_as in (([], ["-M", "30", "-l", "2"]), (["-M", "5"], ["-M", "5", "-l", "2"])):
        monkeypatch.setattr(seam, "PARALLEL_ROWS", 10 ** 12)
        with monkeypatch.context() as m:
            m.setattr(seam, "campaign_trec_lines", lambda *a, **k: None)
            mem = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official", *flags])
        _take("parts", monkeypatch)
        got = _cli(capsys, ["eval", "--campaign", str(root), "-m", "official", *flags])
        assert parts[-1] is True and got == mem
        files = _cli(capsys, ["eval", "-m", "runid", "-m", "official", *same_as, qrels, *runs])[0]
        plain = _cli(capsys, ["eval", "-m", "runid", "-m", "official", qrels, *runs])[0]
        assert got[0] == files != plain


@pytest.mark.parametrize("run_rows, parts_path", [(10**9, True), (1, False)])
def test_a_large_store_of_small_runs_is_read_run_by_run(camp, capsys, monkeypatch, parts, run_rows, parts_path):
    """Above LARGE_ROWS, runs of at most RUN_ROWS rows each are still evaluated one run per worker (each part
    read once; by topic blocks, a thousand runs of 50 topics were read once per block: 54 s against 8.5 s of
    CPU, 2.2 GB against 0.2 GB at 600 runs); a store with a larger run goes by topic blocks. The same bytes."""
    want, _ = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-q"])
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(seam, "LARGE_ROWS", 100)
    monkeypatch.setattr(seam, "RUN_ROWS", run_rows)
    parts.clear()
    out, _ = _cli(capsys, ["eval", "--campaign", str(camp), "-m", "official", "-q"])
    assert parts == [parts_path]
    assert out == want
