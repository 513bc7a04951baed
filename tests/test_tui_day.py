"""One organizer's day at 80x24, as a pilot test: init -> submit 3 runs (one refused) -> build a pool ->
two assessors judge 20 documents with leases -> an automatic judge (a loopback fake endpoint) fills the
holes -> agreement -> leaderboard with the J switch -> participant report -> export. After each step the
screens that show the changed thing show the new state, with no ctrl+r."""
from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from textual.widgets import Input

from engine.judging.auto import JudgeSettings, pooled_pairs, run_auto_judge
from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from test_autojudge import FakeLLM
from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import exported, press, run_async, screen_text, settle, write_pool

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
RUNS = ["asterA1", "birchA1", "cedarA1"]


def shown(app) -> str:
    """The screen's text with line breaks and runs of spaces as one space (a wrapped line reads whole)."""
    return " ".join(screen_text(app).split())


async def until(pilot, cond, seconds: float = 6.0) -> bool:
    """Wait (no key pressed) until cond() holds: the app notices file changes by itself."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        await asyncio.sleep(0.1)
    await pilot.pause()
    return cond()


async def submit(pilot, path: Path) -> object:
    await press(pilot, "h", "i")
    scr = pilot.app.screen
    scr.query_one("#submit-path", Input).value = str(path)
    await press(pilot, "enter")
    await settle(pilot)
    result = scr.result
    await press(pilot, "escape")
    await settle(pilot)
    return result


@run_async
async def test_an_organizers_day(tmp_path):
    camp = tmp_path / "day"
    assert main(["init", str(camp), "--name", "day"]) == 0
    shutil.copy(DEMO / "topics" / "topics.tsv", camp / "topics" / "topics.tsv")
    (camp / "docs").mkdir()
    shutil.copy(DEMO / "docs" / "docs.jsonl", camp / "docs" / "docs.jsonl")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for r in RUNS:
        shutil.copy(DEMO / "runs" / f"{r}.txt", inbox / f"{r}.txt")
    bad = (DEMO / "runs" / "deltaA1.txt").read_text().splitlines()
    bad[3] = "401 Q0 only-four"
    (inbox / "deltaA1.txt").write_text("\n".join(bad) + "\n")

    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "0 runs" in screen_text(app)
        # -- submit: three accepted, one refused with its line
        for r in RUNS[:2]:
            assert (await submit(pilot, inbox / f"{r}.txt")).accepted
        refused = await submit(pilot, inbox / "deltaA1.txt")
        assert not refused.accepted and any("deltaA1.txt:4" in ln for ln in refused.lines)
        assert (await submit(pilot, inbox / "cedarA1.txt")).accepted
        await press(pilot, "h")
        assert "3 runs" in screen_text(app) and sorted(p.stem for p in (camp / "runs").iterdir()) == RUNS

        # -- pool: depth 5 of the three runs, written; Judging and Home see it at once
        pooled = int((await write_pool(pilot, 5))["to_judge"].sum())
        assert pooled > 40
        await press(pilot, "j")
        assert app.screen.doc is not None and f"{pooled} left overall" in shown(app)

        # -- two assessors: ann in the app (10 documents), bob beside her through the engine's desk with leases
        topic = app.screen.topic
        ann_doc = app.screen.doc
        bob = CampaignModel.load(camp).judging
        bob_docs = []
        for _ in range(10):
            _, pt = bob.active_pool()
            todo = [d for d in pt[pt["topic"] == topic].sort_values("order")["doc"].astype(str)
                    if (topic, d) not in set(zip(bob.judged()["topic"], bob.judged()["doc"]))]
            d = bob.acquire(topic, todo, "bob", judged_by=bob.judged_by(), double=set(), seconds=600)
            assert d is not None and d != app.screen.doc          # never the document on ann's screen
            bob.record(topic, d, 1, "bob", 4.0, "depth")
            bob.release(topic, d, "bob", True)
            bob_docs.append(d)
        assert ann_doc not in bob_docs
        for i in range(10):
            assert app.screen.doc not in bob_docs
            await press(pilot, "1" if i % 3 else "0")
        judged_now = CampaignModel.load(camp).judging.judged()
        assert len(judged_now) == 20
        await press(pilot, "h")
        assert await until(pilot, lambda: f"{pooled - 20} left" in shown(app))

        # -- the first judgments give scores by themselves; the leaderboard lists the three runs
        await press(pilot, "l")
        assert await until(pilot, lambda: app.model.scores is not None and not app.busy, 20)
        await settle(pilot)
        assert sorted(app.screen._row_runs) == RUNS

        # -- an automatic judge fills the holes the assessors left (a loopback endpoint)
        c = load_campaign(camp)
        pairs = pooled_pairs(c)
        done = set(zip(judged_now["topic"].astype(str), judged_now["doc"].astype(str)))
        holes = pairs[[(t, d) not in done for t, d in zip(pairs["topic"].astype(str), pairs["doc"].astype(str))]]
        assert len(holes) == pooled - 20
        with FakeLLM() as srv:      # every pooled pair: the holes it fills, and the 20 to compare with the assessors
            # the fake model grades 0-3 and the campaign's scale is 0-2: map its 3 as `--grade-map 3=2` does
            res = run_auto_judge(c, "llm", JudgeSettings(srv.url, "fake-1", backoff=0.01, concurrency=4,
                                                         grade_map={3: 2}), pairs)
        assert res.judged == len(pairs) == pooled and not res.failed
        assert await until(pilot, lambda: "STALE" in screen_text(app))        # the leaderboard says so

        # -- agreement: two distinct sources by default (human vs the automatic judge), not a subset of itself
        await press(pilot, "k")
        await settle(pilot)
        scr = app.screen
        assert (scr.a, scr.b) == ("human", "llm")
        assert "human vs llm" in shown(app) and "documents judged by both: 20" in shown(app)

        # -- leaderboard, J: official or official+llm; never a source that is part of official
        await press(pilot, "l", "J")
        specs = [v for _, v in app.screen.options]
        assert specs == ["official", "official+llm"]
        await press(pilot, "down", "enter")
        await settle(pilot)
        assert app.model.scores.judgments == "official+llm" and "fill@10" in screen_text(app)
        assert "STALE" not in app.sub_title

        # -- participant report and export
        assert main(["report", str(camp), "--out", str(tmp_path / "reports")]) == 0
        assert {p.stem for p in (tmp_path / "reports").glob("*.md")} >= set(RUNS)
        await press(pilot, "e")
        out = camp / "exports"
        assert exported(out, "leaderboard", "csv") and exported(out, "leaderboard-significance", "md")
        assert not [n for n in app.notices if n.severity == "error"], app.notices
