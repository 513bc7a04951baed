"""TREC run, qrels, prels, sample_eval and topic formats: round trips, real files, every error path."""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from conftest import shared_path
from cranfield.cli import main
from engine.errors import FormatError, Warnings
from engine.formats.detect import detect_judgment_kind, read_judgments, write_judgments
from engine.formats.sampled import read_prels, read_sample, write_prels, write_sample
from engine.formats.qrels import read_qrels, write_qrels
from engine.formats.runs import read_run, read_runs, warn_unknown_topics, write_run
from engine.formats.topics import read_topics, write_topics


def put(path, text: str | bytes):
    data = text.encode() if isinstance(text, str) else text
    if str(path).endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def problems(exc_info) -> list[str]:
    return [str(p) for p in exc_info.value.problems]


# ----------------------------------------------------------------------------- real shared files

def test_terabyte06_qrels_published_counts():
    q = read_qrels(shared_path("collections", "qrels.terabyte06.801-850.txt"))
    # buttcher-et-al-2007 / data README: 50 topics, 31,984 judged, 5,893 relevant
    assert q["topic"].nunique() == 50
    assert len(q) == 31984
    assert int((q["grade"] >= 1).sum()) == 5893
    assert q["grade"].dtype == np.int64 and set(q["grade"].unique()) == {0, 1, 2}


def test_mq2008_prels_published_counts():
    p = read_prels(shared_path("collections", "prels.mq2008.10001-20000.txt"))
    # kanoulas thesis 3.2.4: 784 queries, 15,211 judgments, 2,932 relevant
    assert p["topic"].nunique() == 784
    assert len(p) == 15211
    assert int((p["grade"] >= 1).sum()) == 2932
    assert p["prob"].dtype == np.float64 and p["prob"].between(0, 1, inclusive="right").all()
    first = p.iloc[0]  # 10002 GX037-06-11625428 0 1 0.0031586555555558
    assert (first["topic"], first["doc"], first["grade"], first["method"]) == ("10002", "GX037-06-11625428", 0, "1")
    assert first["prob"] == pytest.approx(0.0031586555555558, abs=0)
    assert detect_judgment_kind(shared_path("collections", "prels.mq2008.10001-20000.txt")) == "prels"


def test_terabyte06_topics():
    t = read_topics(shared_path("collections", "topics.terabyte06.801-850.txt"))
    assert len(t) == 50 and t["title"].str.len().gt(0).all()
    assert t["topic"].tolist() == [str(i) for i in range(801, 851)]
    r = t.iloc[0]
    assert r["title"] == "Kudzu Pueraria lobata"
    assert r["description"] == "Describe the origin, nature, extent of spread and means of controlling kudzu."
    assert r["narrative"].startswith("Identification of kudzu as an invasive species")
    assert t.iloc[-1]["title"] == "Mississippi River flood"


def test_trec_eval_results_test_run():
    r = read_run(shared_path("trec_eval", "results.test"))
    assert r["run"].unique().tolist() == ["STANDARD"] and len(r) == 1500 and r["topic"].nunique() == 3


# ----------------------------------------------------------------------------- round trips

RUN = pd.DataFrame({"run": ["r1"] * 4 + ["r2"] * 2, "topic": ["1", "1", "2", "2", "1", "3"],
                    "doc": ["a", "b", "c", "d", "a", "z"], "score": [2.5, 1.25, 0.1 + 0.2, -3.0, 1.0, 7.0]})


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_run_round_trip(tmp_path, suffix):
    paths = []
    for tag, grp in RUN.groupby("run"):
        paths.append(tmp_path / f"{tag}{suffix}")
        write_run(paths[-1], grp)
    if suffix.endswith(".gz"):
        assert paths[0].read_bytes()[:2] == b"\x1f\x8b"
    back = read_runs(paths)
    assert back[["run", "topic", "doc"]].values.tolist() == RUN[["run", "topic", "doc"]].values.tolist()
    assert back["score"].tolist() == RUN["score"].tolist()  # exact: written with repr
    assert back["rank"].tolist() == [1, 2, 1, 2, 1, 1]
    assert back["line"].tolist() == [1, 2, 3, 4, 1, 2]


@pytest.mark.parametrize("suffix", [".qrels", ".qrels.gz"])
def test_qrels_round_trip_graded_negative(tmp_path, suffix):
    q = pd.DataFrame({"topic": ["1", "1", "2", "2"], "doc": ["a", "b", "a", "c"], "grade": [2, -1, 0, 3]})
    write_qrels(tmp_path / f"q{suffix}", q)
    back = read_qrels(tmp_path / f"q{suffix}")
    assert back[["topic", "doc", "grade"]].values.tolist() == q.values.tolist()
    assert back["grade"].dtype == np.int64


