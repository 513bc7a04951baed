"""Screens follow other writers and every view counts progress alike (issue 36 items 1, 2, 4): a CLI assessor
(a separate process) judges the document on the Judging screen and within a second the screen moves on,
with Home, Judging, the topic picker and `cranfield status` showing the same left / judged numbers; a TUI
lease refuses `judgments add` without --override-lease and the TUI's own recording checks leases; the Assign
screen follows `cranfield nuggets assign`; Home, the topic picker, `judgments next` without --pool and
`status` agree on a campaign whose newest pool is partly judged; exports say which judgments and when, in
their names and files, and never replace an earlier one."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from _cli import cli as _cli
from tui.app import CranfieldApp
from tui.testing import exported, press, private_copy, run_async, screen_text, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def cli(*args, assessor: str | None = None, in_process: bool = False) -> subprocess.CompletedProcess:
    """`cranfield ARGS` in a fresh process (`in_process`: through main() in this one)."""
    if in_process:
        r = _cli(*args, in_process=True, env={"COLUMNS": "200", **({"CRANFIELD_ASSESSOR": assessor} if assessor else {})})
        return subprocess.CompletedProcess(list(map(str, args)), r.rc, r.out, r.err)
    env = {**ENV, "CRANFIELD_ASSESSOR": assessor} if assessor else ENV
    return subprocess.run([sys.executable, "-m", "cranfield.cli", *map(str, args)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


async def cli_async(*args) -> subprocess.CompletedProcess:
    """A CLI process run while the app keeps running (its poll and screens go on meanwhile)."""
    p = await asyncio.create_subprocess_exec(sys.executable, "-m", "cranfield.cli", *map(str, args), env=ENV,
                                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await p.communicate()
    return subprocess.CompletedProcess(args, p.returncode, out.decode(), err.decode())


async def when(pred, limit: float = 30.0) -> float:
    """The wall-clock time `pred()` first holds (checked every 20 ms while the app runs), or inf."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return time.time()
        await asyncio.sleep(0.02)
    return float("inf")


def demo_with_pool(tmp_path) -> Path:
    """The demo with a depth-60 pool written (the newest): documents left in most topics."""
    from tui.model import CampaignModel
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    m = CampaignModel.load(camp)
    m.write_pool("day1", m.build_pool("depth", None, depth=60, seed=0, pooled=None))
    return camp


def status_pool(camp: Path) -> tuple[int, int, int, dict[str, int]]:
    """`cranfield status`'s active pool line (judged, pooled, left) and its per-topic "pool left"."""
    out = cli("status", camp, "--plain")
    assert out.returncode == 0, out.stderr
    m = re.search(r"active pool:\s*\S+: (\d+) of (\d+) judged, (\d+) left", out.stdout)
    assert m, out.stdout
    lines = out.stdout.splitlines()
    head_i = next(i for i, ln in enumerate(lines) if "pool left" in ln and "topic" in ln)
    cols = re.split(r"\s{2,}", lines[head_i].strip())
    per = {}
    for ln in lines[head_i + 1:]:
        cells = re.split(r"\s{2,}", ln.strip())
        if len(cells) != len(cols) or not cells[0]:
            break
        row = dict(zip(cols, cells))
        per[row["topic"]] = int(row["pool left"])
    return int(m[1]), int(m[2]), int(m[3]), per


def home_pool(app) -> tuple[int, int, int]:
    m = re.search(r"active pool \S+: (\d+) of (\d+) judged, (\d+) left", " ".join(screen_text(app).split()))
    assert m, screen_text(app)
    return int(m[1]), int(m[2]), int(m[3])


def judge_title(app) -> tuple[int, int, int, int]:
    """Judging's title: (judged, pooled, left in topic, left overall)."""
    m = re.search(r"(\d+) of (\d+) judged, (\d+) left in topic, (\d+) left overall",
                  " ".join(screen_text(app).split()))
    assert m, screen_text(app)
    return tuple(int(x) for x in m.groups())


async def picker_row(pilot, topic: str) -> str:
    """The topic picker's option of `topic` (t on Judging; escape closes it)."""
    await press(pilot, "t")
    row = next(label for label, value in pilot.app.screen.options if value == topic)
    await press(pilot, "escape")
    return row


