"""Issue 34 (item 6): a lone surrogate (`\\ud800` written as a JSON escape: no character, no UTF-8) in a
campaign's JSON lines is refused with the file and line by every reader, the way the answer and log
readers already refuse it (engine.formats.safeload.loads_json), never passed on to crash a later step."""
from __future__ import annotations

import json

import pytest

from _cli import cli, demo_copy
from engine.errors import CranfieldError

BAD = '{"id": "X\\ud800", "topic": "401", "doc": "D\\ud800", "op": "lease", "assessor": "ann", "ts": 1.0, ' \
      '"expires": 9999999999.0, "key": "k", "model": "m\\ud800", "name": "p", "double_fraction": 0.5}'


def _refused(exc, path, line):
    text = str(exc.value)
    assert f"{path}:{line}" in text and "lone surrogate" in text and "\\ud800" in text, text


def test_documents_reader(tmp_path):
    from engine.judging.auto import read_docs
    (tmp_path / "docs").mkdir()
    p = tmp_path / "docs" / "docs.jsonl"
    p.write_text('{"id": "A", "text": "fine"}\n' + BAD + "\n")
    with pytest.raises(CranfieldError) as exc:
        read_docs(tmp_path)
    _refused(exc, p, 2)


def test_reply_cache_reader(tmp_path):
    from engine.judging.auto import read_cache_lines
    p = tmp_path / "cache.jsonl"
    p.write_text('{"key": "a", "reply": "1"}\n' + BAD + "\n" + '{"key": "torn')
    with pytest.raises(CranfieldError) as exc:
        read_cache_lines(p)
    _refused(exc, p, 2)
    p.write_text('{"key": "a", "reply": "1"}\n{"key": "torn')      # a torn line is still skipped
    assert read_cache_lines(p) == [{"key": "a", "reply": "1"}]


def test_lease_reader(tmp_path):
    from engine.judging.sessions import read_leases
    (tmp_path / "judgments").mkdir()
    p = tmp_path / "judgments" / "leases.jsonl"
    p.write_text(BAD + "\n")
    with pytest.raises(CranfieldError) as exc:
        read_leases(tmp_path)
    _refused(exc, p, 1)


def test_pool_log_reader(tmp_path):
    from engine.judging.sessions import pool_double_fraction
    (tmp_path / "pools").mkdir()
    p = tmp_path / "pools" / "pools.log.jsonl"
    p.write_text('{"name": "p", "double_fraction": 0.1}\n' + BAD + "\n")
    with pytest.raises(CranfieldError) as exc:
        pool_double_fraction(tmp_path, "p")
    _refused(exc, p, 2)


def test_source_readers(tmp_path):
    c = demo_copy(tmp_path / "c")
    d = c / "judgments" / "sources"
    d.mkdir()
    (d / "llm-x.jsonl").write_text(BAD + "\n")
    r = cli("judgments", "sources", c)
    assert r.rc not in (0, 1) and "Traceback" not in r.text, r.text[-2000:]
    assert f"{d / 'llm-x.jsonl'}:1" in r.text and "lone surrogate" in r.text, r.text
    (d / "llm-x.jsonl").unlink()
    (d / "imp.qrels").write_text("401 0 D401-1 1\n")
    (d / "imp.meta.json").write_text(json.dumps({"kind": "imported"})[:-1] + ', "model": "m\\ud800"}')
    r = cli("judgments", "sources", c, in_process=True)
    assert r.rc not in (0, 1) and "Traceback" not in r.text, r.text[-2000:]
    assert f"{d / 'imp.meta.json'}:1" in r.text and "lone surrogate" in r.text, r.text


def test_judgments_next_with_a_surrogate_lease_is_a_clean_refusal(tmp_path):
    c = demo_copy(tmp_path / "c")
    assert cli("pool", c, "--strategy", "depth", "--depth", "80", "--name", "p", in_process=True).rc == 0
    (c / "judgments" / "leases.jsonl").write_text(BAD + "\n")
    r = cli("judgments", "next", c, "--topic", "401", "--pool", "p", "-k", "1", "--assessor", "bob")
    assert r.rc not in (0, 1) and "Traceback" not in r.text, r.text[-2000:]
    assert "leases.jsonl:1" in r.text and "lone surrogate" in r.text, r.text


def test_doclist_reader(tmp_path):
    """submission.doclist: a lone surrogate, a line that is no JSON object with an id: file:line."""
    from types import SimpleNamespace

    from engine.campaign.intake import _doclist
    p = tmp_path / "ids.txt"
    camp = SimpleNamespace(root=tmp_path, config_path=tmp_path / "campaign.yaml")
    for text, words in ((f"D1\n{BAD}\n", "lone surrogate"), ('D1\n{"id": \n', 'not a JSON object with an "id"'),
                        ('{"doc": "x"}\n', 'not a JSON object with an "id"')):
        p.write_text(text)
        with pytest.raises(CranfieldError) as exc:
            _doclist(camp, {"doclist": "ids.txt"})
        assert f"{p}:" in str(exc.value) and words in str(exc.value), str(exc.value)
    p.write_text('D1 x\n{"id": "D2"}\n# note\n')
    assert _doclist(camp, {"doclist": "ids.txt"}) == {"D1", "D2"}
