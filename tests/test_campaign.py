"""Campaign directories: campaign.yaml validation, merged judgments + log, cache, init and status."""
from __future__ import annotations

import json
import os
import textwrap

import pandas as pd
import pytest

import importlib
from engine.campaign.campaign import load_campaign, read_judgment_log, validate_config
from cranfield.cli import main
from engine.errors import CranfieldError, FormatError, Warnings
from engine.campaign.status import judged_at_depth, judgment_counts

CONFIG = textwrap.dedent("""\
    name: Test track
    relevance:
      scale:
        0: {label: not relevant, gain: 0}
        1: {label: relevant, gain: 1}
        2: {label: highly relevant, gain: 3}
      binary_threshold: 1
    evaluation:
      depth: 100
      measures: [map, P.10]
    judgments:
      conflict_rule: last
    runs:
      alpha:
        group: g1
        type: manual
        pooled: false
    topics:
      categories: {1: short, 2: long}
      targets: {1: 8}
    """)


def make_campaign(root, config: str = CONFIG, log: str | None = None, qrels: str | None = None):
    """Two runs over topics 1-2, 12 documents per topic; qrels judge d1..d5, d11, d12 of topic 1."""
    (root / "runs").mkdir(parents=True)
    (root / "topics").mkdir()
    (root / "judgments").mkdir()
    (root / "campaign.yaml").write_text(config)
    for tag, shift in (("alpha", 0), ("beta", 3)):
        lines = [f"{t} Q0 d{(i + shift) % 12 + 1} {i + 1} {20 - i} {tag}" for t in (1, 2) for i in range(12)]
        (root / "runs" / f"{tag}.txt").write_text("\n".join(lines) + "\n")
    (root / "topics" / "topics.tsv").write_text("1\tfirst topic\n2\tsecond topic\n")
    if qrels is None:
        qrels = "".join(f"1 0 d{i} {1 if i % 2 else 0}\n" for i in (1, 2, 3, 4, 5, 11, 12)) + "2 0 d1 2\n"
    (root / "judgments" / "qrels.txt").write_text(qrels)
    if log is not None:
        (root / "judgments" / "log.jsonl").write_text(log)
    return root


def problems(exc_info) -> list[str]:
    return [str(p) for p in exc_info.value.problems]


# ----------------------------------------------------------------------------- loading

def test_load_campaign_views(tmp_path):
    w = Warnings()
    c = load_campaign(make_campaign(tmp_path / "c"), w)
    assert c.name == "Test track" and c.root == tmp_path / "c"
    runs = c.runs()
    assert sorted(runs["run"].unique()) == ["alpha", "beta"] and len(runs) == 48
    q = c.qrels()
    assert list(q.columns) == ["topic", "doc", "grade"] and len(q) == 8
    assert dict(zip(q["doc"][q["topic"] == "1"], q["grade"][q["topic"] == "1"])) == \
        {"d1": 1, "d2": 0, "d3": 1, "d4": 0, "d5": 1, "d11": 1, "d12": 0}
    assert c.topics()[["topic", "title"]].values.tolist() == [["1", "first topic"], ["2", "second topic"]]
    meta = c.run_meta()
    assert meta.values.tolist() == [["alpha", "g1", "manual", False, "runs/alpha.txt"],
                                    ["beta", "beta", "automatic", True, "runs/beta.txt"]]
    assert c.categories() == {"1": "short", "2": "long"} and c.targets() == {"1": 8}
    assert c.gains() == {0: 0, 1: 1, 2: 3} and c.measures() == ["map", "P.10"]
    assert c.truth_qrels() is None
    assert c.config["judgments"]["conflict_rule"] == "last" and c.config["pool"] == {}
    assert list(w) == []


def test_truth_qrels_and_defaults(tmp_path):
    root = make_campaign(tmp_path / "c", config="name: minimal\n")
    (root / "truth").mkdir()
    (root / "truth" / "qrels.txt").write_text("1 0 d1 1\n1 0 d9 2\n")
    c = load_campaign(root)
    assert c.truth_qrels().values.tolist() == [["1", "d1", 1], ["1", "d9", 2]]
    assert c.config["evaluation"] == {"depth": 1000, "measures": ["map", "P.10", "ndcg_cut.10", "bpref"]}
    assert c.binary_threshold() == 1 and c.conflict_rule() == "last"


