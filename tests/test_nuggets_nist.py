"""NIST's TREC 2024 RAG nugget assignment release (`--format nist-rag24`): one JSON line per assessed (run, topic)
with the topic's whole nugget list and NIST's labels, the layout of trec.nist.gov/data/rag/
nugget_assignment.20241218.jsonl as read by webis-de/ir_axioms (ir_axioms/axiom/generation/trec.py: qid, run_id,
response_length, query, answer_text, nuggets[text, importance, assignment]) and by the RAGElo and RAGDoll
TREC 2024 loaders (one nugget list per topic, the same for every run). The sample lines below have that shape
(topic ids as NIST's, `2024-NNNNN`; run ids with a dot as NIST's run tags have); their texts are made up.
Import (a separate process), scores equal to nuggetizer's own scoring (a test-only oracle), export
byte-identical, re-import adds nothing, a topic whose lines list other nuggets refused with file:line."""
from __future__ import annotations

import json

import pytest
from _cli import cli

nuggetizer_metrics = pytest.importorskip("nuggetizer.core.metrics")

NUGGETS = {
    "2024-105741": [("Teens organise boycotts of brands that test on animals", "vital"),
                    ("Petitions ask regulators to ban cosmetic testing", "vital"),
                    ("Some teens switch to cruelty-free products", "okay")],
    "2024-35269": [("The river's flood season peaks in late summer", "vital"),
                   ("Levees were raised after the 1993 flood \u2013 caf\u00e9 owners paid a levy", "okay")],
}
LABELS = {("rag-a.run1", "2024-105741"): ["support", "partial_support", "not_support"],
          ("rag-b.manual", "2024-105741"): ["partial_support", "support", "support"],
          ("rag-a.run1", "2024-35269"): ["not_support", "support"],
          ("rag-b.manual", "2024-35269"): ["support", "partial_support"]}


def _lines(answers: dict | None = None) -> list[dict]:
    out = []
    for (run, qid), labels in LABELS.items():
        text, length = (answers or {}).get((run, qid), (f"An answer of {run} to {qid}.", 6))
        out.append({"query": f"question of {qid}", "qid": qid, "answer_text": text, "response_length": length,
                    "run_id": run, "nuggets": [{"text": t, "importance": i, "assignment": a}
                                               for (t, i), a in zip(NUGGETS[qid], labels)]})
    return out


def _write(path, recs: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


@pytest.fixture
def camp(tmp_path):
    d = tmp_path / "rag"
    r = cli("simulate", "--rag", "--out", d, "--runs", "2", "--topics", "2", "--no-nuggets", "--seed", "5")
    assert r.rc == 0, r.text
    return d


def test_nist_release_in_and_out_byte_identical(camp, tmp_path):
    f = tmp_path / "nugget_assignment.20241218.jsonl"
    _write(f, _lines())
    r = cli("nuggets", "import", camp, f, "--format", "nist-rag24")
    assert r.rc == 0, r.text
    assert "(nist-rag24): 5 nuggets imported for 2 topic(s); 0 already there" in r.out
    assert "(nist-rag24): 10 assignments imported into source nist for 2 topic(s)" in r.out
    assert "4 (run, topic) pair(s) have no answer" in r.err          # NIST's runs are not this campaign's
    again = cli("nuggets", "import", camp, f, "--format", "nist-rag24")
    assert again.rc == 0 and again.out.count("nothing new") == 2, again.text
    r = cli("nuggets", "export", camp, "--format", "nist-rag24", "--source", "nist")
    assert r.rc == 0 and r.out.encode() == f.read_bytes()
    # the nuggets alone, in nuggetizer's nugget layout; provenance names NIST's file, format and line
    r = cli("nuggets", "export", camp, "--format", "nuggetizer-nuggets", in_process=True)
    got = [json.loads(x) for x in r.out.splitlines()]
    assert [(g["qid"], [(n["text"], n["importance"]) for n in g["nuggets"]]) for g in got] == list(NUGGETS.items())
    from engine.nuggets.store import fold_nuggets, nugget_log
    o = next(iter(fold_nuggets(nugget_log(camp)).values()))["origin"]
    assert o["format"] == "nist-rag24" and o["line"] == 1 and o["file"] == str(f.resolve())
    assert "answer_text" not in o


def test_nist_release_scores_equal_nuggetizers(camp, tmp_path):
    from engine.nuggets.campaign import campaign_answers, per_topic_scores
    ans = campaign_answers(camp)
    runs, topics = sorted({a.run for a in ans}), sorted({a.topic for a in ans})
    rename = {**dict(zip(["rag-a.run1", "rag-b.manual"], runs)), **dict(zip(NUGGETS, topics))}
    by = {(a.run, a.topic): (a.text, a.response_length) for a in ans}
    recs = []
    for r in _lines():                       # the same lines, for the campaign's own answer runs and topics
        run, qid = rename[r["run_id"]], rename[r["qid"]]
        recs.append({**r, "qid": qid, "run_id": run, "answer_text": by[(run, qid)][0],
                     "response_length": by[(run, qid)][1]})
    f = tmp_path / "nist.jsonl"
    _write(f, recs)
    r = cli("nuggets", "import", camp, f, "--format", "nist-rag24")
    assert r.rc == 0 and "no answer" not in r.err, r.text
    exact = per_topic_scores(camp, "nist").set_index(["run", "topic"])
    for rec in recs:
        m = nuggetizer_metrics.calculate_nugget_scores(rec["qid"], rec["nuggets"])
        e = exact.loc[(rec["run_id"], rec["qid"])]
        want = (m.strict_vital_score, m.strict_all_score, m.vital_score, m.all_score)
        assert (e["strict_vital"], e["strict_all"], e["vital"], e["all"]) == pytest.approx(want, abs=1e-15)
    # hand check of one answer by NIST's rules: support, partial, none over vital, vital, okay
    first = recs[0]
    e = exact.loc[(first["run_id"], first["qid"])]
    assert (e["all"], e["vital"], e["strict_all"], e["strict_vital"]) == pytest.approx((0.5, 0.75, 1 / 3, 0.5))
    r = cli("nuggets", "export", camp, "--format", "nist-rag24", "--source", "nist", in_process=True)
    assert r.out.encode() == f.read_bytes()


def test_a_topic_with_other_nuggets_on_another_line_is_refused(camp, tmp_path):
    recs = _lines()
    recs[1]["nuggets"][0]["text"] = "another first nugget"
    recs[3]["nuggets"] = recs[3]["nuggets"][::-1]
    f = tmp_path / "bad.jsonl"
    _write(f, recs)
    r = cli("nuggets", "import", camp, f, "--format", "nist-rag24")
    assert r.rc != 0 and "Traceback" not in r.text
    assert f"{f}:2" in r.text and f"{f}:4" in r.text and "differ from those of line 1" in r.text
    assert "differ from those of line 3" in r.text
    from engine.nuggets.store import fold_nuggets, nugget_log
    assert not fold_nuggets(nugget_log(camp))          # nothing imported
