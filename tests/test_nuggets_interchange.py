"""Nugget interchange: nuggetizer's nugget and assignment files and TREC's tab-separated nugget and
assignment files imported into a campaign (each command a separate process), scores equal to
nuggetizer's own scoring (a test-only oracle) and to NIST's rules by hand, exported byte-identical,
re-import adds nothing, ambiguous or bad input refused with file:line."""
from __future__ import annotations

import json
import random

import pytest
from _cli import cli

nuggetizer_metrics = pytest.importorskip("nuggetizer.core.metrics")

LABELS = ("support", "partial_support", "not_support")


@pytest.fixture
def camp(tmp_path):
    d = tmp_path / "rag"
    r = cli("simulate", "--rag", "--out", d, "--runs", "3", "--topics", "3", "--no-nuggets", "--seed", "11")
    assert r.rc == 0, r.text
    return d


def _answers(camp):
    from engine.nuggets.campaign import campaign_answers
    return campaign_answers(camp)


def _nuggetizer_files(camp, tmp_path):
    """A nugget file and an assignment file as nuggetizer writes them (json.dumps(record) + newline)."""
    rng = random.Random(4)
    answers = _answers(camp)
    queries = {a.topic: a.query for a in answers}
    nuggets = {}
    lines = []
    for t in sorted(queries):
        ns = [{"text": f"fact {k} of topic {t}" + (" \u2013 caf\u00e9" if k == 2 else ""),
               "importance": "vital" if k % 2 else "okay"} for k in range(1, rng.randint(3, 6))]
        ns.append({"text": f"fact 1 of topic {t}", "importance": "vital"})     # the same text twice
        nuggets[t] = ns
        lines.append(json.dumps({"query": queries[t], "qid": t, "nuggets": ns}) + "\n")
    nf = tmp_path / "nuggets.jsonl"
    nf.write_text("".join(lines))
    recs = []
    for a in answers:
        assigned = [{**n, "assignment": rng.choice(LABELS)} for n in nuggets[a.topic]]
        recs.append({"query": queries[a.topic], "qid": a.topic, "answer_text": a.text,
                     "response_length": a.response_length, "run_id": a.run, "nuggets": assigned})
    af = tmp_path / "assignments.jsonl"
    af.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return nf, af, recs


def test_nuggetizer_files_round_trip_and_score_as_nuggetizer(camp, tmp_path):
    nf, af, recs = _nuggetizer_files(camp, tmp_path)
    r = cli("nuggets", "import", camp, nf, af)
    assert r.rc == 0, r.text
    n_nug = sum(len(json.loads(x)["nuggets"]) for x in nf.read_text().splitlines())
    assert f"(nuggetizer-nuggets): {n_nug} nuggets imported for 3 topic(s); 0 already there" in r.out
    assert f"(nuggetizer-assignments): {len(recs) and sum(len(x['nuggets']) for x in recs)} assignments " \
           f"imported into source nuggetizer" in r.out
    again = cli("nuggets", "import", camp, nf, af)
    assert again.rc == 0 and again.out.count("nothing new") == 2, again.text
    # scores per answer: nuggetizer's own calculate_nugget_scores on the same records
    r = cli("nuggets", "scores", camp, "--source", "nuggetizer", "--per-topic", "--format", "json",
            in_process=True)
    assert r.rc == 0, r.text
    ours = {(x["run"], x["topic"]): x for x in json.loads(r.out)}      # printed to 10 decimals
    assert len(ours) == len(recs) == 9
    from engine.nuggets.campaign import per_topic_scores
    exact = per_topic_scores(camp, "nuggetizer").set_index(["run", "topic"])
    for rec in recs:
        m = nuggetizer_metrics.calculate_nugget_scores(rec["qid"], rec["nuggets"])
        o = ours[(rec["run_id"], rec["qid"])]
        assert o["unassigned"] == 0 and o["nuggets"] == len(rec["nuggets"])
        want = (m.strict_vital_score, m.strict_all_score, m.vital_score, m.all_score)
        assert (o["strict_vital"], o["strict_all"], o["vital"], o["all"]) == pytest.approx(want, abs=1e-10)
        e = exact.loc[(rec["run_id"], rec["qid"])]
        assert (e["strict_vital"], e["strict_all"], e["vital"], e["all"]) == pytest.approx(want, abs=1e-15)
    # run means: nuggetizer's calculate_global_metrics over each run's records
    r = cli("nuggets", "scores", camp, "--source", "nuggetizer", "--format", "json", in_process=True)
    board = {x["run"]: x for x in json.loads(r.out)}
    for run in board:
        g = nuggetizer_metrics.calculate_global_metrics([x for x in recs if x["run_id"] == run])
        assert board[run]["all"] == pytest.approx(g["all_score"], abs=1e-10)
        assert board[run]["strict_vital"] == pytest.approx(g["strict_vital_score"], abs=1e-10)
    # out again, byte-identical
    out = tmp_path / "out"
    out.mkdir()
    r = cli("nuggets", "export", camp, "--format", "nuggetizer-nuggets", "-o", out / "n.jsonl")
    assert r.rc == 0, r.text
    assert (out / "n.jsonl").read_bytes() == nf.read_bytes()
    r = cli("nuggets", "export", camp, "--format", "nuggetizer-assignments", "--source", "nuggetizer")
    assert r.rc == 0 and r.out.encode() == af.read_bytes()
    # provenance: each nugget names its file, format, line and position
    r = cli("nuggets", "list", camp, "--format", "json", in_process=True)
    assert {x["provenance"] for x in json.loads(r.out)} == {"imported"}
    from engine.nuggets.store import fold_nuggets, nugget_log
    o = next(iter(fold_nuggets(nugget_log(camp)).values()))["origin"]
    assert o["format"] == "nuggetizer-nuggets" and o["line"] == 1 and o["index"] == 0
    assert o["file"] == str(nf.resolve()) and len(o["sha256"]) == 64


