"""Issue 34 item 5: names that become file names or terminal text follow one rule at intake
(engine.util.names.name_problem) and are printed escaped (engine.util.names.shown)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import assert_clean_refusal, cli, demo_copy

ESC_ID = "r\x1b]0;pwned\x07\x1b[2J"


@pytest.fixture(scope="module")
def rag(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("rag") / "rag"
    r = cli("simulate", "--rag", "--out", d, "--runs", "2", "--topics", "2", "--no-nuggets", "--seed", "5", in_process=True)
    assert r.rc == 0, r.text
    return d


def _answers(rag: Path, tmp: Path, run_id: str) -> Path:
    src = next(iter(sorted((rag / "answers").glob("*.jsonl"))))
    lines = []
    for ln in src.read_text().splitlines():
        obj = json.loads(ln)
        if "run_id" in obj:
            obj["run_id"] = run_id
        else:
            obj["metadata"]["run_id"] = run_id
        lines.append(json.dumps(obj))
    f = tmp / "a.jsonl"
    f.write_text("\n".join(lines) + "\n")
    return f


@pytest.mark.parametrize("rid, why", [("a/b", "path separator"), (".hidden", "starts with '.'"),
                                      ("x" * 150, "150 characters long"), (ESC_ID, "control character")])
def test_answer_run_ids_breaking_the_rule_are_refused_at_submit(rag, tmp_path, rid, why):
    before = sorted(p.name for p in (rag / "answers").rglob("*"))
    r = cli("submit", rag, _answers(rag, tmp_path, rid))
    assert_clean_refusal(r, why, "1 to 100 characters")
    assert "\x1b" not in r.text and "\x07" not in r.text
    assert sorted(p.name for p in (rag / "answers").rglob("*")) == before


def test_nuggets_check_prints_an_escaped_run_id(rag, tmp_path):
    r = cli("nuggets", "check", _answers(rag, tmp_path, ESC_ID))
    assert "\x1b" not in r.text and "\x07" not in r.text and "\\x1b" in r.text


def test_nuggets_scores_prints_escaped_ids(rag, tmp_path):
    import shutil
    c = tmp_path / "c"
    shutil.copytree(rag, c)
    f = _answers(rag, tmp_path, ESC_ID)
    (c / "answers" / "esc.jsonl").write_text(f.read_text())
    r = cli("nuggets", "scores", c)
    assert "\x1b" not in r.text and "\x07" not in r.text


def test_a_submitted_run_tag_longer_than_the_rule_is_refused(tmp_path):
    c = demo_copy(tmp_path / "c")
    src = c / "runs" / "asterA1.txt"
    tag = "t" * 150
    new = tmp_path / "long.txt"
    new.write_text("".join(ln.rsplit(" ", 1)[0] + f" {tag}\n" for ln in src.read_text().splitlines()))
    r = cli("submit", c, new, in_process=True)
    assert_clean_refusal(r, "150 characters long")


def test_report_with_a_250_character_run_tag_writes_every_page_and_the_index(tmp_path):
    c = demo_copy(tmp_path / "c")
    src = c / "runs" / "asterA1.txt"
    tag = "t" * 250
    (c / "runs" / "long.txt").write_text("".join(ln.rsplit(" ", 1)[0] + f" {tag}\n"
                                                 for ln in src.read_text().splitlines()))
    out = tmp_path / "rep"
    r = cli("report", c, "--out", out)
    assert r.rc == 0, r.text
    assert (out / "index.html").is_file() and (out / "index.md").is_file()
    assert all(len(p.name.encode()) <= 255 for p in out.iterdir())
    assert tag in (out / "index.html").read_text()


def test_report_pages_show_control_characters_escaped(tmp_path):
    c = demo_copy(tmp_path / "c")
    src = c / "runs" / "asterA1.txt"
    (c / "runs" / "esc.txt").write_text("".join(ln.rsplit(" ", 1)[0] + " e\x1b[2Jx\n"
                                                for ln in src.read_text().splitlines()))
    out = tmp_path / "rep"
    r = cli("report", c, "--out", out, in_process=True)
    assert r.rc == 0, r.text
    for p in out.iterdir():
        assert "\x1b" not in p.read_text(), p
    assert "e\\x1b[2Jx" in (out / "index.md").read_text()


def test_pool_names_follow_the_rule(tmp_path):
    c = demo_copy(tmp_path / "c")
    r = cli("pool", c, "--strategy", "depth", "--depth", "2", "--name", "p" * 150)
    assert_clean_refusal(r, "pool name")
    assert not any(len(p.name) > 120 for p in (c / "pools").glob("*"))


def test_the_rule_and_the_display_escape():
    from engine.util.names import name_problem, shown
    for ok in ("asterA1", "run.1+x", "UDInfolabWEB2", "2024-145979", "t" * 100, "épreuve", "検索"):
        assert name_problem(ok) is None, ok
    for bad in ("", "a/b", "a\\b", ".x", "t" * 101, "a\x00b", "a\x1bb", "a\nb", "a\tb", "a\ud800", "a\x9bb"):
        assert name_problem(bad) is not None, bad
    assert shown("a\x1b[2Jb\x07\ud800\n") == "a\\x1b[2Jb\\x07\\ud800\\x0a"
    assert shown("a\tb\n", keep="\n\t") == "a\tb\n"


def test_init_refuses_a_campaign_name_with_control_characters(tmp_path):
    r = cli("init", tmp_path / "c", "--name", "bad\x1b]0;x\x07")
    assert_clean_refusal(r, "campaign name", "control character")
    assert "\x1b" not in r.text and not (tmp_path / "c" / "campaign.yaml").exists()


def test_allow_outside_holds_for_one_in_process_command(tmp_path, capsys, monkeypatch):
    import os

    from cranfield.cli import main
    monkeypatch.delenv("CRANFIELD_ALLOW_OUTSIDE", raising=False)
    main(["status", str(tmp_path / "none"), "--allow-outside", str(tmp_path)])
    assert "CRANFIELD_ALLOW_OUTSIDE" not in os.environ
