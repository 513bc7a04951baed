"""Figures that cannot go stale: every figure of docs/figures.md (the README's "Measured figures" until
issue 35) names the script (or test) that measures it, and every benchmark script it names is one
`benchmarks/all.py` runs."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures.md"
SCRIPT = re.compile(r"benchmarks/([A-Za-z0-9_]+\.py)")
TEST = re.compile(r"tests/(test_[A-Za-z0-9_]+\.py)")


def _all_module():
    spec = importlib.util.spec_from_file_location("benchmarks_all", ROOT / "benchmarks" / "all.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod


def figures_section(text: str) -> str:
    """docs/figures.md below its "# Measured figures" title."""
    m = re.search(r"^# Measured figures\n(.*)", text, flags=re.S | re.M)
    assert m, "docs/figures.md has no '# Measured figures' title"
    return m.group(1)


def figure_rows(section: str) -> list[tuple[str, str]]:
    """(what, the row's text) of every table row of the section (header and rule lines skipped)."""
    rows = []
    for line in section.splitlines():
        if not line.startswith("|") or re.match(r"^\|[\s|:-]+\|$", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0].lower() in ("what", "figure"):
            continue
        rows.append((cells[0], line))
    return rows


def missing_sources(section: str, registered: set[str]) -> list[str]:
    """What is wrong with the section: rows naming no existing script or test, scripts not registered."""
    bad = []
    for what, line in figure_rows(section):
        scripts = SCRIPT.findall(line)
        tests = TEST.findall(line)
        if not scripts and not tests:
            bad.append(f"{what!r} names no script (benchmarks/X.py) or test (tests/test_X.py)")
        for s in scripts:
            if not (ROOT / "benchmarks" / s).is_file():
                bad.append(f"{what!r} names benchmarks/{s}, which does not exist")
        for t in tests:
            if not (ROOT / "tests" / t).is_file():
                bad.append(f"{what!r} names tests/{t}, which does not exist")
    for s in sorted(set(SCRIPT.findall(section)) - {"all.py"}):       # all.py: the runner itself
        if s not in registered:
            bad.append(f"benchmarks/{s} is named by docs/figures.md but not run by benchmarks/all.py")
    return bad


def test_every_figure_names_its_script():
    registered = {f.script for f in _all_module().FIGURES}
    bad = missing_sources(figures_section(FIGURES.read_text()), registered)
    assert not bad, "\n".join(bad)


def test_registered_scripts_exist_and_take_their_arguments():
    """Every script all.py runs exists, and its quick arguments parse (argparse would exit 2)."""
    for f in _all_module().FIGURES:
        path = ROOT / "benchmarks" / f.script
        assert path.is_file(), f.script
        text = path.read_text()
        for a in (*f.quick, *f.full):
            if a.startswith("--"):
                assert f'"{a}"' in text, f"{f.script} takes no {a}"
        if f.json:
            assert '"--json"' in text, f"{f.script} takes no --json"


@pytest.mark.parametrize("row, ok", [
    ("| x | 1 s | `python benchmarks/batch.py` |", True),
    ("| x | 1 s | `pytest tests/test_store.py` |", True),
    ("| x | 1 s | `cranfield experiment pools` |", False),
    ("| x | 1 s | `docs/scale.md` |", False),
    ("| x | 1 s | `python benchmarks/no_such_script.py` |", False),
    ("| x | 1 s | `python benchmarks/scale.py` |", False),      # exists, but not registered below
])
def test_the_check_itself(row, ok):
    section = "| what | figure | command |\n|---|---|---|\n" + row + "\n"
    assert (missing_sources(section, {"batch.py"}) == []) is ok


def test_figures_table_is_all_py_output():
    """docs/figures.md's generated table is, byte for byte, the last full table `benchmarks/all.py` wrote,
    and all.py's --docs writes into that page (the README keeps no figures table)."""
    mod = _all_module()
    assert mod.FIGURES_DOC == FIGURES
    block = mod.doc_block(FIGURES.read_text())
    assert block is not None, f"docs/figures.md has no {mod.BEGIN} ... {mod.END} block"
    written = (ROOT / "benchmarks" / "results" / "all-full.md").read_text()
    assert block == written, "docs/figures.md's table differs from benchmarks/results/all-full.md: run all.py --docs"
    assert mod.doc_block((ROOT / "README.md").read_text()) is None


def test_merge_keeps_rows_not_rerun_and_the_block_is_replaced():
    mod = _all_module()
    old = [{"key": "batch", "v": 1}, {"key": "startup", "v": 1}, {"key": "gone", "v": 1}]
    rows = mod.merged([{"key": "startup", "v": 2}], old)
    assert rows == [{"key": "batch", "v": 1}, {"key": "startup", "v": 2}]     # registry order, unknown dropped
    page = f"a\n{mod.BEGIN}\nold\n{mod.END}\nb\n"
    new = mod.with_block(page, "| t |\n")
    assert new == f"a\n{mod.BEGIN}\n| t |\n{mod.END}\nb\n" and mod.doc_block(new) == "| t |\n"
    with pytest.raises(SystemExit):
        mod.with_block("no markers", "x")
