"""Leaderboard `e`: the table as shown with each measure's significance letters, and the significance table,
written to the campaign's exports/ folder (no --export-dir: today a TypeError on None); the letters and
the table are those `cranfield table --run ...` prints for the same runs in the same order."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tui.app import CranfieldApp
from tui.testing import exported, press, private_copy, run_async, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"
CLI = "cranfield.cli"


def cli_table(camp: Path, runs: list[str], fmt: str) -> str:
    args = [sys.executable, "-m", CLI, "table", str(camp), "--format", fmt]
    for r in runs:
        args += ["--run", r]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@run_async
async def test_leaderboard_export_writes_marks_and_the_significance_table(tmp_path, monkeypatch):
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    monkeypatch.chdir(tmp_path)
    app = CranfieldApp(camp)                               # no --export-dir: the campaign's exports/
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "e")
        errors = [n for n in app.notices if n.severity == "error"]
        assert not errors, errors
        measures = list(app.model.scores.measures)
    out = camp.resolve() / "exports"
    files = {(stem, x): exported(out, stem, x) for stem in ("leaderboard", "leaderboard-significance")
             for x in ("csv", "md", "tex", "about.json")}
    assert all(len(f) == 1 for f in files.values()) and len(list(out.iterdir())) == 8, sorted(out.iterdir())
    f = {k: v[0] for k, v in files.items()}
    assert app.last_export.startswith(f"wrote 12 rows to {out}/: {f['leaderboard', 'csv'].name}")
    board = pd.read_csv(f["leaderboard", "csv"], keep_default_na=False)
    runs = board["run"].astype(str).tolist()
    assert board["letter"].tolist() == [chr(ord("a") + i) for i in range(12)]
    ref = pd.read_csv(io.StringIO(cli_table(camp, runs, "csv")), keep_default_na=False)
    assert ref["run"].astype(str).tolist() == runs
    for m in measures:
        assert board[f"{m} mark"].astype(str).tolist() == ref[f"{m} mark"].astype(str).tolist()
        assert board[m].round(4).tolist() == ref[m].round(4).tolist()
    assert any(board[f"{m} mark"].astype(str).str.len().sum() for m in measures)   # some pair differs
    # the significance table is the CLI's (its columns in the leaderboard's measure order)
    sig = pd.read_csv(f["leaderboard-significance", "csv"], keep_default_na=False)
    pd.testing.assert_frame_equal(sig, ref[list(sig.columns)])
    assert sorted(sig.columns) == sorted(ref.columns)

    def md_rows(text: str) -> dict[str, dict[str, str]]:
        lines = [ln for ln in text.splitlines() if ln.startswith("|")]
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        return {r[0]: dict(zip(head, r)) for r in
                ([c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:])}
    md, ref_md = f["leaderboard-significance", "md"].read_text(), cli_table(camp, runs, "markdown")
    assert md_rows(md) == md_rows(ref_md) and len(md_rows(md)) == 12
    assert md.splitlines()[-1] == ref_md.splitlines()[-1]             # the legend


@run_async
async def test_leaderboard_export_tests_the_pairs_in_the_background(tmp_path, monkeypatch):
    """The tests of every pair (4,950 pairs x 4 measures on 100 runs) run in a worker with progress: the
    screen answers keys meanwhile, and the files are written when they are done."""
    import threading

    import engine.campaign.tables as tables
    release, started = threading.Event(), threading.Event()
    real = tables.compare_scores

    def slow(*a, **kw):
        started.set()
        release.wait(10)                                   # held until the test has looked at the screen
        return real(*a, **kw)
    monkeypatch.setattr(tables, "compare_scores", slow)
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    app = CranfieldApp(camp, export_dir=tmp_path / "out")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        await pilot.press("e")
        assert started.wait(5)
        await pilot.pause(0)
        bar = app.screen.query_one("JobBar")
        assert bar.has_class("running") and "escape cancels" in str(bar.query_one("#job-text").render())
        assert not (tmp_path / "out").exists()              # nothing written before the tests are done
        await pilot.press("s")                               # the screen still answers keys
        release.set()
        await settle(pilot)
        assert not bar.has_class("running")
        assert not [n for n in app.notices if n.severity == "error"]
    for stem in ("leaderboard", "leaderboard-significance"):
        assert [len(exported(tmp_path / "out", stem, x)) for x in ("csv", "md", "tex", "about.json")] == [1] * 4


def _md_cells(line: str) -> list[str]:
    """A Markdown table row's cells (a `\\|` is a character of its cell, not a border)."""
    import re
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


@run_async
async def test_a_run_tag_with_a_bar_keeps_the_markdown_table_whole(tmp_path):
    """The leaderboard written by `e` through the engine's table writer: a run tagged `a|b` is one cell of
    its row, every row has the header's cells, and the CSV and LaTeX files hold the same run."""
    import re
    camp = private_copy(DEMO, tmp_path / "demo")
    f = camp / "runs" / "asterA1.txt"
    f.write_text(re.sub(r" asterA1$", " a|b", f.read_text(), flags=re.M))
    cfg = camp / "campaign.yaml"
    cfg.write_text(cfg.read_text().replace("  asterA1:\n", '  "a|b":\n', 1))
    app = CranfieldApp(camp, export_dir=tmp_path / "out")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "e")
        await settle(pilot)
        board = app.screen.export_table()[1]
    md = [ln for ln in exported(tmp_path / "out", "leaderboard", "md")[0].read_text().splitlines()
          if ln.startswith("|")]                                # after the line saying what the file is
    head = _md_cells(md[0])
    rows = [_md_cells(ln) for ln in md[2:]]
    assert len(rows) == 12 and all(len(r) == len(head) for r in rows), md
    runs = [dict(zip(head, r))["run"] for r in rows]
    assert "a|b" in runs and runs == board["run"].astype(str).tolist() and head[1:3] == ["letter", "run"]
    csv = pd.read_csv(exported(tmp_path / "out", "leaderboard", "csv")[0], keep_default_na=False)
    assert csv["run"].astype(str).tolist() == runs
    assert r"a\textbar{}b" in exported(tmp_path / "out", "leaderboard", "tex")[0].read_text()   # LaTeX's escape of |


def test_export_formats_are_the_engine_writer_s():
    """CSV, Markdown and LaTeX are format_table's; the TUI only words flags yes/no and typesets ±."""
    from engine.formats.text_tables import format_table
    from tui.export import render
    df = pd.DataFrame({"run": ["x_1", "y"], "pooled": [True, False], "map": [0.123456, float("nan")],
                       "map ±": [0.01, 0.02]})
    shown = df.assign(pooled=["yes", "no"])
    assert render(df, "markdown") == format_table(shown, "markdown")
    assert "| x_1 | yes | 0.1235 | 0.0100 |" in render(df, "markdown")
    assert render(df, "latex") == format_table(shown, "latex").replace("±", r"$\pm$")
    assert r"map $\pm$" in render(df, "latex") and r"x\_1" in render(df, "latex")
    assert render(df, "csv") == format_table(df, "csv")
