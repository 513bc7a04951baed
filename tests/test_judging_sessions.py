"""Judging for hours: leases across processes, double judging, per-pool progress, and the judging
screen's accept / change / cannot-judge / random-order paths (pilot tests)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from engine.judging import sessions as assess

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"

WORKER = r"""
import sys, time
from pathlib import Path
from engine.judging import sessions as assess, workflow as judging
root, who, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
docs = [f"d{i}" for i in range(n)]
Path(root, f"ready-{who}").touch()
while not Path(root, "go").exists():
    time.sleep(0.01)
mine = []
while True:
    by = {}
    lp = judging.log_path(root)
    if lp.exists():
        j = judging.apply_undo(judging.read_log(lp))
        for t, d, a in zip(j["topic"], j["doc"], j["assessor"]):
            by.setdefault((t, d), set()).add(a)
    d = assess.acquire(root, topic, [x for x in docs if (topic, x) not in by], who, judged_by=by)
    if d is None:
        break
    time.sleep(0.01)
    assess.record_action(root, topic, d, 1, who, 0.5)
    assess.release(root, topic, d, who, judged=True)
    mine.append(d)
print(" ".join(mine))
"""


def test_two_processes_on_one_topic_get_disjoint_documents(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    n = 30
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), who, "7", str(n)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("ann", "bob")]
    deadline = time.time() + 60
    while not all((tmp_path / f"ready-{w}").exists() for w in ("ann", "bob")) and time.time() < deadline:
        time.sleep(0.02)
    (tmp_path / "go").touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    ann, bob = (set(o[0].split()) for o in outs)
    assert ann and bob and not (ann & bob)
    assert ann | bob == {f"d{i}" for i in range(n)}
    log = [json.loads(x) for x in (tmp_path / "judgments" / "log.jsonl").read_text().splitlines()]
    assert len(log) == n and len({r["doc"] for r in log}) == n


def test_lease_expiry_release_and_double_judging(tmp_path):
    docs = ["a", "b", "c"]
    assert assess.acquire(tmp_path, "1", docs, "ann", seconds=10, now=0) == "a"
    assert assess.acquire(tmp_path, "1", docs, "ann", seconds=10, now=1) == "a"       # still mine
    assert assess.acquire(tmp_path, "1", docs, "bob", seconds=10, now=5) == "b"
    assert assess.acquire(tmp_path, "1", ["a"], "cy", seconds=10, now=11) == "a"      # ann's lease expired
    assess.release(tmp_path, "1", "b", "bob")
    assert assess.acquire(tmp_path, "1", ["b"], "dee", seconds=10, now=6) == "b"      # released on skip
    # double judging: a second assessor gets a document judged (or held) by one other, never a third
    by = {("1", "x"): {"ann"}}
    assert assess.acquire(tmp_path, "1", ["x"], "bob", judged_by=by, now=20) is None
    assert assess.acquire(tmp_path, "1", ["x"], "bob", judged_by=by, double={("1", "x")}, now=20) == "x"
    assert assess.acquire(tmp_path, "1", ["x"], "cy", judged_by=by, double={("1", "x")}, now=21) is None
    # the double share is a fixed fraction of the pool
    share = sum(assess.is_double("1", f"d{i}", 0.2) for i in range(4000)) / 4000
    assert abs(share - 0.2) < 0.02
    # random order: a permutation, stable per assessor, different between assessors
    ds = [f"d{i}" for i in range(30)]
    o1 = assess.order_documents(ds, "1", "ann", True)
    assert sorted(o1) == sorted(ds) and o1 != ds and o1 == assess.order_documents(ds, "1", "ann", True)
    assert o1 != assess.order_documents(ds, "1", "bob", True)
    assert assess.order_documents(ds, "1", "ann", False) == ds


def test_pool_progress_equals_hand_count():
    pool = pd.DataFrame({"topic": ["1", "1", "1", "2", "2"], "doc": ["a", "b", "c", "a", "d"]})
    judged = pd.DataFrame({"topic": ["1", "1", "2", "2", "3"], "doc": ["a", "z", "a", "d", "a"],
                           "grade": [1, 0, -1, 2, 1]})
    pp = assess.pool_progress(pool, judged)
    # topic 1: a judged (z is outside the pool) -> 1 of 3; topic 2: d judged (a is pooled, not judged) -> 1 of 2
    assert pp.values.tolist() == [["1", 3, 1, 2], ["2", 2, 1, 1], ["all", 5, 2, 3]]


# ---------------------------------------------------------------------------- the judging screen

from test_tui_pilot import run_async  # noqa: E402  (runs an async test body with asyncio)


TOPIC_401 = ("<top>\n<num> Number: 401\n<title> huhu rilo\n\n<desc> Description:\nFind documents about the "
             "huhu rilo festival.\n\n<narr> Narrative:\nA relevant document names the town of Rilo.\n</top>\n")


@pytest.fixture
def judged_campaign(tmp_path) -> Path:
    from engine.formats.qrels import read_qrels
    from engine.judgments.sources import import_source
    d = tmp_path / "demo"
    shutil.copytree(DEMO, d, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    (d / "topics" / "topics.tsv").unlink()
    (d / "topics" / "topics.txt").write_text(TOPIC_401)          # TREC <top> format
    q = read_qrels(d / "judgments" / "qrels.txt")
    q = q[q["topic"] != "401"]                                  # topic 401 not judged yet
    (d / "judgments" / "qrels.txt").write_text("".join(f"{t} 0 {x} {g}\n" for t, x, g in
                                                       zip(q["topic"], q["doc"], q["grade"])))
    truth = read_qrels(d / "truth" / "qrels.txt")
    docs = list(truth[truth["topic"] == "401"]["doc"][:8])
    rows = "".join(f"401\t{x}\t1\t1.0\tdepth\t{i + 1}\n" for i, x in enumerate(docs))
    (d / "pools").mkdir()
    (d / "pools" / "pool-p8.tsv").write_text("topic\tdoc\tstratum\tprob\tmethod\torder\n" + rows)
    auto = tmp_path / "auto.qrels"
    auto.write_text("".join(f"401 0 {x} {i % 3}\n" for i, x in enumerate(docs)))
    import_source(d, auto, "llm", kind="auto", model="m")
    (d / "guide.md").write_text("Judge the whole document, not its title.")
    with open(d / "campaign.yaml", "a") as fh:
        fh.write("judging:\n  guidelines: guide.md\n")
    return d


def _log(d: Path) -> list[dict]:
    return [json.loads(x) for x in (d / "judgments" / "log.jsonl").read_text().splitlines()]


@run_async
async def test_judging_screen_accept_change_cannot_judge(tmp_path, judged_campaign):
    from tui.app import CranfieldApp
    from tui.testing import press, screen_text, settle
    d = judged_campaign
    auto = {ln.split()[2]: int(ln.split()[3]) for ln in (d / "judgments" / "sources" / "llm.qrels").read_text().splitlines()}
    order = [ln.split("\t")[1] for ln in (d / "pools" / "pool-p8.tsv").read_text().splitlines()[1:]]
    app = CranfieldApp(d, export_dir=tmp_path, assessor="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "active pool p8: 0 of 8 judged, 8 left" in " ".join(screen_text(app).split())   # Home
        await press(pilot, "j")
        scr = app.screen
        assert scr.topic == "401" and scr.doc == order[0]
        side = " ".join(str(scr.query_one(w).render()) for w in ("#judge-topic", "#judge-guidelines")).split()
        side = " ".join(side)
        assert "Find documents about the huhu rilo festival." in side      # the TREC topic statement
        assert "A relevant document names the town of Rilo." in side and "Judge the whole document" in side
        text = " ".join(screen_text(app).split())
        assert "8 left in topic" in text and f"automatic label {auto[order[0]]}" in text
        await press(pilot, "enter")                                       # accept the automatic label
        await press(pilot, str((auto[order[1]] + 1) % 3))                 # change it
        assert "6 left in topic" in screen_text(app)
        await press(pilot, "x")                                           # cannot judge: pick a reason
        await settle(pilot)
        await press(pilot, "enter")
        await settle(pilot)
        assert scr.doc == order[3]
        log = _log(d)
        assert [(r["op"], r["doc"]) for r in log] == [("judge", order[0]), ("judge", order[1]),
                                                       ("cannot_judge", order[2])]
        assert (log[0]["action"], log[0]["grade"], log[0]["auto_grade"], log[0]["auto_source"], log[0]["assessor"]) == \
            ("accept", auto[order[0]], auto[order[0]], "llm", "ann")
        assert (log[1]["action"], log[1]["grade"], log[1]["auto_grade"], log[1]["auto_source"]) == \
            ("change", (auto[order[1]] + 1) % 3, auto[order[1]], "llm")
        assert log[2]["reason"] == assess.CANNOT_JUDGE_REASONS[0] and log[2]["assessor"] == "ann"
        # leases: the document on screen is leased to ann, judged ones are marked done, the other released
        held = assess.active_leases([json.loads(x) for x in assess.leases_path(d).read_text().splitlines()],
                                    time.time())
        assert set(held) == {("401", order[0]), ("401", order[1]), ("401", order[3])}
        assert held[("401", order[3])]["ann"] < float("inf") == held[("401", order[0])]["ann"]
        # edit rates from the log
        from engine.judging.workflow import read_log
        er = assess.edit_rates(read_log(d / "judgments" / "log.jsonl")).iloc[0]
        assert (er["accepted"], er["changed"], er["cannot_judge"]) == (1, 1, 1)


@run_async
async def test_judging_screen_random_order_and_rationale(tmp_path, judged_campaign):
    from tui.app import CranfieldApp
    from tui.testing import press, settle
    d = judged_campaign
    order = [ln.split("\t")[1] for ln in (d / "pools" / "pool-p8.tsv").read_text().splitlines()[1:]]
    app = CranfieldApp(d, export_dir=tmp_path, assessor="bob")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        scr = app.screen
        assert scr.doc == order[0]
        await press(pilot, "o")                                 # random order
        shuffled = assess.order_documents(order, "401", "bob", True)
        assert scr.random_order and scr.doc == shuffled[0]
        await press(pilot, "r")
        await settle(pilot)
        await pilot.press(*"too short")
        await press(pilot, "enter")
        await settle(pilot)
        await press(pilot, "0")
        assert scr.doc == shuffled[1]
        log = _log(d)
        assert (log[0]["doc"], log[0]["grade"], log[0]["action"], log[0]["rationale"], log[0]["assessor"]) == \
            (shuffled[0], 0, "change" if log[0].get("auto_grade") not in (None, 0) else "accept", "too short", "bob")
        # the lease on order[0] taken before switching order was released
        held = assess.active_leases([json.loads(x) for x in assess.leases_path(d).read_text().splitlines()],
                                    time.time())
        assert set(held) == {("401", shuffled[0]), ("401", shuffled[1])}
        assert held[("401", shuffled[0])]["bob"] == float("inf")


def test_status_counts_against_the_active_pool(judged_campaign, capsys):
    from cranfield.cli import main
    from engine.judging.workflow import record_judgment
    d = judged_campaign
    order = [ln.split("\t")[1] for ln in (d / "pools" / "pool-p8.tsv").read_text().splitlines()[1:]]
    record_judgment(d, "401", order[0], 1, "ann")
    record_judgment(d, "401", order[5], 0, "ann")
    record_judgment(d, "401", "D401-outside-pool", 0, "ann")
    assert main(["status", str(d), "--plain"]) == 0
    out = capsys.readouterr()[0]
    assert "active pool:   p8: 2 of 8 judged, 6 left" in out


@run_async
async def test_agreement_screen_matches_engine(tmp_path):
    from engine.judgments.agreement import label_agreement
    from engine.campaign.campaign import load_campaign
    from engine.judgments.sources import import_source, source_judgments
    from tui.app import CranfieldApp
    from tui.testing import press, settle
    d = tmp_path / "demo"
    shutil.copytree(DEMO, d, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    import_source(d, d / "truth" / "qrels.txt", "truth")
    lines = (d / "judgments" / "qrels.txt").read_text().splitlines()
    flipped = [f"{t} 0 {x} {0 if int(g) else 1}" if i % 7 == 0 else ln
               for i, (ln, (t, _, x, g)) in enumerate(zip(lines, (ln.split() for ln in lines)))]
    (tmp_path / "alt.qrels").write_text("\n".join(flipped) + "\n")
    import_source(d, tmp_path / "alt.qrels", "alt")
    camp = load_campaign(d)
    want = label_agreement(source_judgments(camp, "human"), source_judgments(camp, "alt"), ("human", "alt"),
                           [0, 1, 2], 1)
    app = CranfieldApp(d, export_dir=tmp_path, assessor="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "k")
        await settle(pilot)
        scr = app.screen
        assert (scr.a, scr.b) == ("human", "alt")
        for _ in range(100):
            if scr.result is not None:
                break
            await pilot.pause(0.05)
        text = str(scr.query_one("#agr-text").render())
        assert f"Cohen's kappa (unweighted) {want.graded['kappa_unweighted']:.3f}" in text
        assert "Kendall tau" in text
        await press(pilot, "b")
        await settle(pilot)
        await press(pilot, *(["down"] * [n for n in ("human", "alt", "truth")].index("truth")), "enter")
        await settle(pilot)
        for _ in range(100):
            if scr.b == "truth" and "truth" in str(scr.query_one("#agr-text").render()):
                break
            await pilot.pause(0.05)
        assert "Cohen's kappa (unweighted) 1.000" in str(scr.query_one("#agr-text").render())


@run_async
async def test_double_judging_from_the_pool_builder(tmp_path, judged_campaign):
    from cranfield.cli import main
    from tui.app import CranfieldApp
    from tui.testing import press, settle
    d = judged_campaign
    order = [ln.split("\t")[1] for ln in (d / "pools" / "pool-p8.tsv").read_text().splitlines()[1:]]
    with open(d / "pools" / "pools.log.jsonl", "a") as fh:      # as `cranfield pool --double 1` records it
        fh.write(json.dumps({"op": "pool", "name": "p8", "double_fraction": 1.0}) + "\n")
    assert assess.pool_double_fraction(d, "p8") == 1.0
    docs = {}
    for who in ("ann", "bob", "cy"):
        app = CranfieldApp(d, export_dir=tmp_path, assessor=who)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await press(pilot, "j")
            docs[who] = app.screen.doc
            await press(pilot, "1")
    # every document is double judged: bob gets what ann judged, cy (a third assessor) does not
    assert docs["ann"] == docs["bob"] == order[0] and docs["cy"] == order[1]
    # the CLI pool builder records the share
    c2 = tmp_path / "c2"
    shutil.copytree(DEMO, c2, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    assert main(["pool", str(c2), "--strategy", "depth", "--depth", "55", "--name", "dd", "--double", "0.25"]) == 0
    assert assess.pool_double_fraction(c2, "dd") == 0.25
