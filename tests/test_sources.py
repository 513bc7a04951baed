"""Judgment sources in a campaign: combining in `eval --judgments`, hole filling checked by hand."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.errors import FormatError
from engine.judgments.sources import combine_spec, combined_judgments, hole_filling, import_source, list_sources


def tiny(tmp_path: Path, extra_yaml: str = "") -> Path:
    d = tmp_path / "c"
    (d / "runs").mkdir(parents=True)
    (d / "judgments").mkdir()
    (d / "topics").mkdir()
    (d / "campaign.yaml").write_text("name: tiny\nrelevance:\n  binary_threshold: 1\nevaluation:\n"
                                     "  measures: [P.5]\n" + extra_yaml)
    (d / "topics" / "topics.tsv").write_text("1\tfirst topic\n")
    (d / "runs" / "A.txt").write_text("".join(f"1 Q0 d{i} {i} {10 - i} A\n" for i in range(1, 6)))
    (d / "runs" / "B.txt").write_text("".join(f"1 Q0 d{i} {i - 5} {20 - i} B\n" for i in range(6, 11)))
    # official: d1=1 d2=0 d4=1 d6=1 ; d3 d5 d7 d8 d9 d10 unjudged
    (d / "judgments" / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d4 1\n1 0 d6 1\n")
    src = tmp_path / "llm.qrels"
    # the LLM disagrees on d1 (ignored when official judged it) and fills d3 d5 d7 d8
    src.write_text("1 0 d1 0\n1 0 d3 1\n1 0 d5 0\n1 0 d7 1\n1 0 d8 1\n")
    import_source(d, src, "llm", kind="auto", model="m")
    return d


def test_hole_filling_by_hand(tmp_path, capsys):
    d = tiny(tmp_path)
    camp = load_campaign(d)
    assert [(s.name, s.kind) for s in list_sources(camp)] == [("human", "human"), ("llm", "auto")]
    t = hole_filling(camp, "llm").set_index("run")
    # run A top 5: d1 R, d2 N, d3 (llm R), d4 R, d5 (llm N): P@5 0.4 -> 0.6
    assert t.loc["A", "score"] == pytest.approx(0.4) and t.loc["A", "filled_score"] == pytest.approx(0.6)
    # run B: d6 R, d7 (llm R), d8 (llm R), d9 d10 unjudged: 0.2 -> 0.6; rank 2 -> tied first
    assert t.loc["B", "score"] == pytest.approx(0.2) and t.loc["B", "filled_score"] == pytest.approx(0.6)
    assert (t.loc["B", "rank"], t.loc["B", "filled_rank"], t.loc["B", "rank_change"]) == (2, 1, 1)
    assert t.attrs["filled"] == 4
    # which judgments the filled score used: 2 of A's 5 retrieved documents, 2 of B's 5, came from the LLM
    assert t.loc["A", "filled@10"] == pytest.approx(2 / 5) and t.loc["B", "filled@10"] == pytest.approx(2 / 5)
    # the same through the CLI
    assert main(["eval", "--campaign", str(d), "--judgments", "official+llm", "-m", "P.5", "-q"]) == 0
    out, err = capsys.readouterr()
    assert "P_5                   \t1\t0.6000" in out
    assert "3 from human" not in err and "4 from human, 4 from llm" in err
    assert main(["eval", "--campaign", str(d), "-m", "P.5"]) == 0
    out = capsys.readouterr()[0]                   # official only: A 0.4, B 0.2
    assert "\tall\t0.4000" in out and "\tall\t0.2000" in out and "0.6000" not in out


def test_campaign_combine_rule_and_errors(tmp_path):
    d = tiny(tmp_path, "sources:\n  official: human\n  combine: fill\n  fill: llm\n")
    camp = load_campaign(d)
    assert combine_spec(camp) == ("precedence", ["human", "llm"])
    q = combined_judgments(camp)
    assert dict(zip(q["doc"], q["source"]))["d3"] == "llm" and dict(zip(q["doc"], q["grade"]))["d1"] == 1
    d2 = tiny(tmp_path / "x", "sources:\n  combine: majority\n")
    with pytest.raises(FormatError, match="precedence"):
        combine_spec(load_campaign(d2))


def test_a_source_is_never_paired_with_a_part_of_itself(tmp_path):
    """human holds assessor:NAME: `official+assessor:ann` filled official with part of itself and Agreement
    compared human with assessor:ann (kappa 1.000 by construction)."""
    from engine.judging.workflow import record_judgment
    from engine.judgments.sources import agreement_pair, judgment_choices, nested
    d = tiny(tmp_path)
    for doc, g in (("d3", 1), ("d5", 0)):
        record_judgment(d, "1", doc, g, "ann", seconds=3.0)
    record_judgment(d, "1", "d7", 1, "bob", seconds=3.0)
    camp = load_campaign(d)
    assert [s.name for s in list_sources(camp)] == ["human", "assessor:ann", "assessor:bob", "llm"]
    assert nested(camp, "human", "assessor:ann") and nested(camp, "assessor:bob", "official")
    assert nested(camp, "llm", "llm") and not nested(camp, "human", "llm")
    assert not nested(camp, "assessor:ann", "assessor:bob")
    assert [s for s, _ in judgment_choices(camp)] == ["official", "official+llm"]
    assert agreement_pair(camp) == ("human", "llm")
    # without the imported source: the two assessors (double judging), never human vs one of them
    (d / "judgments" / "sources" / "llm.qrels").unlink()
    camp = load_campaign(d)
    assert agreement_pair(camp) == ("assessor:ann", "assessor:bob")
    assert [s for s, _ in judgment_choices(camp)] == ["official"]