# ---------------------------------------------------------------------------- item 2: Judging follows

@run_async
async def test_a_cli_judgment_of_the_document_on_screen_moves_judging_on_within_a_second(tmp_path):
    from engine.judging.progress import judging_progress
    camp = demo_with_pool(tmp_path)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="organizer")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        scr = app.screen
        topic, doc = scr.topic, scr.doc
        assert doc is not None
        before = judging_progress(camp)
        assert judge_title(app)[3] == before.left > 0
        watch = asyncio.ensure_future(when(lambda: scr.doc != doc))
        out = await cli_async("judgments", "add", camp, topic, doc, "1", "--assessor", "alice", "--override-lease")
        assert out.returncode == 0, out.stderr
        moved = await watch - (camp / "judgments" / "log.jsonl").stat().st_mtime   # from alice's write
        await pilot.pause()
        assert scr.doc != doc, "the Judging screen still offers the document alice judged"
        assert moved < 1.5, f"moved on {moved:.2f} s after alice's judgment was written"
        print(f"Judging moved off the document alice judged {moved:.2f} s after the log was written")
        assert any(f"{doc} was judged by alice" in n.message for n in app.notices)
        now = judging_progress(camp)
        assert now.left == before.left - 1
        pooled_t, judged_t, left_t = now.topic(scr.topic)
        assert judge_title(app) == (judged_t, pooled_t, left_t, now.left)       # Judging's counts followed
        row = await picker_row(pilot, str(topic))
        t_left = now.topic(topic)[2]
        assert row.endswith(f", {t_left} left") if t_left else "left" not in row
        await press(pilot, "h")
        assert home_pool(app) == (now.judged, now.pooled, now.left)
        judged_s, pooled_s, left_s, per = status_pool(camp)
        assert (judged_s, pooled_s, left_s) == (now.judged, now.pooled, now.left)
        assert per[str(topic)] == t_left
        home = app.model.pool_progress().set_index("topic")
        assert int(home.loc[str(topic), "left"]) == t_left
        # the lease: the document now on screen is organizer's; alice's `judgments next` gets another
        nxt = cli("judgments", "next", camp, "--topic", scr.topic, "-k", "1", assessor="alice")
        assert nxt.returncode == 0, nxt.stderr
        assert nxt.stdout.split()[1] != scr.doc
        await pilot.press("q")


# ---------------------------------------------------------------------------- item 1: leases both ways

@run_async
async def test_a_tui_lease_refuses_judgments_add_and_the_tui_checks_leases_too(tmp_path):
    from engine.judging import sessions
    from engine.judging.workflow import log_path, read_log
    camp = demo_with_pool(tmp_path)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="organizer")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        scr = app.screen
        topic, doc = scr.topic, scr.doc
        out = cli("judgments", "add", camp, topic, doc, "1", "--assessor", "alice")
        assert out.returncode == 5, (out.returncode, out.stdout, out.stderr)
        assert f"topic {topic} doc {doc} is leased to organizer until" in out.stderr
        assert "--override-lease" in out.stderr
        assert not log_path(camp).exists() or not len(read_log(log_path(camp)))
        # alice leases the next document through the CLI; the TUI may not record it (its desk checks leases)
        nxt = cli("judgments", "next", camp, "--topic", topic, "-k", "1", assessor="alice")
        theirs = nxt.stdout.split()[1]
        assert theirs != doc
        with pytest.raises(sessions.LeaseHeld, match="leased to alice"):
            app.model.judging.record(topic, theirs, 1, "organizer", 2.0, "depth")
        await press(pilot, "1")                         # organizer grades its own document: recorded
        log = read_log(log_path(camp))
        assert list(zip(log["doc"], log["assessor"])) == [(doc, "organizer")]
        assert scr.doc not in (doc, theirs)
        await pilot.press("q")


# ---------------------------------------------------------------------------- item 2: Assign follows

