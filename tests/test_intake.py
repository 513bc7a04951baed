"""Submission intake: each defect refused with file:line, runs/ untouched; accepted runs in the leaderboard with
their metadata; the deadline closes intake."""
from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.errors import CranfieldError, FormatError
from engine.campaign.intake import submit

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


@pytest.fixture()
def camp(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    root.mkdir()
    (root / "runs").mkdir()
    (root / "judgments").mkdir()
    (root / "topics").mkdir()
    (root / "topics" / "topics.tsv").write_text("1\tfirst\n2\tsecond\n")
    (root / "judgments" / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    shutil.copy(DEMO / "runs" / "asterA1.txt", root / "runs" / "old.txt")
    (root / "runs" / "old.txt").write_text("1 Q0 a 1 2.0 old\n1 Q0 b 2 1.0 old\n2 Q0 c 1 1.0 old\n")
    (root / "campaign.yaml").write_text(
        "name: T  # test campaign\nevaluation:\n  depth: 3\n  measures: [map]\n"
        "submission:\n  max_runs_per_group: 2\n  doclist: docs.txt\n"
        "runs:\n  old:\n    group: g1\n    type: automatic\n    pooled: true\n")
    (root / "docs.txt").write_text("a\nb\nc\nd\ne\n")
    return root


def _write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p


def _state(root: Path):
    return sorted(x.name for x in (root / "runs").iterdir()), (root / "campaign.yaml").read_text()


def test_every_defect_refused_with_file_line(camp: Path, tmp_path: Path):
    bad = _write(tmp_path / "bad.txt",
                 "# ir_metadata: {software: x}\n"
                 "1 Q0 a 1 1.0 new\n"          # 2
                 "1 Q0 b 2 3.0 new\n"          # 3 score rises
                 "1 Q0 a 3 0.5 new\n"          # 4 duplicate doc
                 "1 Q0 zz 4 0.1 new\n"         # 5 not in collection, beyond depth 3
                 "1 Q0 d 4 0.05 new\n"         # 6 rank repeated, beyond depth
                 "1 Q0 e x 0.0 new\n"          # 7 rank not an integer
                 "1 Q0 e 6\n"                  # 8 five columns
                 "1 Q0 e 7 0.0 other\n")       # 9 second tag
    before = _state(camp)
    with pytest.raises(FormatError) as ei:
        submit(camp, [bad], group="g2")
    msgs = [str(p) for p in ei.value.problems]
    sp = str(bad)
    expect = [f"{sp}:3: topic 1: score 3 at rank 2 is higher than 1 at rank 1",
              f"{sp}:4: topic 1: document a repeated (first at line 2)",
              f"{sp}:5: document zz is not in the collection",
              f"{sp}:5: topic 1: 6 documents, more than the depth limit 3",
              f"{sp}:6: topic 1: rank 4 repeated (also line 5)",
              f"{sp}:7: rank 'x' is not an integer",
              f"{sp}:8: expected 6 columns",
              f"{sp}:9: run tag other differs from new (line 2)",
              f"{sp}: 1 campaign topic(s) missing: 2"]
    for e in expect:
        assert any(m.startswith(e) for m in msgs), (e, msgs)
    assert _state(camp) == before
    # tag already in the campaign, and the group's run limit
    dup = _write(tmp_path / "dup.txt", "1 Q0 a 1 1.0 old\n2 Q0 c 1 1.0 old\n")
    with pytest.raises(FormatError, match=r"dup.txt:1: run tag old is already in the campaign"):
        submit(camp, [dup])
    r1 = _write(tmp_path / "r1.txt", "1 Q0 a 1 1.0 r1\n2 Q0 c 1 1.0 r1\n")
    r2 = _write(tmp_path / "r2.txt", "1 Q0 a 1 1.0 r2\n2 Q0 c 1 1.0 r2\n")
    with pytest.raises(FormatError, match=r"r2.txt: group g1 already has 2 run\(s\); the limit is 2"):
        submit(camp, [r1, r2], group="g1")
    assert _state(camp) == before
    assert main(["submit", str(camp), str(bad)]) == 3


def test_accepted_run_in_leaderboard_with_metadata(camp: Path, tmp_path: Path, capsys):
    good = _write(tmp_path / "good.txt", "# ir_metadata: {software: {name: bm25}}\n"
                                         "1 Q0 a 1 2.0 good\n1 Q0 b 2 2.0 good\n2 Q0 c 1 1.0 good\n")
    assert main(["submit", str(camp), str(good), "--group", "g2", "--manual", "--priority", "1"]) == 0
    out = capsys.readouterr().out
    assert "accepted:" in out and "header: # ir_metadata" in out
    assert "1 topic(s) (1) have tied scores in an order evaluation changes" in out   # a before b: swapped
    text = (camp / "campaign.yaml").read_text()
    assert "# test campaign" in text                          # comments kept
    assert (camp / "runs" / "good.txt").read_bytes() == good.read_bytes()
    c = load_campaign(camp)
    meta = c.run_meta().set_index("run")
    assert meta.loc["good", "group"] == "g2" and meta.loc["good", "type"] == "manual"
    entry = c.config["runs"]["good"]
    assert entry["priority"] == 1 and entry["checksum"].startswith("sha256:") and entry["submitted"].endswith("Z")
    ev = c.evaluate(["map"])
    assert set(ev["run"].astype(str)) == {"old", "good"}
    from engine.campaign.tables import compare_scores
    assert "good" in compare_scores(ev, ["map"]).to_markdown()


def test_deadline_closes_intake(camp: Path, tmp_path: Path):
    (camp / "campaign.yaml").write_text((camp / "campaign.yaml").read_text().replace(
        "submission:\n", "submission:\n  deadline: '2026-01-01T00:00:00Z'\n"))
    good = _write(tmp_path / "late.txt", "1 Q0 a 1 1.0 late\n2 Q0 c 1 1.0 late\n")
    before = _state(camp)
    with pytest.raises(CranfieldError, match="intake closed at the deadline"):
        submit(camp, [good], now=datetime(2026, 1, 2, tzinfo=timezone.utc))
    assert _state(camp) == before
    assert main(["submit", str(camp), str(good)]) == 3
    submit(camp, [good], now=datetime(2026, 1, 2, tzinfo=timezone.utc), override_deadline=True)
    assert (camp / "runs" / "late.txt").is_file()


def test_report_shows_submitted_header(camp: Path, tmp_path: Path):
    good = _write(tmp_path / "h.txt", "# ir_metadata: {software: {name: bm25}}\n1 Q0 a 1 2.0 hdr\n2 Q0 c 1 1.0 hdr\n")
    submit(camp, [good], group="g3")
    out = tmp_path / "rep"
    assert main(["report", str(camp), "--run", "hdr", "--out", str(out)]) == 0
    assert "# ir_metadata: {software: {name: bm25}}" in (out / "hdr.md").read_text()
    assert "# ir_metadata: {software: {name: bm25}}" in (out / "hdr.html").read_text()


def test_pool_runs_per_group_by_priority(camp: Path, tmp_path: Path):
    from engine.campaign.intake import select_by_priority
    for tag, prio, g in (("p2", 2, "g9"), ("p1", 1, "g9"), ("q3", 3, "g8"), ("q1", 1, "g8")):
        submit(camp, [_write(tmp_path / f"{tag}.txt", f"1 Q0 a 1 1.0 {tag}\n2 Q0 c 1 1.0 {tag}\n")],
               group=g, priority=prio)
    c = load_campaign(camp)
    assert select_by_priority(c, None, 1) == ["old", "p1", "q1"]
    assert select_by_priority(c, None, 2) == ["old", "p1", "p2", "q1", "q3"]
    assert select_by_priority(c, ["p2", "q3", "old"], 1) == ["old", "p2", "q3"]
    assert main(["pool", str(camp), "--strategy", "depth", "--runs-per-group", "1", "--dry-run"]) == 0


def test_ties_already_in_trec_eval_order_give_no_note(camp: Path, tmp_path: Path):
    """A file in trec_eval's order (tied scores by descending document id) got one tie note per topic."""
    ordered = _write(tmp_path / "ordered.txt", "1 Q0 b 1 2.0 ordered\n1 Q0 a 2 2.0 ordered\n"
                                               "2 Q0 d 1 1.0 ordered\n2 Q0 c 2 1.0 ordered\n")
    res = submit(camp, [ordered], dry_run=True)
    assert not [n for n in res[0].notes if "tied" in str(n)]
    swapped = _write(tmp_path / "swapped.txt", "1 Q0 a 1 2.0 swapped\n1 Q0 b 2 2.0 swapped\n"
                                               "2 Q0 c 1 1.0 swapped\n2 Q0 d 2 1.0 swapped\n")
    notes = [str(n) for n in submit(camp, [swapped], dry_run=True)[0].notes if "tied" in str(n)]
    assert len(notes) == 1 and "2 topic(s) (1, 2) have tied scores" in notes[0]