@pytest.mark.parametrize("suffix", [".prels", ".prels.gz"])
def test_prels_round_trip(tmp_path, suffix):
    p = pd.DataFrame({"topic": ["5", "5", "6"], "doc": ["x", "y", "x"], "grade": [1, 0, 2],
                      "method": ["0", "1", "2"], "prob": [1.0, 0.0031586555555558, 0.5]})
    write_prels(tmp_path / f"p{suffix}", p)
    back = read_judgments(tmp_path / f"p{suffix}")
    assert back[["topic", "doc", "grade", "method", "prob"]].values.tolist() == p.values.tolist()


@pytest.mark.parametrize("suffix", [".sample", ".sample.gz"])
def test_sample_round_trip_and_stratum_probabilities(tmp_path, suffix):
    s = pd.DataFrame({"topic": ["1"] * 5 + ["2"], "doc": list("abcdef"), "stratum": [1, 1, 2, 2, 2, 1],
                      "grade": [1, 0, 2, -1, -1, 0]})
    write_sample(tmp_path / f"s{suffix}", s)
    back = read_sample(tmp_path / f"s{suffix}")
    assert back[["topic", "doc", "stratum", "grade"]].values.tolist() == s[["topic", "doc", "stratum", "grade"]
                                                                          ].values.tolist()
    # topic 1 stratum 1: 2 of 2 sampled -> 1; stratum 2: 1 of 3 sampled -> 1/3; topic 2 stratum 1: 1/1
    assert back["prob"].tolist() == pytest.approx([1, 1, 1 / 3, 1 / 3, 1 / 3, 1])
    assert back["stratum"].dtype == np.int64


@pytest.mark.parametrize("name", ["t.txt", "t.tsv", "t.jsonl", "t.tsv.gz"])
def test_topics_round_trip(tmp_path, name):
    t = pd.DataFrame({"topic": ["801", "802"], "title": ["Kudzu Pueraria lobata", "May Day"],
                      "description": ["Describe the origin.", ""], "narrative": ["Relevant: spread.", ""]})
    write_topics(tmp_path / name, t)
    back = read_topics(tmp_path / name)
    assert back[["topic", "title", "description", "narrative"]].values.tolist() == t.values.tolist()


def test_write_judgments_dispatches_on_suffix(tmp_path):
    p = pd.DataFrame({"topic": ["1"], "doc": ["x"], "grade": [1], "method": ["1"], "prob": [0.25]})
    write_judgments(tmp_path / "j.prels", p)
    assert (tmp_path / "j.prels").read_text() == "1 x 1 1 0.25\n"


# ----------------------------------------------------------------------------- run errors

