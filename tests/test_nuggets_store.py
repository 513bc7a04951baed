"""Append-only nugget and assignment stores: provenance, edit history, sources apart, undo, safety."""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.errors import CranfieldError, FormatError, Warnings
from engine.nuggets import store as S


def test_provenance_and_history(tmp_path):
    ids = S.add_nuggets(tmp_path, "t1", [("Paris is the capital", "vital"), ("It has 2M people", "okay")],
                        by="llm", provenance="llm", model="m-7b", prompt_version="nug-v1")
    assert ids == ["n1", "n2"]
    assert S.add_nuggets(tmp_path, "t1", [("Seine river", "okay")], by="ann") == ["n3"]
    before = S.nuggets_path(tmp_path).read_bytes()
    S.edit_nugget(tmp_path, "t1", "n2", text="About 2.1M people live there", by="ann")
    S.edit_nugget(tmp_path, "t1", "n3", importance="vital", by="ann")
    after = S.nuggets_path(tmp_path).read_bytes()
    assert after.startswith(before)                      # append-only
    cur = S.current_nuggets(tmp_path, "t1").set_index("nugget")
    assert cur.loc["n1", "provenance"] == "llm" and cur.loc["n1", "model"] == "m-7b"
    assert cur.loc["n2", "provenance"] == "post-edited" and cur.loc["n2", "text"] == "About 2.1M people live there"
    assert cur.loc["n2", "model"] == "m-7b" and cur.loc["n2", "edits"] == 1
    assert cur.loc["n3", "provenance"] == "person" and cur.loc["n3", "importance"] == "vital"
    hist = S.nugget_history(tmp_path, "t1", "n2")
    assert [h["op"] for h in hist] == ["create", "edit"] and hist[0]["text"] == "It has 2M people"

    m = S.merge_nuggets(tmp_path, "t1", ["n1", "n3"], "Paris, on the Seine, is the capital", "vital", by="bob")
    assert m == "n4"
    parts = S.split_nugget(tmp_path, "t1", "n2", [("2.1M people", "okay"), ("in the city proper", "okay")])
    assert parts == ["n5", "n6"]
    cur = S.current_nuggets(tmp_path, "t1").set_index("nugget")
    assert list(cur.index) == ["n4", "n5", "n6"]
    assert cur.loc["n4", "provenance"] == "post-edited"   # one of the merged nuggets came from the LLM
    assert cur.loc["n5", "provenance"] == "post-edited"
    assert [h["op"] for h in S.nugget_history(tmp_path, "t1", "n4")] == ["create", "create", "edit", "merge"]
    with pytest.raises(CranfieldError, match="no nugget n1 in force"):
        S.edit_nugget(tmp_path, "t1", "n1", text="x")
    S.retire_nugget(tmp_path, "t1", "n6")
    assert list(S.current_nuggets(tmp_path, "t1")["nugget"]) == ["n4", "n5"]


def test_bad_inputs_refused(tmp_path):
    with pytest.raises(CranfieldError, match="importance 'high'"):
        S.add_nuggets(tmp_path, "t1", [("x", "high")])
    with pytest.raises(CranfieldError, match="non-empty"):
        S.add_nuggets(tmp_path, "t1", [("  ", "vital")])
    with pytest.raises(CranfieldError, match="records its model"):
        S.add_nuggets(tmp_path, "t1", [("x", "vital")], provenance="llm")
    with pytest.raises(CranfieldError, match="assignment 'yes'"):
        S.assign(tmp_path, "ann", [("r", "t1", "n1", "yes")])
    with pytest.raises(CranfieldError, match="source name"):
        S.assign(tmp_path, "../x", [("r", "t1", "n1", "support")])


def test_sources_apart_and_undo(tmp_path):
    S.assign(tmp_path, "ann", [("r1", "t1", "n1", "support"), ("r1", "t1", "n2", "not_support")])
    S.assign(tmp_path, "auto-m", [("r1", "t1", "n1", "partial_support")], kind="llm", model="m")
    S.assign(tmp_path, "ann", [("r1", "t1", "n2", "partial_support")])
    S.undo_assign(tmp_path, "ann", "r1", "t1", "n2")
    a = S.read_assignments(tmp_path, "ann").set_index("nugget")
    assert a.loc["n1", "label"] == "support" and a.loc["n2", "label"] == "not_support"
    b = S.read_assignments(tmp_path, "auto-m")
    assert list(b["label"]) == ["partial_support"] and list(b["kind"]) == ["llm"]
    assert S.list_sources(tmp_path) == ["ann", "auto-m"]


def test_torn_tail_and_malformed_line(tmp_path):
    S.assign(tmp_path, "ann", [("r1", "t1", "n1", "support")])
    p = S.assign_path(tmp_path, "ann")
    with open(p, "ab") as fh:
        fh.write(b'{"op": "assign", "run": "r1", "to')
    w = Warnings()
    assert len(S.read_assignments(tmp_path, "ann", w)) == 1
    assert ":2: last line is cut off" in str(list(w)[0])
    S.assign(tmp_path, "ann", [("r1", "t1", "n2", "support")])     # the next writer moves the fragment away
    assert len(S.read_assignments(tmp_path, "ann")) == 2
    assert os.path.exists(str(p) + ".torn")
    with open(p, "ab") as fh:
        fh.write(json.dumps({"op": "assign", "run": "r1", "topic": "t1", "nugget": "n3", "label": "maybe"}).encode()
                 + b"\n")
    with pytest.raises(FormatError, match=f'{p}:3: "label" must be one of'):
        S.read_assignments(tmp_path, "ann")


def test_symlinked_store_outside_refused(tmp_path):
    camp, outside = tmp_path / "c", tmp_path / "elsewhere"
    camp.mkdir()
    outside.mkdir()
    (camp / "nuggets").symlink_to(outside)
    with pytest.raises(FormatError, match="outside the campaign directory"):
        S.add_nuggets(camp, "t1", [("x", "vital")])
    assert not any(outside.iterdir())


def test_concurrent_adds_get_distinct_ids(tmp_path):
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda i: S.add_nuggets(tmp_path, "t1", [(f"fact {i}", "okay")], by=f"p{i}"), range(16)))
    ids = [x for g in got for x in g]
    assert sorted(ids, key=lambda s: int(s[1:])) == [f"n{i}" for i in range(1, 17)]
    assert len(S.current_nuggets(tmp_path)) == 16
