"""Pilot through the command line: simulate a RAG campaign, create nuggets, assign them for two answers
and see the leaderboard change (hand-computed values); intake limits; automatic assignment via the CLI."""
from __future__ import annotations

import json

import pytest

from cranfield.cli import main
from engine.nuggets.simulate import TruthEndpoint


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _board(capsys, camp, *extra):
    rc, out, _ = _run(capsys, "nuggets", "scores", str(camp), "--format", "json", *extra)
    assert rc == 0
    return {r["run"]: r for r in json.loads(out)}


@pytest.fixture
def camp(tmp_path, capsys):
    d = tmp_path / "rag"
    rc, out, _ = _run(capsys, "simulate", "--rag", "--out", str(d), "--runs", "3", "--topics", "2",
                      "--no-nuggets", "--seed", "5")
    assert rc == 0 and "3 answer runs x 2 topics" in out
    return d


def test_pilot_nuggets_assign_two_answers_leaderboard_changes(camp, capsys):
    for text, imp in (("the first fact", "vital"), ("the second fact", "okay"), ("the third fact", "vital")):
        rc, out, _ = _run(capsys, "nuggets", "add", str(camp), "q1", text, "--importance", imp, "--by", "ann",
                          *(["--seconds", "30"] if text == "the first fact" else []))
        assert rc == 0
    assert "nugget n3 (vital) added" in out
    rc, out, _ = _run(capsys, "nuggets", "list", str(camp))
    assert out.count("person") == 3 and "the second fact" in out
    before = _board(capsys, camp)
    assert set(before) == {"rag01", "rag02", "rag03"} and all(r["all"] == 0 for r in before.values())
    for run, labels in (("rag01", "spn"), ("rag02", "pss")):
        for nug, lab in zip(("n1", "n2", "n3"), labels):
            assert _run(capsys, "nuggets", "assign", str(camp), run, "q1", nug, lab, "--by", "ann",
                        "--seconds", "12")[0] == 0
    after = _board(capsys, camp)
    # rag01: support, partial, not -> all 1.5/3, strict_vital 1/2, vital 1/2, weighted (1 + .5*.5)/2.5
    assert after["rag01"]["all"] == pytest.approx(0.5) and after["rag01"]["strict_vital"] == pytest.approx(0.5)
    assert after["rag01"]["weighted"] == pytest.approx(0.5)
    # rag02: partial, support, support -> all 2.5/3, vital 1.5/2, weighted (.5 + 1 + .5)/2.5
    assert after["rag02"]["all"] == pytest.approx(2.5 / 3) and after["rag02"]["vital"] == pytest.approx(0.75)
    assert after["rag02"]["weighted"] == pytest.approx(0.8) and after["rag03"]["all"] == 0
    rc, out, _ = _run(capsys, "nuggets", "scores", str(camp))
    lines = [l.split()[0] for l in out.splitlines()[2:]]
    assert lines == ["rag02", "rag01", "rag03"]
    # undo one assignment: rag02's n2 becomes unassigned (not_support): all 1.5/3
    assert _run(capsys, "nuggets", "undo", str(camp), "rag02", "q1", "n2")[0] == 0
    assert _board(capsys, camp)["rag02"]["all"] == pytest.approx(0.5)
    # an edit changes importance: n2 vital -> rag01 vital = (1 + .5) / 3
    assert _run(capsys, "nuggets", "edit", str(camp), "q1", "n2", "--importance", "vital")[0] == 0
    assert _board(capsys, camp)["rag01"]["vital"] == pytest.approx(0.5)
    rc, out, _ = _run(capsys, "nuggets", "history", str(camp), "q1", "n2")
    assert "create" in out and "edit" in out and "importance vital" in out
    rc, out, _ = _run(capsys, "nuggets", "cost", str(camp))
    assert "human: 5 assignments, 5 timed, mean 12.0 s" in out
    # 3 nuggets of q1 x 3 answers = 9 pairs, 5 assigned: 4 left x 12 s = 48 s; spent 5 x 12 s + 30 s = 90 s
    assert "human: 5/9 (answer, nugget) pairs assigned; 4 left, about 0.01 h at the measured pace" in out
    assert "nugget creation by people: 3 operations, 1 timed, 30.0 s each" in out
    from engine.nuggets.campaign import time_model
    m = time_model(camp, "human")
    assert m["hours_to_finish"] == pytest.approx(48 / 3600) and m["hours_spent"] == pytest.approx(90 / 3600)
    assert m["nugget_ops"] == 3 and m["nugget_ops_timed"] == 1 and m["seconds_per_nugget"] == 30