def test_unrecognised_files_and_unknown_topics_are_reported(tmp_path):
    root = make_campaign(tmp_path / "c")
    (root / "runs" / "notes.docx").write_text("x")
    (root / "runs" / "gamma.txt").write_text("3 Q0 d1 1 1 gamma\n")
    w = Warnings()
    c = load_campaign(root, w)
    assert "gamma" in set(c.runs()["run"])
    msgs = [str(p) for p in w]
    assert f"{root / 'runs' / 'notes.docx'}: not read as a run (expected a name ending in .res, .run, .runs, .trec, .txt, " \
           f"optionally .gz); ignored" in msgs
    assert f"{root / 'runs'}: run gamma has results for 1 topic(s) not in the topics file: 3" in msgs


def test_missing_directory_and_config(tmp_path):
    with pytest.raises(CranfieldError, match="no such directory; create a campaign with `cranfield init"):
        load_campaign(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CranfieldError, match=r"not a campaign directory \(no campaign.yaml\)"):
        load_campaign(tmp_path / "empty")


# ----------------------------------------------------------------------------- campaign.yaml errors

def yaml_error(tmp_path, text: str) -> list[str]:
    root = tmp_path / "y"
    root.mkdir(exist_ok=True)
    (root / "campaign.yaml").write_text(text)
    with pytest.raises(FormatError) as e:
        load_campaign(root)
    return [s.replace(str(root / "campaign.yaml"), "campaign.yaml") for s in problems(e)]


def test_yaml_gain_must_be_a_number(tmp_path):
    text = CONFIG.replace("2: {label: highly relevant, gain: 3}", "2: {label: highly relevant, gain: high}")
    assert yaml_error(tmp_path, text) == ["campaign.yaml:6: relevance.scale.2.gain: must be a number, got 'high'; "
                                          "write e.g. `gain: 3`"]


def test_yaml_unknown_key_with_suggestion(tmp_path):
    assert yaml_error(tmp_path, "name: x\nrelevence: {}\nevaluation: {depht: 10}\n") == [
        "campaign.yaml:2: relevence: unknown key (did you mean relevance?); allowed here: name, description, "
        "relevance, evaluation, judgments, runs, topics, pool, cost, submission, sources, judging, answers, allow_outside",
        "campaign.yaml:3: evaluation.depht: unknown key (did you mean depth?); allowed here: depth, measures"]


def test_yaml_missing_name_and_bad_types(tmp_path):
    assert yaml_error(tmp_path, "description: x\nevaluation:\n  depth: 0\n  measures: map\n"
                                "judgments: {conflict_rule: newest}\nruns:\n  r1: {type: semi, pooled: 'yes'}\n") == [
        "campaign.yaml:1: name: required key is missing; add `name: My track 2026`",
        "campaign.yaml:3: evaluation.depth: must be >= 1, got 0",
        "campaign.yaml:4: evaluation.measures: must be a list ([a, b] or - items), got 'map'",
        "campaign.yaml:5: judgments.conflict_rule: must be one of last, max, majority, got 'newest'",
        "campaign.yaml:7: runs.r1.type: must be one of automatic, manual, got 'semi'",
        "campaign.yaml:7: runs.r1.pooled: must be true or false, got 'yes'"]


def test_yaml_bad_grades(tmp_path):
    assert yaml_error(tmp_path, "name: x\nrelevance:\n  scale:\n    high: {gain: 1}\n    -1: {gain: 0}\n"
                                "    0: {label: no}\n") == [
        "campaign.yaml:4: relevance.scale.high: a grade must be an integer >= 0, got 'high'; write grades as "
        "`2: {label: highly relevant, gain: 3}`",
        "campaign.yaml:5: relevance.scale.-1: a grade must be >= 0, got -1 (negative grades mean 'pooled, not "
        "judged' and take no gain)",
        "campaign.yaml:6: relevance.scale.0.label: must be a string, got False (YAML reads unquoted "
        "yes/no/on/off/true/false as a boolean: quote the text, e.g. 'no')",
        "campaign.yaml:6: relevance.scale.0.gain: required key is missing; add `gain: 3`"]