NIST_NUGGETS = "q1\tN-1\tvital\tThe first fact\nq1\tN-2\tokay\tThe second fact\nq1\tN-3\tvital\tThe third fact\n"
NIST_ASSIGN = "rag01\tq1\tN-1\t2\nrag01\tq1\tN-2\t1\nrag01\tq1\tN-3\t0\nrag02\tq1\tN-1\t1\nrag02\tq1\tN-2\t2\n" \
              "rag02\tq1\tN-3\tsupport\n"


def test_trec_files_scores_by_nists_rules_and_round_trip(camp, tmp_path):
    nf, af = tmp_path / "nuggets.tsv", tmp_path / "assign.tsv"
    nf.write_text(NIST_NUGGETS)
    af.write_text(NIST_ASSIGN)
    r = cli("nuggets", "import", camp, nf, af, "--source", "nist")
    assert r.rc == 0, r.text
    assert "3 nuggets imported" in r.out and "6 assignments imported into source nist" in r.out
    r = cli("nuggets", "scores", camp, "--source", "nist", "--per-topic", "--format", "json", in_process=True)
    got = {(x["run"], x["topic"]): x for x in json.loads(r.out)}
    # rag01: full, partial, none -> All (1 + .5 + 0)/3, Vital (1 + 0)/2, strict All 1/3, strict Vital 1/2
    a = got[("rag01", "q1")]
    assert (a["all"], a["vital"], a["strict_all"], a["strict_vital"]) == pytest.approx((0.5, 0.5, 1 / 3, 0.5))
    # rag02: partial, full, full -> All 2.5/3, Vital (.5 + 1)/2, strict All 2/3, strict Vital 1/2
    b = got[("rag02", "q1")]
    assert (b["all"], b["vital"], b["strict_all"], b["strict_vital"]) == pytest.approx((2.5 / 3, .75, 2 / 3, .5))
    assert got[("rag03", "q1")]["all"] == 0 and got[("rag03", "q1")]["unassigned"] == 3
    assert cli("nuggets", "export", camp, "--format", "trec-nuggets").out == NIST_NUGGETS
    assert cli("nuggets", "export", camp, "--format", "trec-assignments", "--source", "nist").out == NIST_ASSIGN
    r = cli("nuggets", "import", camp, af, "--source", "nist", in_process=True)
    assert "nothing new into source nist; all 6 assignments are already in the store" in r.out
    # the same assignments written as nuggetizer's file (answer text and length from the campaign's answers)
    # score the same under nuggetizer's own scoring
    r = cli("nuggets", "export", camp, "--format", "nuggetizer-assignments", "--source", "nist", in_process=True)
    recs = [json.loads(x) for x in r.out.splitlines()]
    assert [(x["run_id"], x["qid"]) for x in recs] == [("rag01", "q1"), ("rag02", "q1")]
    answers = {(a.run, a.topic): a for a in _answers(camp)}
    for x in recs:
        a = answers[(x["run_id"], x["qid"])]
        assert x["answer_text"] == a.text and x["response_length"] == a.response_length and x["query"] == a.query
        m = nuggetizer_metrics.calculate_nugget_scores(x["qid"], x["nuggets"])
        g = got[(x["run_id"], x["qid"])]
        assert (m.all_score, m.vital_score, m.strict_all_score) == pytest.approx((g["all"], g["vital"],
                                                                                 g["strict_all"]), abs=1e-10)