def test_run_errors_name_file_and_line(tmp_path):
    f = put(tmp_path / "bad.run", "801 Q0 d1 1 3.5 r\n801 Q0 d2 x 2 r\n801 Q0 d3 3 abc r\n801 Q0 d4 4\n"
                                  "801 Q0 d5 5 1 r extra\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    msgs = problems(e)
    assert msgs == [f"{f}:2: rank must be an integer, found 'x'",
                    f"{f}:3: score must be a number, found 'abc'",
                    f"{f}:4: expected 6 fields (topic Q0 doc rank score tag), found 4: '801 Q0 d4 4'"]
    # line 5's extra field after the tag is ignored, as trec_eval does (issue 15 item 3)
    assert "each line must read: topic Q0 doc rank score tag" in str(e.value)


def test_run_huge_rank_is_an_error(tmp_path):
    f = put(tmp_path / "r.txt", "1 Q0 a 1 1.0 r\n1 Q0 b 99999999999999999999 0.5 r\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert problems(e) == [f"{f}:2: rank '99999999999999999999' is out of range (beyond a 64-bit integer)"]


def test_run_nan_score_is_an_error(tmp_path):
    f = put(tmp_path / "r.txt", "1 Q0 a 1 1.0 r\n1 Q0 b 2 nan r\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert problems(e) == [f"{f}:2: score must be a number, found 'nan'"]


def test_run_duplicate_doc_first_kept_and_reported(tmp_path):
    f = put(tmp_path / "r.txt", "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n2 Q0 a 1 1 r\n")
    w = Warnings()
    r = read_run(f, w)
    assert r["doc"].tolist() == ["a", "b", "a"] and r["score"].tolist() == [3, 2, 1]
    assert [str(p) for p in w] == [f"{f}:3: document a retrieved twice for topic 1 (first at line 1); "
                                   f"rule: the first occurrence is kept, this one is ignored"]


def test_run_tag_change_reported(tmp_path):
    f = put(tmp_path / "r.txt", "1 Q0 a 1 3 runA\n1 Q0 b 2 2 runA\n2 Q0 c 1 1 runB\n")
    w = Warnings()
    r = read_run(f, w)
    assert set(r["run"]) == {"runA"} and len(r) == 3
    assert len(w) == 1 and str(w.items[0]).startswith(f"{f}:3: run tag changes from 'runA' to 'runB'")
    assert "evaluated as run 'runA'" in str(w.items[0])


def test_empty_run_file_is_reported(tmp_path):
    f = put(tmp_path / "empty.txt", "\n  \n")
    w = Warnings()
    assert len(read_run(f, w)) == 0
    assert [str(p) for p in w] == [f"{f}: run file is empty (holds no results); it is left out of the evaluation"]


def test_binary_file_is_rejected(tmp_path):
    f = put(tmp_path / "r.txt", b"1 Q0 a 1 1 r\n\x00\x01\x02garbage\x00\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert problems(e) == [f"{f}:2: binary data (NUL byte): this is not a text file"]


def test_non_utf8_line_is_reported(tmp_path):
    f = put(tmp_path / "r.txt", b"1 Q0 a 1 1 r\n1 Q0 \xff\xfe 2 0.5 r\n1 Q0 c 3 0.2 r\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert problems(e) == [f"{f}:2: is not valid UTF-8 text (binary or wrongly encoded)"]


def test_corrupt_gzip_and_fake_gz(tmp_path):
    f = tmp_path / "r.txt.gz"
    f.write_bytes(gzip.compress(b"1 Q0 a 1 1 r\n")[:15])
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert problems(e)[0].startswith(f"{f}: corrupt gzip data")
    g = put(tmp_path / "plain.gz", b"")
    g.write_bytes(b"1 Q0 a 1 1 r\n")
    with pytest.raises(FormatError) as e:
        read_run(g)
    assert problems(e) == [f"{g}: name ends in .gz but the content is not gzip data"]


def test_utf8_bom_is_not_part_of_the_first_topic(tmp_path):
    f = put(tmp_path / "q.txt", b"\xef\xbb\xbf801 0 d1 1\n")
    assert read_qrels(f)["topic"].tolist() == ["801"]


def test_missing_file(tmp_path):
    with pytest.raises(FormatError) as e:
        read_qrels(tmp_path / "nope.txt")
    assert problems(e) == [f"{tmp_path / 'nope.txt'}: file not found"]


def test_read_runs_reports_all_files_and_duplicate_tags(tmp_path):
    a = put(tmp_path / "a.txt", "1 Q0 a 1 1 same\n")
    b = put(tmp_path / "b.txt", "1 Q0 a 1 1 same\n")
    c = put(tmp_path / "c.txt", "1 Q0 a one 1 other\n")
    with pytest.raises(FormatError) as e:
        read_runs([a, b, c])
    assert problems(e) == [f"{b}:1: run tag 'same' is also the tag of {a}",
                           f"{c}:1: rank must be an integer, found 'one'"]


def test_comments_and_blank_lines_keep_line_numbers(tmp_path):
    f = put(tmp_path / "r.txt", "# a comment\n\n1 Q0 a 1 1 r\n   \n1 Q0 b 2 0.5 r\n")
    assert read_run(f)["line"].tolist() == [3, 5]


def test_unknown_topics_warning():
    runs = pd.DataFrame({"run": ["r", "r", "s"], "topic": ["1", "9", "8"], "doc": ["a", "b", "c"]})
    w = Warnings()
    assert warn_unknown_topics(runs, ["1", "2"], w, "runs") == ["8", "9"]
    assert [str(p) for p in w] == ["runs: run r has results for 1 topic(s) not in the topics file: 9",
                                   "runs: run s has results for 1 topic(s) not in the topics file: 8"]


# ----------------------------------------------------------------------------- judgment errors

def test_qrels_errors(tmp_path):
    f = put(tmp_path / "q.txt", "1 0 a 1\n1 0 b high\n1 0 c\n1 0 d 1.5\n")
    with pytest.raises(FormatError) as e:
        read_qrels(f)
    assert problems(e) == [f"{f}:2: grade must be an integer relevance grade, found 'high'",
                           f"{f}:3: expected 4 fields (topic iter doc grade), found 3: '1 0 c'",
                           f"{f}:4: grade must be an integer relevance grade, found '1.5'"]


def test_empty_qrels_is_an_error(tmp_path):
    f = put(tmp_path / "q.txt", "")
    with pytest.raises(FormatError) as e:
        read_qrels(f)
    assert problems(e) == [f"{f}: file is empty (holds no judgments)"]


@pytest.mark.parametrize("rule,grade", [("last", 0), ("max", 2), ("majority", 1)])
def test_conflicting_judgments_rules(tmp_path, rule, grade):
    # doc a judged 1, 2, 1, 0 (lines 1,2,4,5): last -> 0, max -> 2, majority -> 1 (twice)
    f = put(tmp_path / "q.txt", "1 0 a 1\n1 0 a 2\n1 0 b 0\n1 0 a 1\n1 0 a 0\n1 0 b 0\n")
    w = Warnings()
    q = read_qrels(f, w, rule=rule)
    assert dict(zip(q["doc"], q["grade"])) == {"a": grade, "b": 0}
    msgs = [str(p) for p in w]
    assert msgs[0] == (f"{f}:5: document a judged differently for topic 1 (line 1: 1, line 2: 2, line 4: 1, "
                       f"line 5: 0); rule '{rule}': " + {"last": "the last judgment wins",
                                                         "max": "the highest grade wins",
                                                         "majority": "the most frequent grade wins (ties: the "
                                                                     "latest of the tied grades)"}[rule])
    assert msgs[1] == f"{f}: 1 repeated identical judgment lines folded into one"


def test_majority_tie_goes_to_latest(tmp_path):
    f = put(tmp_path / "q.txt", "1 0 a 2\n1 0 a 1\n1 0 a 1\n1 0 a 2\n")
    assert read_qrels(f, rule="majority")["grade"].tolist() == [2]  # 2 and 1 tie twice; 2 was latest


def test_negative_grade_never_overrides_a_judgment(tmp_path):
    f = put(tmp_path / "q.txt", "1 0 a 1\n1 0 a -1\n")
    assert read_qrels(f, rule="last")["grade"].tolist() == [1]


def test_prels_errors(tmp_path):
    f = put(tmp_path / "p.prels", "1 a 1 0 0.5\n1 b 1 0 0\n1 c 0 1 1.5\n1 d 0 1 -0.1\n1 e x 1 1\n")
    with pytest.raises(FormatError) as e:
        read_prels(f)
    assert problems(e) == [f"{f}:5: grade must be an integer relevance grade, found 'x'"]
    f = put(tmp_path / "p2.prels", "1 a 1 0 0.5\n1 b 1 0 0\n1 c 0 1 1.5\n1 d 0 1 -0.1\n1 e 0 1 p\n")
    with pytest.raises(FormatError) as e:
        read_prels(f)
    assert problems(e) == [f"{f}:5: prob must be an inclusion probability in (0, 1], found 'p'"]
    f = put(tmp_path / "p3.prels", "1 a 1 0 0.5\n1 b 1 0 0\n1 c 0 1 1.5\n1 d 0 1 -0.1\n")
    with pytest.raises(FormatError) as e:
        read_prels(f)
    assert problems(e) == [f"{f}:2: probability must be in (0, 1], found 0.0",
                           f"{f}:3: probability must be in (0, 1], found 1.5",
                           f"{f}:4: probability must be in (0, 1], found -0.1"]


def test_sample_errors_and_unsampled_stratum(tmp_path):
    f = put(tmp_path / "s.sample", "1 0 a 1 1\n1 0 b one 0\n1 0 c 1 -2\n")
    with pytest.raises(FormatError) as e:
        read_sample(f)
    assert problems(e) == [f"{f}:2: stratum must be an integer stratum number, found 'one'"]
    f = put(tmp_path / "s2.sample", "1 0 a 1 1\n1 0 c 1 -2\n")
    with pytest.raises(FormatError) as e:
        read_sample(f)
    assert problems(e) == [f"{f}:2: grade -2 is not allowed (-1 = pooled, not sampled; 0.. = judged)"]
    f = put(tmp_path / "s3.sample", "1 0 a 1 1\n1 0 b 2 -1\n")
    w = Warnings()
    s = read_sample(f, w)
    assert s["prob"].tolist() == [1.0, 0.0]
    assert [str(p) for p in w] == [f"{f}:2: stratum 2 of topic 1 has no sampled document (all grades -1); "
                                   f"its inclusion probability is 0"]


def test_detect_judgment_kind(tmp_path):
    assert detect_judgment_kind(put(tmp_path / "a.txt", "1 0 d 1\n")) == "qrels"
    assert detect_judgment_kind(put(tmp_path / "b.txt", "1 d 1 0 0.25\n1 e 0 1 1\n")) == "prels"
    assert detect_judgment_kind(put(tmp_path / "c.txt", "1 0 d 3 1\n1 0 e 1 -1\n")) == "sample"
    assert detect_judgment_kind(tmp_path / "x.sample.gz") == "sample"


# ----------------------------------------------------------------------------- topic errors

def test_sgml_topic_errors(tmp_path):
    f = put(tmp_path / "t.txt", "<top>\n<num> Number: 1\n<title> ok\n</top>\n\n<top>\n<num> Number: 2\n"
                                "<desc> Description: no title\n</top>\n<top>\n<num> Number: 1\n<title> again\n"
                                "</top>\n<top>\n<title> no number\n")
    with pytest.raises(FormatError) as e:
        read_topics(f)
    assert problems(e) == [f"{f}:6: topic 2 has no <title> text",
                           f"{f}:10: topic 1 is defined twice (first at line 1)",
                           f"{f}:14: <top> is never closed (missing </top>)"]


def test_tsv_and_jsonl_topic_errors(tmp_path):
    f = put(tmp_path / "t.tsv", "id\ttitle\n1\tfirst\n2\n3\t\n4 5\tx\n")
    with pytest.raises(FormatError) as e:
        read_topics(f)
    assert problems(e) == [f"{f}:3: expected 2 to 4 tab-separated fields (id, title[, description[, narrative]]), "
                           f"found 1: '2'",
                           f"{f}:4: topic 3 has an empty title",
                           f"{f}:5: topic id must be one token, found '4 5'"]
    g = put(tmp_path / "t.jsonl", '{"id": 1, "title": "a"}\n{"id": 2\n[1]\n{"title": "x"}\n{"qid": "5", "query": "q"}\n')
    with pytest.raises(FormatError) as e:
        read_topics(g)
    assert problems(e) == [f"{g}:2: not valid JSON (Expecting ',' delimiter at column 9)",
                           f"{g}:3: expected a JSON object, found list",
                           f'{g}:4: missing topic id (key "id", "topic" or "qid")']
    h = put(tmp_path / "ok.jsonl", '{"qid": "5", "query": "q", "desc": "d"}\n')
    assert read_topics(h)[["topic", "title", "description"]].values.tolist() == [["5", "q", "d"]]


def test_empty_topics_file(tmp_path):
    f = put(tmp_path / "t.tsv", "\n")
    with pytest.raises(FormatError) as e:
        read_topics(f)
    assert problems(e) == [f"{f}: file is empty (holds no topics)"]


# ----------------------------------------------------------------------------- cranfield check

def test_check_command_exit_codes(tmp_path, capsys):
    good = put(tmp_path / "good.txt", "1 Q0 a 1 1 r\n")
    bad = put(tmp_path / "bad.txt", "1 Q0 a 1 1 r\n1 Q0 b 2 zz r\n")
    assert main(["check", str(good)]) == 0
    assert "run r: 1 topics, 1 results" in capsys.readouterr().out
    assert main(["check", str(good), str(bad)]) == 3
    err = capsys.readouterr().err
    assert f"error: {bad}:2: score must be a number, found 'zz'" in err
    topics = put(tmp_path / "t.tsv", "2\tother\n")
    assert main(["check", "--topics", str(topics), str(good)]) == 0
    assert f"warning: {good}: run r has results for 1 topic(s) not in the topics file: 1" in capsys.readouterr().err


def test_eval_cli_exits_nonzero_on_malformed_run(tmp_path, capsys):
    q = put(tmp_path / "q.txt", "1 0 a 1\n")
    r = put(tmp_path / "r.txt", "1 Q0 a 1 1 r\n1 Q0 b two 1 r\n")
    assert main(["eval", str(q), str(r)]) == 3
    assert f"{r}:2: rank must be an integer, found 'two'" in capsys.readouterr().err


# ----------------------------------------------------------------------------- fast path == slow path

def test_fast_and_slow_paths_agree(tmp_path):
    from engine.formats.runs import RUN_COLS, RUN_LABEL
    from engine.formats.files import _slow_parse, read_table
    rng = np.random.default_rng(3)
    lines = [f"{rng.integers(1, 30)} Q0 D{i} {i + 1} {rng.normal():.17g} tag" for i in range(3000)]
    text = ("\n".join(lines[:7] + ["", "# note"] + lines[7:]) + "\n").encode()
    fast = read_table(tmp_path / "x", RUN_COLS, RUN_LABEL, data=text)
    rows, line_no = _slow_parse("x", text, RUN_COLS, RUN_LABEL)
    assert fast["line"].tolist() == line_no and line_no[7] == 10
    assert fast["doc"].tolist() == [r[2] for r in rows]
    assert fast["score"].tolist() == [r[4] for r in rows]  # same doubles, bit for bit