def test_yaml_threshold_above_scale_and_unknown_measure(tmp_path):
    assert yaml_error(tmp_path, "name: x\nrelevance:\n  scale: {0: {gain: 0}, 1: {gain: 1}}\n"
                                "  binary_threshold: 2\n") == [
        "campaign.yaml:4: relevance.binary_threshold: 2 is above the highest grade 1 of relevance.scale, so no "
        "document could count as relevant; use a grade from the scale"]
    msgs = yaml_error(tmp_path, "name: x\nevaluation:\n  measures: [map, mapp]\n")
    assert len(msgs) == 1 and msgs[0].startswith("campaign.yaml:3: evaluation.measures.1: unknown measure 'mapp'")


def test_yaml_syntax_error_duplicate_key_empty_and_non_mapping(tmp_path):
    msgs = yaml_error(tmp_path, "name: x\nrelevance:\n  scale: {0: [\n")
    assert len(msgs) == 1 and msgs[0].startswith("campaign.yaml:4: YAML syntax error: ")
    assert yaml_error(tmp_path, "name: x\nname: y\n") == [
        "campaign.yaml:2: name: key appears twice (also at line 1); only one can count — remove one"]
    assert yaml_error(tmp_path, "") == ["campaign.yaml: file is empty"]
    assert yaml_error(tmp_path, "- a\n- b\n") == ["campaign.yaml:1: top level must be a mapping of keys, got list"]


def test_validate_config_without_file():
    cfg = validate_config({"name": "x", "topics": {"categories": {801: "short"}}})
    assert cfg["topics"]["categories"] == {"801": "short"}
    with pytest.raises(FormatError, match=r"campaign.yaml: name: must not be empty"):
        validate_config({"name": " "})


def test_run_file_key_must_exist(tmp_path):
    root = make_campaign(tmp_path / "c", config="name: x\nruns:\n  alpha: {file: runs/missing.txt}\n")
    with pytest.raises(FormatError) as e:
        load_campaign(root).runs()
    assert problems(e) == [f"{root / 'campaign.yaml'}: runs.alpha.file: runs/missing.txt does not exist"]


# ----------------------------------------------------------------------------- judgments + log

def log_line(topic, doc, grade=None, assessor="ann", op="judge", **kw) -> str:
    rec = {"topic": topic, "doc": doc, "assessor": assessor, "op": op, "seconds": 3.5, **kw}
    if grade is not None:
        rec["grade"] = grade
    return json.dumps(rec) + "\n"


def test_log_merges_after_files_with_conflict_rules(tmp_path):
    # qrels: topic 1 d1 = 1. log: d1 -> 2 (ann), d1 -> 0 (bob), d7 -> 1, d7 -> 1 (bob), d8 -> 2 then undone
    log = (log_line(1, "d1", 2) + log_line(1, "d1", 0, assessor="bob") + log_line(1, "d7", 1)
           + log_line(1, "d7", 1, assessor="bob") + log_line(1, "d8", 2) + log_line(1, "d8", op="undo"))
    expect = {"last": (0, 1), "max": (2, 1), "majority": (0, 1)}  # d1 votes 1, 2, 0: tie -> latest (0)
    for rule, (g1, g7) in expect.items():
        root = make_campaign(tmp_path / rule, config=f"name: x\njudgments: {{conflict_rule: {rule}}}\n", log=log)
        w = Warnings()
        q = load_campaign(root, w).qrels()
        t1 = dict(zip(q["doc"][q["topic"] == "1"], q["grade"][q["topic"] == "1"]))
        assert (t1["d1"], t1["d7"]) == (g1, g7), rule
        assert "d8" not in t1
        assert [str(p) for p in w] == [
            f"{root / 'judgments'}: 1 document(s) judged with different grades across the judgment files and the "
            f"log; rule '{rule}': " + {"last": "the last judgment wins", "max": "the highest grade wins",
                                       "majority": "the most frequent grade wins (ties: the latest of the tied "
                                                   "grades)"}[rule] + " (judgments.conflict_rule)"]


def test_majority_rule_counts_votes(tmp_path):
    log = log_line(2, "d1", 1) + log_line(2, "d1", 1, assessor="bob") + log_line(2, "d1", 0, assessor="cy")
    root = make_campaign(tmp_path / "c", config="name: x\njudgments: {conflict_rule: majority}\n", log=log)
    q = load_campaign(root).qrels()
    # qrels says 2 d1 = 2; log votes 1, 1, 0 -> 1 has two votes
    assert int(q.loc[(q["topic"] == "2") & (q["doc"] == "d1"), "grade"].iat[0]) == 1