def test_ambiguous_and_bad_files_refused_with_file_line(camp, tmp_path):
    both = tmp_path / "both.tsv"
    both.write_text("q1\tn1\tvital\tsupport\n")          # a nugget whose text is "support", or an assignment?
    r = cli("nuggets", "import", camp, both)
    assert r.rc == 3 and "reads both as a nugget" in r.err and "--format" in r.err and "Traceback" not in r.text
    assert cli("nuggets", "list", camp, in_process=True).out.startswith("no nuggets")
    r = cli("nuggets", "import", camp, both, "--format", "trec-nuggets", in_process=True)
    assert r.rc == 0 and "1 nuggets imported" in r.out
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"qid": "q1", "nuggets": [{"text": "a", "importance": "vital"}]}\n'
                     '{"qid": "q1", "run_id": "rag01", "nuggets": [{"text": "a", "importance": "vital", '
                     '"assignment": "support"}]}\n')
    r = cli("nuggets", "import", camp, mixed, in_process=True)
    assert r.rc == 3 and "line 1 reads as a nugget file, line 2 as an assignment file" in r.err
    bad = tmp_path / "bad.tsv"
    bad.write_text("q1\tn7\tvital\tfine\nq1\tn8\tcrucial\tbad importance\n")
    r = cli("nuggets", "import", camp, bad, "--format", "trec-nuggets")
    assert r.rc == 3 and f"{bad}:2: importance 'crucial': use vital or okay" in r.err and "Traceback" not in r.text
    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("rag01\tq1\tn1\t2\nrag01\tq1\tZZ\t1\n")
    r = cli("nuggets", "import", camp, unknown, in_process=True)
    assert r.rc == 3 and f"{unknown}:2: topic q1 has no nugget ZZ in force; import the nugget file first" in r.err
    assert "nothing was imported" in r.err
    changed = tmp_path / "changed.tsv"
    changed.write_text("q1\tn1\tokay\tsupport\n")
    r = cli("nuggets", "import", camp, changed, "--format", "trec-nuggets")
    assert r.rc == 3 and f"{changed}:1: topic q1 already has a nugget n1 (vital: 'support'); importing would " \
                         f"change it" in r.err
    j = tmp_path / "n.jsonl"
    j.write_text('{"qid": "q2", "nuggets": [{"text": "x", "importance": "big"}]}\n{"qid": "q3"\n')
    r = cli("nuggets", "import", camp, j, "--format", "nuggetizer-nuggets", in_process=True)
    assert r.rc == 3 and f"{j}:1: nugget 0: \"importance\" must be vital or okay, found 'big'" in r.err
    assert f"{j}:2: is not valid JSON" in r.err


def test_export_needs_a_source_for_assignments(camp):
    r = cli("nuggets", "export", camp, "--format", "trec-assignments")
    assert r.rc == 3 and "name the assignment source (--source)" in r.err


def test_import_notes_assignments_without_answers_and_history_names_the_origin(camp, tmp_path):
    nf, af = tmp_path / "nuggets.tsv", tmp_path / "assign.tsv"
    nf.write_text(NIST_NUGGETS)
    af.write_text("rag01\tq1\tN-1\t2\nragX\tq1\tN-2\t1\n")
    r = cli("nuggets", "import", camp, nf, af, in_process=True)
    assert r.rc == 0, r.text
    assert f"warning: {af}: 1 (run, topic) pair(s) have no answer in the campaign's answers/" in r.err
    assert "(first: ragX/q1)" in r.err
    tr = tmp_path / "trace.jsonl"
    tr.write_text(json.dumps({"query": "q?", "qid": "q2", "nuggets": [{"text": "t", "importance": "okay"}],
                              "trace": {"prompt": "p"}}) + "\n")
    r = cli("nuggets", "import", camp, tr, in_process=True)
    assert r.rc == 0 and f"warning: {tr}: key(s) trace are not kept (first at line 1)" in r.err, r.text
    r = cli("nuggets", "history", camp, "q1", "N-2")
    assert r.rc == 0 and f"[imported] importance okay: The second fact (from {nf.resolve()}:2, trec-nuggets)" in r.out
