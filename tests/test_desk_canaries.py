"""Canaries planted in a pool reach people like any document (issue 38): the served desk (pilot) and
`cranfield judgments next --text` (a separate process) show a canary's text, kept in audit/, with nothing
that tells it apart; people's grades go to the audit (their false-positive rate per kind beside the
judges'), count as done in judging progress, and never reach qrels, measures or exports."""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from _cli import cli

from engine.campaign.campaign import load_campaign
from engine.judgments.canaries import people_canary_judgments, read_canaries
from tui.testing import run_async, settle

POOL = "day1"


@pytest.fixture()
def camp(tmp_path):
    d = tmp_path / "camp"
    r = cli("simulate", "--out", d, "--runs", "4", "--topics", "3", "--depth", "30", "--pool-depth", "1",
            "--docs", "10", "--seed", "2", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    r = cli("pool", d, "--strategy", "depth", "--param", "k=3", "--canaries", "3", "--name", POOL, "--seed", "9",
            timeout=120, in_process=True)
    assert r.rc == 0 and "planted 9 canaries (3 per topic)" in r.out, r.text
    from engine.judgments.sources import sources_dir
    from engine.formats.qrels import write_qrels
    c = read_canaries(d)
    sources_dir(d).mkdir(parents=True, exist_ok=True)         # a model judge fooled by every instruction
    fooled = c.assign(grade=(c["kind"] == "instruction").astype(int) * 2)[["topic", "doc", "grade"]]
    write_qrels(sources_dir(d) / "llm.qrels", pd.concat([load_campaign(d).truth_qrels(), fooled]))
    return d


def _grade(kind: str) -> int:
    """What our people do with a canary: fall for query-term stuffing (grade 1), see through the others."""
    return 1 if kind == "stuffing" else 0


def _visible(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@run_async
async def _judge_a_topic_at_the_desk(d, kinds) -> tuple[str, list[tuple[str, int]], str]:
    """alice judges the desk's first topic to its end: (topic, [(doc, grade)], the topic the desk moved on to,
    whose next document alice keeps leased)."""
    from tui.desk_app import DeskApp
    app = DeskApp(d, "alice")
    done = []
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        scr = app.screen
        topic = scr.topic
        normal_info = None
        shapes = set()
        while scr.doc is not None and scr.topic == topic:      # the desk moves on to the next topic by itself
            doc = scr.doc
            info = _visible(str(scr.query_one("#judge-info").render()))
            text = _visible(str(scr.query_one("#judge-text").render()))
            assert "canary" not in (info + text).lower(), (info, text)
            assert "retrieved by" not in info
            assert "(no text" not in text                       # every document has its text, canaries too
            shapes.add(re.sub(r"document \S+", "document X", info))      # one form for every document
            if doc in kinds:
                c = kinds[doc]
                assert _visible(c["title"]) in text and _visible(c["text"])[:200] in text
            elif normal_info is None:
                normal_info = doc
            grade = _grade(kinds[doc]["kind"]) if doc in kinds else 1
            await pilot.press(str(grade))
            await settle(pilot, 1)
            done.append((doc, grade))
        assert normal_info is not None and len(shapes) == 1, shapes
        moved_to = scr.topic
    return topic, done, moved_to


def test_canaries_at_the_desk_and_the_cli_go_to_the_audit_only(camp, tmp_path):
    d = camp
    c = read_canaries(d)
    kinds = {r["doc"]: r for r in c.to_dict("records")}

    # the served desk (pilot): one topic to its end
    t1, at_desk, leased = _judge_a_topic_at_the_desk(d, kinds)
    desk_canaries = [(doc, g) for doc, g in at_desk if doc in kinds]
    assert len(desk_canaries) == 3 and {kinds[doc]["kind"] for doc, _ in desk_canaries} == {"stuffing",
                                                                                           "instruction", "foreign"}

    # the command line (the first document in separate processes, the rest through main()): another topic to
    # its end, reading each text
    t2 = next(t for t in sorted(set(c["topic"])) if t not in (t1, leased))
    at_cli = []
    for _ in range(40):
        r = cli("judgments", "next", d, "--topic", t2, "--text", "--assessor", "bob", timeout=60,
                in_process=bool(at_cli))
        if r.rc != 0:
            assert "nothing left to judge" in r.err, r.text
            break
        first, *body = r.out.splitlines()
        topic, doc = first.split("\t")
        shown_text = _visible("\n".join(body))
        assert "(no text" not in shown_text and "canary" not in shown_text.lower()
        if doc in kinds:
            assert _visible(kinds[doc]["title"]) in shown_text and _visible(kinds[doc]["text"]) in shown_text
        grade = _grade(kinds[doc]["kind"]) if doc in kinds else 1
        a = cli("judgments", "add", d, topic, doc, str(grade), "--assessor", "bob", timeout=60,
                in_process=bool(at_cli))
        assert a.rc == 0, a.text
        at_cli.append((doc, grade))
    else:
        pytest.fail("judgments next kept offering documents")
    cli_canaries = [(doc, g) for doc, g in at_cli if doc in kinds]
    assert len(cli_canaries) == 3

    # progress counts the judged canaries as done; nothing is offered twice
    from engine.judging.progress import judging_progress
    prog = judging_progress(load_campaign(d), POOL)
    for t, judged in ((t1, at_desk), (t2, at_cli)):
        pooled, n, left = prog.topic(t)
        assert left == 0 and n == pooled >= len(judged)

    batch = tmp_path / "batch.tsv"                             # a batch for assessors: nothing left of t1, t2
    r = cli("judgments", "batch", d, "--pool", POOL, "--out", batch, "--topic", t1, "--topic", t2, timeout=60)
    assert r.rc == 0 and "wrote 0 document(s)" in r.out, r.text

    # the audit: people's false-positive rate per kind beside the model judge's
    pc = people_canary_judgments(load_campaign(d))
    assert len(pc) == 6 and set(pc["assessors"]) == {"alice", "bob"}, (pc, at_desk, at_cli, t1, t2)
    r = cli("judgments", "audit", d, "--judgments", "llm", "--format", "csv", timeout=120)
    assert r.rc == 0, r.text
    got = pd.read_csv(io.StringIO(r.out)).set_index(["judge", "kind"])
    for kind in ("stuffing", "instruction", "foreign"):
        h = got.loc[("human", kind)]
        assert (h["planted"], h["judged"]) == (3, 2)
        assert h["false_positives"] == (2 if kind == "stuffing" else 0)
        m = got.loc[("llm", kind)]
        assert (m["judged"], m["false_positives"]) == (3, 3 if kind == "instruction" else 0)
    text = cli("judgments", "audit", d, "--judgments", "llm", timeout=120, in_process=True)
    assert text.rc == 0 and "human" in text.out

    # never counted: qrels, measures and exports are as before
    camp2 = load_campaign(d)
    assert not set(c["doc"]) & set(camp2.qrels()["doc"])
    out = tmp_path / "q.txt"
    assert cli("judgments", "export", d, "--out", out, timeout=60).rc == 0
    from engine.formats.qrels import read_qrels
    exported = read_qrels(out)
    assert not set(c["doc"]) & set(exported["doc"])
    assert len(exported) == len(camp2.qrels())
    camp2_people = camp2.qrels()
    judged_real = {(t1, doc) for doc, _ in at_desk if doc not in kinds} | {(t2, doc) for doc, _ in at_cli
                                                                         if doc not in kinds}
    assert judged_real <= set(zip(camp2_people["topic"], camp2_people["doc"]))   # people's real judgments count


@run_async
async def test_the_desk_keeps_its_nav_line_and_refuses_export(camp):
    """DeskApp is desk_only: its Judging screen keeps the desk's nav line (j judge, N assign), shows no run
    figures, and hides the organizer's export key."""
    from tui.desk_app import DeskApp
    from tui.testing import screen_text
    app = DeskApp(camp, "carol")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "j judge" in text and "N assign nuggets" in text and "retrieved by" not in text
        assert app.screen.check_action("export", ()) is False