def test_torn_last_line_is_ignored_with_warning(tmp_path):
    log = log_line(1, "d9", 2) + '{"topic": 1, "doc": "d10", "gra'
    root = make_campaign(tmp_path / "c", log=log)
    w = Warnings()
    q = load_campaign(root, w).qrels()
    assert set(q["doc"][q["topic"] == "1"]) >= {"d9"} and "d10" not in set(q["doc"])
    assert [str(p) for p in w] == [f"{root / 'judgments' / 'log.jsonl'}:2: last line is cut off (a crash while "
                                   f"writing?) and is ignored; every complete line before it is kept"]


def test_malformed_log_lines_are_errors(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text(log_line(1, "a", 1) + "not json\n" + json.dumps({"topic": 1, "grade": 1}) + "\n"
                 + json.dumps({"topic": 1, "doc": "b", "grade": "2"}) + "\n"
                 + json.dumps({"topic": 1, "doc": "b", "grade": 1, "seconds": -2}) + "\n" + "[1, 2]\n"
                 + json.dumps({"topic": 1, "doc": "b", "grade": 1, "prob": 0}) + "\n")
    with pytest.raises(FormatError) as e:
        read_judgment_log(p)
    assert problems(e) == [f"{p}:2: is not valid JSON (Expecting value)",
                           f'{p}:3: missing or invalid "doc" (a doc id) in a judge entry',
                           f"{p}:4: \"grade\" must be an integer, found '2'",
                           f'{p}:5: "seconds" must be a number >= 0, found -2',
                           f"{p}:6: expected a JSON object, found list",
                           f'{p}:7: "prob" must be a probability in (0, 1], found 0']


def test_read_judgment_log_columns_and_undo_warning(tmp_path):
    p = tmp_path / "judgments" / "log.jsonl"
    p.parent.mkdir()
    p.write_text(log_line(1, "a", 1, ts="2026-11-21T23:00:00Z", strategy="depth") + log_line(1, "z", op="undo")
                 + json.dumps({"topic": 1, "op": "topic", "seconds": 40}) + "\n")
    w = Warnings()
    log = read_judgment_log(p, w)
    assert list(log.columns) == ["topic", "doc", "grade", "assessor", "ts", "seconds", "strategy", "op", "line"]
    assert log["op"].tolist() == ["judge", "undo", "topic"] and log["seconds"].tolist() == [3.5, 3.5, 40.0]
    assert log["grade"].tolist()[0] == 1 and pd.isna(log["grade"].tolist()[1])
    from engine.campaign.campaign import log_judgments
    j = log_judgments(log, str(p), w)
    assert j[["topic", "doc", "grade"]].values.tolist() == [["1", "a", 1]]
    assert [str(x) for x in w] == [f"{p}:2: undo of document z for topic 1 by ann has no earlier judgment to "
                                   f"retract; ignored"]


def test_prels_and_log_extra_columns_merge(tmp_path):
    root = make_campaign(tmp_path / "c", qrels="1 0 d1 1\n")
    (root / "judgments" / "mq.prels").write_text("1 d2 1 1 0.25\n1 d3 0 0 1\n")
    (root / "judgments" / "log.jsonl").write_text(log_line(1, "d2", 0) + log_line(1, "d4", 1, prob=0.5, method="1"))
    w = Warnings()
    q = load_campaign(root, w).qrels().sort_values("doc")
    assert list(q.columns) == ["topic", "doc", "grade", "prob", "method"]
    # d2: grade from the log (last), prob/method kept from the prels; d1 from qrels gets prob 1, method ''
    assert q.values.tolist() == [["1", "d1", 1, 1.0, ""], ["1", "d2", 0, 0.25, "1"], ["1", "d3", 0, 1.0, "0"],
                                 ["1", "d4", 1, 0.5, "1"]]
    assert f"{root / 'judgments'}: judgments without prob (1), method (1): filled with stratum -1, prob 1.0 " \
           f"(judged with certainty), method ''" in [str(p) for p in w]


def test_bad_judgment_file_in_campaign_names_its_line(tmp_path):
    root = make_campaign(tmp_path / "c", qrels="1 0 d1 1\n1 0 d2 maybe\n")
    with pytest.raises(FormatError) as e:
        load_campaign(root).qrels()
    assert problems(e) == [f"{root / 'judgments' / 'qrels.txt'}:2: grade must be an integer relevance grade, "
                           f"found 'maybe'"]


def test_inputs_are_reread_when_files_change(tmp_path):
    root = make_campaign(tmp_path / "c")
    c = load_campaign(root)
    assert len(c.qrels()) == 8
    with open(root / "judgments" / "log.jsonl", "a") as fh:
        fh.write(log_line(2, "d5", 1))
    assert len(c.qrels()) == 9


# ----------------------------------------------------------------------------- cache

def test_evaluate_cache_hits_and_invalidation(tmp_path, monkeypatch):
    root = make_campaign(tmp_path / "c")
    calls = []
    ev = importlib.import_module("engine.evaluation.cache")
    real = ev.evaluate_campaign

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(ev, "evaluate_campaign", counting)
    c = load_campaign(root)
    first = c.evaluate(["P.10"])
    # alpha topic 1 top 10 = d1..d10, relevant (grade 1) d1, d3, d5 -> P@10 = 0.3
    p = first.set_index(["run", "topic"])["value"]
    assert p[("alpha", "1")] == pytest.approx(0.3)
    # beta topic 1 top 10 = d4..d12, d1: relevant d5, d11, d1 -> 0.3 ; topic 2 d1 (grade 2) in both -> 0.1
    assert p[("beta", "1")] == pytest.approx(0.3) and p[("alpha", "2")] == pytest.approx(0.1)
    again = c.evaluate(["P.10"])
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, again)
    assert len(list((root / ".cranfield-cache").glob("eval-*.parquet"))) == 1
    # other options -> another entry
    c.evaluate(["P.10"], rel_level=2)
    assert len(calls) == 2
    # a judgment file changes (same size, new mtime) -> recomputed with the new grade
    q = root / "judgments" / "qrels.txt"
    q.write_text(q.read_text().replace("1 0 d2 0", "1 0 d2 1"))
    st = q.stat()
    os.utime(q, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    p2 = c.evaluate(["P.10"]).set_index(["run", "topic"])["value"]
    assert len(calls) == 3 and p2[("alpha", "1")] == pytest.approx(0.4)
    # a log append invalidates too
    with open(root / "judgments" / "log.jsonl", "a") as fh:
        fh.write(log_line(1, "d4", 1))
    p3 = c.evaluate(["P.10"]).set_index(["run", "topic"])["value"]
    assert len(calls) == 4 and p3[("alpha", "1")] == pytest.approx(0.5)
    # a run file changes -> recomputed
    r = root / "runs" / "alpha.txt"
    r.write_text(r.read_text().replace(" d1 1 20 alpha", " d99 1 20 alpha"))
    p4 = c.evaluate(["P.10"]).set_index(["run", "topic"])["value"]
    assert len(calls) == 5 and p4[("alpha", "1")] == pytest.approx(0.4)
    assert c.evaluate(["P.10"]).attrs["aggregates"] == {"P_10": "mean"}
    assert len(calls) == 5


def test_cache_key_changes_with_inputs(tmp_path):
    from engine.evaluation.cache import cache_key
    f = tmp_path / "a.txt"
    f.write_text("x")
    k1 = cache_key([f], ["map"], {"rel_level": 1})
    assert cache_key([f], ["map"], {"rel_level": 1}) == k1
    assert cache_key([f], ["P.10"], {"rel_level": 1}) != k1
    assert cache_key([f], ["map"], {"rel_level": 2}) != k1
    f.write_text("y")
    os.utime(f, ns=(1, 2))
    assert cache_key([f], ["map"], {"rel_level": 1}) != k1


# ----------------------------------------------------------------------------- status helpers

def test_judged_at_depth_uses_trec_eval_order():
    runs = pd.DataFrame({"run": ["r"] * 3, "topic": ["1"] * 3, "doc": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"topic": ["1", "1"], "doc": ["a", "c"], "grade": [0, -1]})
    # ties on score: trec_eval ranks c, b, a; only a is judged (c is pooled, grade -1, not judged)
    t = judged_at_depth(runs, qrels, (1, 2, 3))
    assert t.values.tolist() == [["r", 1, 3, 0.0, 0.0, 1 / 3]]


def test_judgment_counts():
    q = pd.DataFrame({"topic": ["1", "1", "1", "2"], "doc": list("abcd"), "grade": [0, 2, -1, 1]})
    t = judgment_counts(q, 1, ["2", "1", "3"], [0, 1, 2])
    assert t.values.tolist() == [["2", 1, 1, 0, 1, 0, 0], ["1", 2, 1, 1, 0, 1, 1], ["3", 0, 0, 0, 0, 0, 0]]
    assert list(t.columns) == ["topic", "judged", "relevant", "grade 0", "grade 1", "grade 2", "unjudged"]


# ----------------------------------------------------------------------------- init and status

def test_init_creates_loadable_skeleton_and_refuses_overwrite(tmp_path, capsys):
    d = tmp_path / "track"
    assert main(["init", str(d)]) == 0
    assert {p.name for p in d.iterdir()} == {"campaign.yaml", "runs", "topics", "judgments", ".gitignore"}
    text = (d / "campaign.yaml").read_text()
    assert "# last | max | majority" in text
    c = load_campaign(d)
    assert c.name == "track" and c.config["evaluation"]["depth"] == 1000 and c.gains() == {0: 0, 1: 1, 2: 2}
    capsys.readouterr()
    (d / "campaign.yaml").write_text("name: mine\n")
    assert main(["init", str(d)]) == 3
    assert f"{d / 'campaign.yaml'} already exists; refusing to overwrite it" in capsys.readouterr().err
    assert (d / "campaign.yaml").read_text() == "name: mine\n"


def test_status_plain_output(tmp_path, capsys):
    root = make_campaign(tmp_path / "c")
    assert main(["status", str(root)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "judgments:     8 judged, 5 relevant (grade >= 1)" in lines
    assert "topics judged: 2 of 2" in lines
    # alpha topic 1 top 10 = d1..d10: judged d1-d5 (5); topic 2: d1 only (1) -> 6/20 = 0.300
    # top 100 = all 12 per topic: topic 1 judged 7, topic 2 judged 1 -> 8/24 = 0.333
    row = next(ln for ln in lines if ln.startswith("alpha "))
    assert row.split() == ["alpha", "g1", "manual", "no", "2", "24", "0.300", "0.333"]
    # beta topic 1 top 10 = d4..d12, d1: judged d4, d5, d11, d12, d1 (5); topic 2: d1 (1) -> 0.300
    row = next(ln for ln in lines if ln.startswith("beta "))
    assert row.split() == ["beta", "beta", "automatic", "yes", "2", "24", "0.300", "0.333"]
    assert next(ln for ln in lines if ln.startswith("1 ")).split() == \
        ["1", "first", "topic", "short", "7", "4", "3", "4", "0", "8", "2"]   # no unjudged column: no grade -1 line
    assert next(ln for ln in lines if ln.startswith("total")).split() == ["total", "8", "5", "3", "4", "1"]


def test_status_rich_output(tmp_path):
    import io

    from cranfield.cli.cmd_status import render, status_tables
    root = make_campaign(tmp_path / "c")
    buf = io.StringIO()
    render(status_tables(load_campaign(root)), buf, rich=True)
    out = buf.getvalue()
    assert "┃ run " in out and "0.300" in out and "Test track" in out


def test_top_ranks_matches_a_full_sort():
    import numpy as np

    from engine.campaign.status import top_ranks
    rng = np.random.default_rng(11)
    n = 4000
    runs = pd.DataFrame({"run": rng.choice(["a", "b", "c"], n), "topic": rng.choice(["1", "2", "10"], n),
                         "doc": [f"D{i}" for i in rng.permutation(n)],
                         "score": rng.integers(0, 40, n).astype(float)})  # many ties
    rows, rank = top_ranks(runs, 25)
    full = runs.sort_values(["run", "topic", "score", "doc"], ascending=[True, True, False, False])
    full["rank"] = full.groupby(["run", "topic"]).cumcount() + 1
    want = full[full["rank"] <= 25]
    got = runs.iloc[rows].assign(rank=rank)
    key = ["run", "topic", "rank"]
    assert got.sort_values(key)[key + ["doc"]].values.tolist() == want.sort_values(key)[key + ["doc"]].values.tolist()
