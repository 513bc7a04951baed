"""The TREC RAG answer reader: good files read exactly, every malformed case refused with file:line."""
from __future__ import annotations

import gzip
import json

import pytest

from engine.errors import FormatError, Warnings
from engine.nuggets.answers import check_limits, read_answers

GOOD = {"run_id": "R1", "topic_id": "t1", "topic": "why?", "references": ["d1", "d2", "d3"],
        "response_length": 6, "answer": [{"text": "First fact here.", "citations": [0, 2]},
                                          {"text": "Second one.", "citations": []},
                                          {"text": "Third", "citations": [1]}]}


def _write(tmp_path, lines, name="a.jsonl"):
    p = tmp_path / name
    p.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))
    return p


def test_reads_good_file_and_2025_layout(tmp_path):
    second = {"metadata": {"run_id": "R1", "narrative_id": "t2", "team_id": "x", "type": "automatic"},
              "references": ["d9"], "answer": [{"text": "Only.", "citations": [0]}]}
    p = _write(tmp_path, [GOOD, "", second])
    w = Warnings()
    run = read_answers(p, w)
    assert [(a.run, a.topic, a.line) for a in run.answers] == [("R1", "t1", 1), ("R1", "t2", 3)]
    a = run.answers[0]
    assert a.references == ["d1", "d2", "d3"]
    assert [s.citations for s in a.sentences] == [(0, 2), (), (1,)]
    assert a.words == 6 and a.cited(0) == ["d1", "d3"]
    assert not w


def test_gzip(tmp_path):
    p = tmp_path / "a.jsonl.gz"
    p.write_bytes(gzip.compress((json.dumps(GOOD) + "\n").encode()))
    assert read_answers(p).answers[0].topic == "t1"


def _bad(**change):
    d = json.loads(json.dumps(GOOD))
    for k, v in change.items():
        if v is ...:
            del d[k]
        else:
            d[k] = v
    return d


CASES = [
    ('{"run_id": "R1", ', "not valid JSON"),
    ("[1, 2]", "expected a JSON object, found list"),
    (_bad(run_id=...), 'missing "run_id"'),
    (_bad(topic_id=...), 'missing "topic_id"'),
    (_bad(run_id="R 1"), "without white space"),
    (_bad(topic_id=1.5), '"topic_id" must be a string'),
    (_bad(references=...), 'missing "references"'),
    (_bad(references="d1"), '"references" must be a list'),
    (_bad(references=["d1", "d1", "d3"]), "listed twice"),
    (_bad(references=["d1", 7.0, "d3"]), "reference 1 must be a string"),
    (_bad(answer=...), 'missing "answer"'),
    (_bad(answer={"text": "x"}), '"answer" must be a list'),
    (_bad(answer=["plain"]), "sentence 0: expected"),
    (_bad(answer=[{"text": "", "citations": []}]), '"text" is empty'),
    (_bad(answer=[{"text": 5, "citations": []}]), '"text" must be a string'),
    (_bad(answer=[{"text": "a", "citations": [3]}]), "citation 3 points outside the references (indices 0..2)"),
    (_bad(answer=[{"text": "a", "citations": [-1]}]), "points outside"),
    (_bad(answer=[{"text": "a", "citations": [True]}]), "must be an integer index"),
    (_bad(answer=[{"text": "a", "citations": ["0"]}]), "must be an integer index"),
    (_bad(answer=[{"text": "a", "citations": 0}]), '"citations" must be a list'),
    (_bad(answer=[{"text": "a", "cites": [0]}]), "unknown key(s) 'cites'"),
    (_bad(references=[], answer=[{"text": "a", "citations": [0]}]), "references list is empty"),
    (_bad(response_length=-3), '"response_length" must be an integer >= 0'),
    (_bad(metadata=[1]), '"metadata" must be an object'),
    ('{"a": ' * 70 + "1" + "}" * 70, "nested deeper"),
    ('{"run_id": "R1", "run_id": "R2", "topic_id": "t", "references": [], "answer": []}',
     "key 'run_id' appears twice in one object"),
    ('{"run_id": "R1", "topic_id": "t", "references": [], "answer": [{"text": "a", "text": "b"}]}',
     "key 'text' appears twice"),
]


@pytest.mark.parametrize("line,message", CASES)
def test_malformed_line_refused_with_file_line(tmp_path, line, message):
    p = _write(tmp_path, [GOOD, "", line])
    with pytest.raises(FormatError) as ei:
        read_answers(p)
    text = str(ei.value)
    assert f"{p}:3: " in text and message in text, text
    assert len(ei.value.problems) == 1