@run_async
async def test_the_assign_screen_follows_nuggets_assign(tmp_path):
    from engine.nuggets.simulate import simulate_rag, write_rag_campaign
    camp = write_rag_campaign(simulate_rag(3, 2, nuggets=(2, 3), seed=4), tmp_path / "c", with_nuggets=True)
    app = CranfieldApp(camp, assessor="ann")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "N", "enter")
        scr = app.screen
        assert type(scr).__name__ == "AssignModeScreen"
        ans, nug = scr.current()
        run, nid = ans[scr.a].run, str(nug["nugget"].iat[scr.k])
        m = re.search(r"done (\d+)/(\d+)", screen_text(app))
        done, total = int(m[1]), int(m[2])
        assert "not assigned yet" in screen_text(app)
        before = {p: p.stat().st_mtime for p in (camp / "nuggets").rglob("*") if p.is_file()}
        watch = asyncio.ensure_future(when(lambda: f"done {done + 1}/{total}" in screen_text(app)))
        out = await cli_async("nuggets", "assign", camp, run, scr.topic, nid, "support", "--by", "bob")
        assert out.returncode == 0, out.stderr
        written = max(p.stat().st_mtime for p in (camp / "nuggets").rglob("*")
                      if p.is_file() and before.get(p) != p.stat().st_mtime)
        took = await watch - written
        text = screen_text(app)
        assert f"done {done + 1}/{total}" in text and "now: support" in text, text
        assert took < 1.5, f"followed {took:.2f} s after the assignment was written"
        print(f"Assign followed `nuggets assign` {took:.2f} s after its store was written")
        await pilot.press("q")


# ---------------------------------------------------------------------------- item 1: one count everywhere

CONFIG = textwrap.dedent("""\
    name: Newer pool
    relevance:
      scale:
        0: {label: not relevant, gain: 0}
        1: {label: relevant, gain: 1}
      binary_threshold: 1
    evaluation:
      depth: 100
      measures: [map, P.10]
    pool:
      strategy: depth
      depth: 5
    """)


def newer_pool_campaign(root: Path) -> Path:
    """Topics 1-2, two runs of 12 documents; imported judgments: topic 1 d1..d5 (the depth-5 pool, in full)
    and topic 2 d1, d5..d12 (nine, most outside the pool); pools/pool-day1.tsv (newest) holds topic 1
    d1..d6 and topic 2 d1..d4: 1 and 3 left."""
    for sub in ("runs", "topics", "judgments", "pools"):
        (root / sub).mkdir(parents=True)
    (root / "campaign.yaml").write_text(CONFIG)
    for tag, shift in (("alpha", 0), ("beta", 3)):
        lines = [f"{t} Q0 d{(i + shift) % 12 + 1} {i + 1} {20 - i} {tag}" for t in (1, 2) for i in range(12)]
        (root / "runs" / f"{tag}.txt").write_text("\n".join(lines) + "\n")
    (root / "topics" / "topics.tsv").write_text("1\tfirst topic\n2\tsecond topic\n")
    q = [f"1 0 d{i} {i % 2}" for i in range(1, 6)] + [f"2 0 d{i} {i % 2}" for i in (1, *range(5, 13))]
    (root / "judgments" / "qrels.txt").write_text("\n".join(q) + "\n")
    rows = [("1", f"d{i}") for i in range(1, 7)] + [("2", f"d{i}") for i in range(1, 5)]
    (root / "pools" / "pool-day1.tsv").write_text("topic\tdoc\tstratum\tprob\tmethod\torder\n" + "".join(
        f"{t}\t{d}\t1\t1.0\tdepth\t{i + 1}\n" for i, (t, d) in enumerate(rows)))
    return root


@run_async
async def test_home_picker_next_and_status_agree_on_a_newer_partly_judged_pool(tmp_path):
    camp = newer_pool_campaign(tmp_path / "c")
    judged_s, pooled_s, left_s, per = status_pool(camp)
    assert (judged_s, pooled_s, left_s) == (6, 10, 4) and per == {"1": 1, "2": 3}
    nxt = cli("judgments", "next", camp, "--topic", "2", "-k", "1", assessor="carol")    # no --pool
    assert nxt.returncode == 0 and nxt.stdout.split() == ["2", "d2"], (nxt.stdout, nxt.stderr)
    assert "pool day1 (the newest in pools/), topic 2: 1 of 4 judged, 3 left" in nxt.stderr
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="organizer")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = " ".join(screen_text(app).split())
        assert "Topics fully judged: 0/2" in text, text          # was 2/2: topic 2 has 9 judgments, 4 pooled
        assert home_pool(app) == (6, 10, 4)
        row = app.screen.query_one("#home-progress").get_row("2")
        assert row[1] == "9/12"                                  # 9 judged of 9 + 3 left (was 9/9)
        await press(pilot, "j")
        assert app.screen.topic == "1" and app.screen.doc == "d6"
        assert judge_title(app) == (5, 6, 1, 4)
        assert await picker_row(pilot, "2") == "2  9/12 judged, 3 left"
        assert await picker_row(pilot, "1") == "1  5/6 judged, 1 left"
        await pilot.press("q")


