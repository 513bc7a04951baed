"""NIST's TREC 2024 RAG answer checker (as ported in ragnarok): its 10 cases, kept as data in
tests/data/rag24_checker_cases.json with NIST's messages, give the same verdict (error, warning, ok)
from `cranfield nuggets check --profile rag24 --topics FILE` run as a separate process; every problem of
a line is reported; unanswered topics are warned about, at intake too."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import cli

CASES = json.loads((Path(__file__).parent / "data" / "rag24_checker_cases.json").read_text())["cases"]


def _messages(err: str, path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"error": [], "warning": []}
    for line in err.splitlines():
        m = re.match(rf"(error|warning): {re.escape(str(path))}(?::\d+)?: (.*)$", line)
        if m:
            out[m.group(1)].append(m.group(2))
    return out


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    d = tmp_path_factory.mktemp("rag24")
    topics = d / "topics.tsv"
    topics.write_text(CASES[0]["topics"])
    files = []
    for c in CASES:
        assert c["topics"] == CASES[0]["topics"]
        p = d / f"{c['name']}.jsonl"
        p.write_text(c["line"] + "\n")
        files.append(p)
    per = {}
    for c, p in zip(CASES, files):      # one process per case: the exit code is the case's verdict
        r = cli("nuggets", "check", "--profile", "rag24", "--topics", topics, p)
        assert "Traceback" not in r.text
        per[c["name"]] = (r, _messages(r.err, p))
    return per


def test_the_cases_are_nists_ten():
    assert len(CASES) == 10 and len({c["name"] for c in CASES}) == 10
    assert [c["nist_verdict"] for c in CASES].count("error") == 6


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_verdict_as_nists_checker(checked, case):
    r, msgs = checked[case["name"]]
    verdict = "error" if msgs["error"] else ("warning" if msgs["warning"] else "ok")
    assert verdict == case["nist_verdict"], (r.err, case["nist_errors"], case["nist_warnings"])
    assert r.rc == (3 if verdict == "error" else 0), r.text
    for level, text in case["ours"]:
        assert any(text in m for m in msgs[level]), (level, text, msgs)
    if case["same_error_count"]:
        assert len(msgs["error"]) == len(case["nist_errors"]), msgs["error"]
    else:
        assert len(msgs["error"]) > len(case["nist_errors"])    # every problem of the line, not only the first


def test_intake_warns_about_unanswered_topics(tmp_path):
    from engine.errors import Warnings
    from engine.nuggets.intake import submit_answers
    camp = tmp_path / "rag"
    assert cli("simulate", "--rag", "--out", camp, "--runs", "1", "--topics", "3", "--no-nuggets",
               "--seed", "2").rc == 0
    lines = (camp / "answers" / "rag01.jsonl").read_text().splitlines()
    one = tmp_path / "new.jsonl"
    one.write_text(lines[0].replace('"rag01"', '"new01"') + "\n")
    w = Warnings()
    acc = submit_answers(camp, [one], w, dry_run=True)
    assert [a.run for a in acc] == ["new01"]
    assert [str(x) for x in w] == [f"{one}: no accepted answer to 2 topic(s): q2, q3"]
