"""One table writer (issue 35): `format_table` escapes what would break each format, and every Markdown
writer (eval --format markdown, table, report pages) goes through it, so a run tag `a|b` parses back (with a
CommonMark + GFM table parser, markdown-it) to the right number of columns and to the tag itself."""
from __future__ import annotations

import csv
import html
import io
import re

import pandas as pd
import pytest
import yaml
from _cli import cli

from engine.formats.text_tables import Raw, format_table

TRICKY = ["a|b", "c\\d", "x\\|y", "two\nlines", "cr\rx", "tab\there", 'q"uote', "50%_{x}"]


def md_tables(text: str) -> list[list[list[str]]]:
    """Every table of a Markdown text as rows of cells, each cell as the text a reader sees."""
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark").enable("table")
    tables, cur, row, in_cell = [], None, None, False
    for t in md.parse(text):
        if t.type == "table_open":
            cur = []
        elif t.type == "table_close":
            tables.append(cur)
        elif t.type == "tr_open":
            row = []
        elif t.type == "tr_close":
            cur.append(row)
        elif t.type in ("th_open", "td_open"):
            in_cell = True
            row.append("")
        elif t.type in ("th_close", "td_close"):
            in_cell = False
        elif t.type == "inline" and in_cell:
            shown = md.renderInline(t.content).replace("<br>", "\n")
            row[-1] = html.unescape(re.sub(r"<[^>]+>", "", shown))
    return tables


def test_markdown_cells_round_trip():
    df = pd.DataFrame({"run": TRICKY, "v": range(len(TRICKY))})
    [table] = md_tables(format_table(df, "markdown"))
    assert all(len(r) == 2 for r in table)
    want = [t.replace("\r", "\n") for t in TRICKY]
    assert [r[0] for r in table[1:]] == want and table[0] == ["run", "v"]
    # a Raw cell is markup: written as is
    [table] = md_tables(format_table(pd.DataFrame({"m": [Raw("**0.5**")]}, dtype=object), "markdown"))
    assert table[1] == ["0.5"]


@pytest.mark.parametrize("fmt,sep", [("csv", ","), ("tsv", "\t")])
def test_csv_tsv_quote_tabs_and_line_breaks(fmt, sep):
    df = pd.DataFrame({"run": TRICKY, "v": range(len(TRICKY))})
    rows = list(csv.reader(io.StringIO(format_table(df, fmt), newline=""), delimiter=sep))
    assert rows[0] == ["run", "v"] and all(len(r) == 2 for r in rows)
    assert [r[0] for r in rows[1:]] == [t.replace("\r", "\n") for t in TRICKY]
    mixed = pd.DataFrame({"n": pd.Series([1, "a\rb"], dtype=object)})        # not every cell a string
    assert list(csv.reader(io.StringIO(format_table(mixed, fmt), newline=""), delimiter=sep)) == [["n"], ["1"],
                                                                                             ["a\nb"]]


def test_latex_escapes():
    tex = format_table(pd.DataFrame({"run": ["a|b", "c\\d", "two\n\nlines", "50%_{x}"]}), "latex")
    body = tex.split("\\hline\n")[2]
    assert body.splitlines() == [r"a\textbar{}b \\", r"c\textbackslash{}d \\", r"two  lines \\",
                                 r"50\%\_\{x\} \\"]


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    """A simulated campaign plus run `a|b` of group `x|y` (a copy of asterA2 under that tag)."""
    from engine.simulation.campaigns import simulate, write_campaign
    out = write_campaign(simulate(6, 4, 30, seed=1), tmp_path_factory.mktemp("pipe") / "camp", pool_depth=10)
    text = (out / "runs" / "asterA2.txt").read_text()
    (out / "runs" / "ab.txt").write_text(text.replace(" asterA2\n", " a|b\n"))
    y = out / "campaign.yaml"
    conf = yaml.safe_load(y.read_text())
    conf["runs"]["a|b"] = {"group": "x|y", "type": "automatic", "pooled": False, "file": "runs/ab.txt"}
    y.write_text(yaml.safe_dump(conf, sort_keys=False))
    return out


def _check(text: str, n_tables: int | None = None) -> list[list[list[str]]]:
    tables = md_tables(text)
    assert tables and (n_tables is None or len(tables) == n_tables), text
    for t in tables:
        assert all(len(r) == len(t[0]) for r in t), t
    return tables


def _ok(r):
    assert r.rc == 0 and "Traceback" not in r.text, r.text
    return r.out


def test_eval_markdown(camp):
    [t] = _check(_ok(cli("eval", "--campaign", camp, "--format", "markdown", "-m", "map", "-m", "P.10")), 1)
    assert t[0] == ["run", "map", "P_10"] and "a|b" in [r[0] for r in t[1:]]
    [t] = _check(_ok(cli("eval", "--campaign", camp, "--format", "markdown", "-m", "map", "-q", in_process=True)), 1)
    assert sum(r[0] == "a|b" for r in t[1:]) == 4


def test_table_markdown(camp):
    [t] = _check(_ok(cli("table", camp, "-m", "map", "--baseline", "a|b")), 1)
    assert t[0] == ["run", "map", "map +", "map -"] and t[1][0] == "a|b (baseline)"
    [t] = _check(_ok(cli("table", camp, "-m", "map", in_process=True)), 1)
    assert any(r[0].endswith(") a|b") for r in t[1:])


def test_report_pages(camp, tmp_path):
    _ok(cli("report", camp, "--out", tmp_path, "-m", "map"))
    [t] = _check((tmp_path / "index.md").read_text(encoding="utf-8"), 1)
    row = next(r for r in t[1:] if r[1] == "a|b")
    assert row[2] == "x|y" and len(row) == 4
    page = next(p for p in tmp_path.glob("a-b*.md"))
    tables = _check(page.read_text(encoding="utf-8"), 3)
    assert tables[0][1][0] == "map" and [r[0] for r in tables[2][1:]] == ["401", "402", "403", "404"]


def test_latex_writers_keep_the_columns(camp):
    for args in (("eval", "--campaign", camp, "--format", "latex", "-m", "map", "-m", "P.10"),
                 ("table", camp, "-m", "map", "--baseline", "a|b", "--format", "latex")):
        out = _ok(cli(*args, in_process=True))
        spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", out).group(1)
        rows = [ln for ln in out.splitlines() if ln.endswith(r"\\") and "multicolumn" not in ln]
        assert len(rows) == 8 and all(ln.count(" & ") == len(spec) - 1 for ln in rows), out
        assert any(ln.startswith(r"a\textbar{}b") for ln in rows), out