# ---------------------------------------------------------------------------- item 4: exports say what they are

@run_async
async def test_tui_exports_name_their_judgments_and_time_and_never_replace_one(tmp_path):
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    out = tmp_path / "exports"
    app = CranfieldApp(camp, export_dir=out)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        n = int((app.model.judgments()["grade"] >= 0).sum())
        await press(pilot, "h", "e")
        await press(pilot, "e")                                  # the same table again, the same second maybe
        await pilot.press("q")
    files = {x: exported(out, "pool-progress", x) for x in ("csv", "md", "tex", "about.json")}
    assert [len(f) for f in files.values()] == [2, 2, 2, 2], sorted(p.name for p in out.iterdir())
    assert len(list(out.iterdir())) == 8
    for i in range(2):
        name = files["csv"][i].name
        assert re.fullmatch(rf"pool-progress_official_{n}j_\d{{8}}T\d{{6}}Z(-2)?\.csv", name), name
        about = json.loads(files["about.json"][i].read_text())
        assert about["judgments"] == "official" and about["judgment_count"] == n and about["rows"] == 20
        assert about["exported_utc"].endswith("Z") and about["files"][0] == name
        md = files["md"][i].read_text().splitlines()
        assert md[0].startswith("pool-progress · judgments: official") and f"({n:,} in force)" in md[0]
        assert md[0].endswith("· campaign Demo track") and " UTC" in md[0]
        assert files["tex"][i].read_text().startswith("% pool-progress · judgments: official")
    assert files["csv"][0].read_text() == files["csv"][1].read_text()


def test_judgments_export_says_what_it_is_and_refuses_to_replace_a_file(tmp_path):
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    q = tmp_path / "q.qrels"
    first = cli("judgments", "export", camp, "--out", q)
    assert first.returncode == 0, first.stderr
    about = json.loads((tmp_path / "q.qrels.about.json").read_text())
    n = len(q.read_text().splitlines())
    assert about["judgments"] == "official" and about["judgment_count"] == n == about["lines"] > 1000
    assert f"judgments official, {n:,} in force, exported" in first.stdout
    q.write_text("mine\n")
    again = cli("judgments", "export", camp, "--out", q, in_process=True)
    assert again.returncode == 3 and "exists (an earlier export?); nothing written" in again.stderr
    assert q.read_text() == "mine\n"
    assert cli("judgments", "export", camp, "--out", q, "--force", in_process=True).returncode == 0
    assert len(q.read_text().splitlines()) == n
    folder = tmp_path / "out"
    folder.mkdir()
    for _ in range(2):
        assert cli("judgments", "export", camp, "--out", folder, in_process=True).returncode == 0
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 4 and all(re.fullmatch(rf"judgments_official_{n}j_\d{{8}}T\d{{6}}Z(-2)?\.qrels"
                                                r"(\.about\.json)?", x) for x in names), names


@run_async
async def test_the_desk_alone_leaves_out_the_organizer_keys(tmp_path):
    """`cranfield serve` shows the Judging screen with the app's desk_only set: no export key, no bar of the
    organizer's screens; grading works as in the terminal."""
    camp = demo_with_pool(tmp_path)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="ann")
    app.desk_only = True
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        scr = app.screen
        assert scr.doc is not None and not scr.query(".nav")
        assert "Export" not in screen_text(app).splitlines()[-1]
        await press(pilot, "e")
        assert not (tmp_path / "exports").exists()
        doc = scr.doc
        await press(pilot, "1")
        assert scr.doc != doc
        await pilot.press("q")