def test_assign_refuses_unknown_answer_or_nugget(camp, capsys):
    _run(capsys, "nuggets", "add", str(camp), "q1", "a fact")
    rc, _, err = _run(capsys, "nuggets", "assign", str(camp), "nope", "q1", "n1", "s")
    assert rc == 3 and "run nope has no answer to topic q1" in err
    rc, _, err = _run(capsys, "nuggets", "assign", str(camp), "rag01", "q1", "n7", "s")
    assert rc == 3 and "no nugget n7 in force" in err


def test_submit_answer_runs_checks_limits(camp, tmp_path, capsys):
    src = (camp / "answers" / "rag01.jsonl").read_text().replace('"rag01"', '"new01"')
    f = tmp_path / "new01.jsonl"
    f.write_text(src)
    cfg = camp / "campaign.yaml"
    cfg.write_text(cfg.read_text().replace("max_words: 400", "max_words: 5"))
    rc, _, err = _run(capsys, "submit", str(camp), str(f))
    assert rc == 3 and f"{f}:1: answer of run new01 to topic q1 has" in err and "answers.max_words is 5" in err
    assert not (camp / "answers" / "new01.jsonl").exists()
    cfg.write_text(cfg.read_text().replace("max_words: 5", "max_words: 400"))
    rc, out, _ = _run(capsys, "submit", str(camp), str(f))
    assert rc == 0 and "answer run new01 (2 answers, 2 topics)" in out
    assert (camp / "answers" / "new01.jsonl").read_text() == src
    bad = tmp_path / "bad.jsonl"
    bad.write_text(src.replace('"citations": [0]', '"citations": [9]', 1))
    rc, _, err = _run(capsys, "nuggets", "check", str(bad))
    assert rc == 3 and f"{bad}:1: sentence" in err and "points outside the references" in err


def test_auto_assign_through_cli(tmp_path, capsys):
    d = tmp_path / "rag"
    assert _run(capsys, "simulate", "--rag", "--out", str(d), "--runs", "3", "--topics", "2", "--seed", "5")[0] == 0
    with TruthEndpoint(d, error=0.0) as ep:
        rc, out, err = _run(capsys, "nuggets", "auto", str(d), "--endpoint", ep.url, "--model", "fake",
                            "--support", "--backoff", "0.01")
        assert rc == 0, err
        assert "source llm-fake" in out and "from 0 requests" not in out
        rc, out, _ = _run(capsys, "nuggets", "auto", str(d), "--endpoint", ep.url, "--model", "fake")
        assert "from 0 requests" in out and ep.unknown == 0
    from engine.nuggets.simulate import import_truth
    import_truth(d, "truth")
    rc, out, _ = _run(capsys, "nuggets", "agree", str(d), "truth", "llm-fake")
    assert rc == 0 and "kappa 1.0000" in out and "tau over 3 runs (all) 1.0000" in out
    auto = _board(capsys, d, "--source", "llm-fake", "--support-source", "llm-fake")
    true = _board(capsys, d, "--source", "truth", "--support-source", "truth")
    for run in true:
        for m in ("all", "weighted", "support_precision", "support_recall"):
            assert auto[run][m] == pytest.approx(true[run][m])


def test_campaign_yaml_answers_limits_are_checked(tmp_path, capsys):
    d = tmp_path / "c"
    d.mkdir()
    (d / "campaign.yaml").write_text("name: x\nanswers: {max_words: 0, max_lines: 3}\n")
    from engine.campaign.campaign import load_campaign
    from engine.errors import FormatError
    with pytest.raises(FormatError) as ei:
        load_campaign(d)
    text = str(ei.value)
    assert "campaign.yaml:2: answers.max_words: must be >= 1, got 0" in text
    assert "answers.max_lines: unknown key" in text


def test_answer_files_recognized_by_name_or_first_bytes(tmp_path):
    import gzip
    from engine.nuggets.intake import is_answer_file
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 r\n")
    ans = tmp_path / "answers.txt.gz"
    ans.write_bytes(gzip.compress(b'\n  {"run_id": "r"}\n'))
    named = tmp_path / "x.jsonl"
    named.write_text("")
    assert [is_answer_file(p) for p in (run, ans, named, tmp_path / "missing")] == [False, True, True, False]
