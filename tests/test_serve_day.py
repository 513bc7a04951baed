"""A judging day with four assessors on one pool (issue 36, "Done when"): tom in the terminal UI (the
Judging screen under Textual's pilot), carl on the command line (`judgments next` / `judgments add` as
separate processes), bea and ben in two real headless Chromium browsers on `cranfield serve`. They judge
in turns; no document is judged by two of them, and after every judgment the engine's progress
(judging_progress, what Home and the topic picker show), the TUI's Judging screen, `cranfield status`
and both browsers show the same number left. The browsers' log lines carry their assessor and have the
form of the TUI's; a reload re-attaches a browser to the document it holds."""
from __future__ import annotations

import asyncio
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from _cli import ROOT, cli
from _serve import Browser, Served, chromium_missing
from tui.testing import deepen_demo_pool, private_copy, run_async, settle

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=f"no headless Chromium: {chromium_missing()}")

POOL = "day1"
ROUNDS = 2
LEFT = re.compile(r"(\d+) left overall")
DOC = re.compile(r"document (\S+) ·")


def left_on(screen: str) -> int | None:
    m = LEFT.search(screen)
    return int(m.group(1)) if m else None


def topic_left_on(screen: str) -> tuple[str, int] | None:
    """(topic, left in topic) from a Judging title line."""
    m = re.search(r"Topic (\S+) .*?(\d+) left in topic", screen)
    return (m.group(1), int(m.group(2))) if m else None


def doc_on(screen: str) -> str | None:
    m = DOC.search(screen)
    return m.group(1) if m else None


def status_left(camp) -> int:
    r = cli("status", camp, "--plain", in_process=True)
    m = re.search(rf"active pool:\s+{POOL}: (\d+) of (\d+) judged, (\d+) left", r.out)
    assert m, r.text
    return int(m.group(3))


@run_async
async def test_four_assessors_judge_one_pool_and_every_view_agrees(tmp_path):
    from engine.judging import tokens as tk
    from engine.judging.progress import judging_progress
    from tui.app import CranfieldApp

    camp = private_copy(ROOT / "campaigns" / "demo", tmp_path / "c", skip=("pools", "log.jsonl*"))
    deepen_demo_pool(camp, 60)
    r = cli("pool", camp, "--strategy", "depth", "--depth", "60", "--name", POOL, in_process=True)
    assert r.rc == 0, r.text
    tokens = {who: tk.add_token(camp, who)[1] for who in ("bea", "ben")}
    start = judging_progress(camp, POOL)
    srv = Served(camp)
    browsers: dict[str, Browser] = {}
    try:
        def open_browsers() -> None:                         # both at once, while the TUI opens
            with ThreadPoolExecutor(2) as ex:
                got = {w: ex.submit(Browser, srv.url, t) for w, t in tokens.items()}
                browsers.update({w: f.result() for w, f in got.items()})
            for w, b in browsers.items():
                b.wait_for(lambda s, w=w: f"assessor {w}" in s and doc_on(s), 60, f"{w}'s Judging screen")
        opening = asyncio.create_task(asyncio.to_thread(open_browsers))
        app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="tom")
        async with app.run_test(size=(110, 30)) as pilot:
            await settle(pilot)
            await pilot.press("j")
            await settle(pilot)
            tui = app.screen
            await opening
            judged: list[tuple[str, str, str]] = []          # (assessor, topic, doc) in judging order

            async def everyone_agrees() -> None:
                want = judging_progress(camp, POOL)
                assert want.left == start.left - len(judged)
                assert status_left(camp) == want.left
                app.check_files()
                tui.draw()
                from textual.widgets import Static
                title = str(tui.query_one("#judge-title", Static).render())
                t, n = topic_left_on(title)
                assert left_on(title) == want.left and n == want.topic(t)[2]

                def same(s: str) -> bool:
                    tl = topic_left_on(s)
                    return left_on(s) == want.left and tl is not None and tl[1] == want.topic(tl[0])[2]
                for w, b in browsers.items():
                    b.wait_for(same, 10, f"{want.left} left overall on {w}'s screen, and the topic's count")

            for _ in range(ROUNDS):
                # tom, in the terminal UI
                topic, doc = tui.topic, tui.doc
                assert doc is not None
                await pilot.press("1")
                await settle(pilot, 1)
                judged.append(("tom", topic, doc))
                await everyone_agrees()
                # carl, on the command line (separate processes)
                r = cli("judgments", "next", camp, "--topic", "401", "--pool", POOL, "-k", "1", "--assessor", "carl")
                assert r.rc == 0, r.text
                t, d = r.out.split()
                r = cli("judgments", "add", camp, t, d, "0", "--assessor", "carl")
                assert r.rc == 0, r.text
                judged.append(("carl", t, d))
                await everyone_agrees()
                # bea and ben, in their browsers
                for w, b in browsers.items():
                    s = b.screen()
                    d, t = doc_on(s), re.search(r"Topic (\S+)", s).group(1)
                    b.press("2")
                    b.wait_for(lambda s, d=d: doc_on(s) not in (None, d), 15, f"{w}'s next document")
                    judged.append((w, t, d))
                    await everyone_agrees()
            # a reload re-attaches bea to the document she holds
            held = doc_on(browsers["bea"].screen())
            browsers["bea"].reload()
            s = browsers["bea"].wait_for(lambda s: "assessor bea" in s and doc_on(s), 30, "bea's desk after reload")
            assert doc_on(s) == held
            await pilot.press("q")
    finally:
        for b in browsers.values():
            b.quit()
        log_text = srv.stop()

    # no document judged by two people; each judgment is in the log under its assessor
    keys = [(t, d) for _, t, d in judged]
    assert len(set(keys)) == len(keys) == 4 * ROUNDS, judged
    lines = [json.loads(x) for x in (camp / "judgments" / "log.jsonl").read_text().splitlines()]
    logged = [(x["assessor"], x["topic"], x["doc"]) for x in lines if x.get("op", "judge") == "judge"]
    assert sorted(logged) == sorted(judged)
    prog = judging_progress(camp, POOL)
    by = dict(zip(prog.assessors["assessor"], prog.assessors["judged"]))
    assert {w: by.get(w) for w in ("tom", "carl", "bea", "ben")} == dict.fromkeys(("tom", "carl", "bea", "ben"), ROUNDS)
    # the browsers' lines: their assessor, the grade pressed, the form of the terminal UI's lines
    tom = [x for x in lines if x["assessor"] == "tom"]
    for w in ("bea", "ben"):
        mine = [x for x in lines if x["assessor"] == w]
        assert len(mine) == ROUNDS and all(x["grade"] == 2 for x in mine)
        assert all(set(x) == set(tom[0]) and x["action"] == "judge" and x["strategy"] == tom[0]["strategy"]
                   for x in mine)
        assert all(x["seconds"] > 0 for x in mine)
    assert "bea: session started" in log_text and "ben: session started" in log_text
