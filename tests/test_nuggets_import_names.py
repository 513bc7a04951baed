"""Issue 34 (item 5, a leftover): run ids arriving through `cranfield nuggets import` (TREC and
nuggetizer assignment files) meet the one name rule (engine.util.names.name_problem): a path separator, a
leading dot, a control character or 250 characters is refused with the rule and file:line, nothing written."""
from __future__ import annotations

import json

import pytest

from _cli import cli

NUGGETS = "q1\tN-1\tvital\tThe first fact\n"
BAD_RUNS = ["a/b", ".hidden", "x\x1b]0;pwned\x07y", "r" * 250]


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    d = tmp_path_factory.mktemp("names") / "rag"
    r = cli("simulate", "--rag", "--out", d, "--runs", "2", "--topics", "1", "--no-nuggets", "--seed", "11",
            in_process=True)
    assert r.rc == 0, r.text
    nf = d.parent / "nuggets.tsv"
    nf.write_text(NUGGETS)
    assert cli("nuggets", "import", d, nf, in_process=True).rc == 0
    return d


def _refused(r, path, line):
    assert r.rc not in (0, 1) and "Traceback" not in r.text, r.text[-2000:]
    assert f"{path}:{line}:" in r.err and "without / or \\" in r.err and "not starting with '.'" in r.err, r.err
    assert "\x1b" not in r.text, "the control character reached the terminal"


@pytest.mark.parametrize("run", BAD_RUNS, ids=["slash", "dot", "escape", "long"])
def test_trec_assignment_run_id_meets_the_name_rule(camp, tmp_path, run):
    af = tmp_path / "assign.tsv"
    af.write_text(f"rag01\tq1\tN-1\t2\n{run}\tq1\tN-1\t1\n")
    before = sorted(p.name for p in (camp / "nuggets").rglob("*"))
    r = cli("nuggets", "import", camp, af, "--source", "nist")
    _refused(r, af, 2)
    assert sorted(p.name for p in (camp / "nuggets").rglob("*")) == before


@pytest.mark.parametrize("run", BAD_RUNS, ids=["slash", "dot", "escape", "long"])
def test_nuggetizer_assignment_run_id_meets_the_name_rule(camp, tmp_path, run):
    af = tmp_path / "assignments.jsonl"
    af.write_text(json.dumps({"query": "q", "qid": "q1", "answer_text": "a", "response_length": 1, "run_id": run,
                              "nuggets": [{"text": "The first fact", "importance": "vital",
                                           "assignment": "support"}]}) + "\n")
    r = cli("nuggets", "import", camp, af, "--source", "nz")
    _refused(r, af, 1)
