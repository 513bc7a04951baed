"""One natural topic order on every face (issue 35): topic ids `2`, `10`, `q2`, `q10`, `²` (a digit to
str.isdigit but not to int) and `٣` (Arabic-Indic three) in every command that lists topics, run as
subprocesses: no traceback, every topic listed, in `natural_key` order where the command orders topics."""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from _cli import cli

from engine.util.names import natural_sorted

IDS = {"401": "2", "402": "10", "403": "q2", "404": "q10", "405": "\u00b2", "406": "\u0663"}
NATURAL = ["2", "\u0663", "10", "q2", "q10", "\u00b2"]


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    """A simulated campaign with its topics 401..406 renamed to IDS (topics, runs, judgments, yaml)."""
    from engine.simulation.campaigns import simulate, write_campaign
    out = write_campaign(simulate(4, 6, 20, seed=2), tmp_path_factory.mktemp("topics") / "camp", pool_depth=10)
    for p in out.rglob("*"):
        if p.is_file():
            p.write_text(re.sub(r"(?<![\w-])(40[1-6])(?!\w)", lambda m: IDS[m.group(1)], p.read_text()))
    return out


def _ok(r):
    assert r.rc == 0 and "Traceback" not in r.text, r.text
    return r.out


def _first_column(text: str, after: str, stop: str | None = None) -> list[str]:
    """First words of the lines after the header line starting with `after`, up to a blank line or `stop`."""
    lines = text.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.strip().startswith(after))
    out = []
    for ln in lines[i + 1:]:
        if not ln.strip() or (stop and ln.strip().startswith(stop)):
            break
        if not set(ln.strip()) <= {"-", " "}:           # not a text table's rule line
            out.append(ln.split()[0])
    return out


def test_natural_order_itself():
    assert natural_sorted(IDS.values()) == NATURAL


def test_judgments_summary(camp):
    out = _ok(cli("judgments", "summary", camp))
    assert _first_column(out, "topic ") == NATURAL


def test_status_plain(camp):
    out = _ok(cli("status", camp, "--plain"))
    assert _first_column(out.split("\nTopics\n", 1)[1], "topic ", stop="total") == NATURAL


def test_eval_per_topic(camp):
    out = _ok(cli("eval", "--campaign", camp, "-q", "-m", "map", "--format", "csv"))
    got = pd.read_csv(io.StringIO(out), dtype={"run": str, "topic": str})
    assert set(got["topic"]) == set(IDS.values()) and got["map"].notna().all()


def test_report_pages(camp, tmp_path):
    _ok(cli("report", camp, "--out", tmp_path / "rep", "-m", "map"))
    page = (tmp_path / "rep" / "asterA1.md").read_text(encoding="utf-8")
    rows = page.split("## Per topic: map", 1)[1].split("\n\n")[1].splitlines()[2:]
    assert [r.split("|")[1].strip() for r in rows] == NATURAL


def test_ndeval(camp, tmp_path):
    q = pd.read_csv(camp / "judgments" / "qrels.txt", sep=" ", header=None, names=["topic", "it", "doc", "grade"],
                    dtype=str)
    div = tmp_path / "div.txt"
    div.write_text("".join(f"{t} {1 + (int(g) > 1)} {d} {int(int(g) > 0)}\n" for t, d, g in
                           zip(q["topic"], q["doc"], q["grade"])), encoding="utf-8")
    out = _ok(cli("eval", "-R", "diversity", div, camp / "runs" / "asterA1.txt", in_process=True))
    got = pd.read_csv(io.StringIO(out), dtype=str)
    assert got["topic"].tolist() == NATURAL + ["amean"]


def test_gd_ndcg_with_a_superscript_cutoff(camp):
    r = cli("eval", "--campaign", camp, "-m", "gd_ndcg@\u00b2", in_process=True)
    assert r.rc != 0 and "Traceback" not in r.text
    assert "unknown measure 'gd_ndcg@\u00b2'" in r.err
    out = _ok(cli("eval", "--campaign", camp, "-q", "-m", "gd_ndcg@3", "--format", "csv", in_process=True))
    assert set(pd.read_csv(io.StringIO(out), dtype={"topic": str})["topic"]) == set(IDS.values())


def test_superscript_grade_key_is_refused_with_file_and_line(tmp_path):
    p = tmp_path / "campaign.yaml"
    p.write_text("name: x\nrelevance:\n  scale:\n    0: {gain: 0}\n    \u00b2: {gain: 1}\n", encoding="utf-8")
    r = cli("check", tmp_path)
    assert r.rc != 0 and "Traceback" not in r.text
    assert "campaign.yaml:5: relevance.scale.\u00b2: a grade must be an integer >= 0" in r.err


def test_compare_per_topic(camp):
    out = _ok(cli("compare", camp, "asterA1", "asterA3", "-m", "map", "--per-topic"))
    assert _first_column(out.split("\nper topic:\n", 1)[1], "topic ") == NATURAL