def test_invalid_utf8_nul_and_empty(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(FormatError, match=f"{p}:2: is not valid UTF-8"):
        read_answers(p)
    p.write_bytes(json.dumps(GOOD).encode() + b"\n\x00\n")
    with pytest.raises(FormatError, match="NUL"):
        read_answers(p)
    p.write_text("\n\n")
    with pytest.raises(FormatError, match="holds no answers"):
        read_answers(p)


def test_repeated_answer_names_both_lines(tmp_path):
    p = _write(tmp_path, [GOOD, GOOD])
    with pytest.raises(FormatError, match=r":2: run R1 answers topic t1 again \(first at line 1\)"):
        read_answers(p)


def test_every_bad_line_is_reported(tmp_path):
    p = _write(tmp_path, ["{", GOOD, "[]", _bad(run_id=...)])
    with pytest.raises(FormatError) as ei:
        read_answers(p)
    assert [pr.line for pr in ei.value.problems] == [1, 3, 4]


def test_line_and_sentence_limits(tmp_path, monkeypatch):
    import engine.nuggets.answers as A
    monkeypatch.setattr(A, "MAX_SENTENCES", 2)
    p = _write(tmp_path, [GOOD])
    with pytest.raises(FormatError, match=r":1: \"answer\" has 3 sentences \(at most 2\)"):
        read_answers(p)
    monkeypatch.setattr(A, "MAX_LINE_BYTES", 50)
    with pytest.raises(FormatError, match=r":1: line is .* bytes long"):
        read_answers(p)


def test_warnings_not_silent(tmp_path):
    d = _bad(response_length=99)
    d["extra"] = 1
    w = Warnings()
    read_answers(_write(tmp_path, [d]), w)
    msgs = [str(x) for x in w]
    assert any(":1: unknown key(s) extra" in m for m in msgs)
    assert any('"response_length" 99 differs from the 6 words' in m for m in msgs)


def test_repeated_citation_is_a_warning_and_counted_once(tmp_path):
    w = Warnings()
    run = read_answers(_write(tmp_path, [_bad(answer=[{"text": "a b c d e f", "citations": [1, 0, 1, 0]}])]), w)
    assert run.answers[0].sentences[0].citations == (1, 0)
    assert any(":1: sentence 0: citation(s) 0, 1 repeated; each is counted once" in str(x) for x in w)


def test_every_problem_of_a_line_is_reported(tmp_path):
    d = _bad(topic=..., references=["d1", "d1", 5.5], answer=[{"text": "", "citations": [7]}, "x"])
    p = _write(tmp_path, [d])
    with pytest.raises(FormatError) as ei:
        read_answers(p)
    msgs = [pr.message for pr in ei.value.problems]
    assert all(pr.line == 1 for pr in ei.value.problems)
    assert msgs == ['missing "topic" (the question text)',
                    "reference 'd1' is listed twice (positions 0 and 1); list each once",
                    "reference 2 must be a string, found 5.5",
                    'sentence 0: "text" is empty',
                    "sentence 0: citation 7 points outside the references (indices 0..2)",
                    'sentence 1: expected {"text": ..., "citations": [...]}, found \'x\''], msgs


def test_campaign_limits(tmp_path):
    run = read_answers(_write(tmp_path, [GOOD]))
    probs = check_limits(run, {"max_words": 5, "max_references": 3, "max_sentences": 2}, topics={"t9"})
    text = [str(p) for p in probs]
    assert any(":1: answer of run R1 to topic t1 has 6 words (answers.max_words is 5)" in t for t in text)
    assert any("has 3 sentences (answers.max_sentences is 2)" in t for t in text)
    assert any("topic t1 is not a topic of the campaign" in t for t in text)
    assert len(probs) == 3
    assert check_limits(run, {"max_words": 6}, topics={"t1"}) == []


def test_count_words_of_ascii_texts_at_once_equals_text_by_text():
    import random
    import unicodedata

    from engine.nuggets.answers import count_words
    rng = random.Random(3)
    pieces = ["a", "bc", " ", "  ", "\t", "\n", "x.y", "\u00a0", "ﬁ", "é", "\u2003", "\x1f", "\x0b", ""]
    for _ in range(3000):
        texts = ["".join(rng.choices(pieces, k=rng.randint(0, 6))) for _ in range(rng.randint(0, 5))]
        assert count_words(texts) == sum(len(unicodedata.normalize("NFKC", t).split()) for t in texts), texts
        assert count_words(iter(texts)) == count_words(texts)
