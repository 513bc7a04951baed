"""One lease and progress model for every path: the CLI honours the TUI's leases (and its own), the lease
file is never read as a judgment file, every command counts left / judged from the one engine function, and
`judgments next` with nothing left says so on stderr with its own exit code."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from _cli import cli as _cli
from engine.judging import sessions as assess

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}

CONFIG = textwrap.dedent("""\
    name: Lease track
    relevance:
      scale:
        0: {label: not relevant, gain: 0}
        1: {label: relevant, gain: 1}
      binary_threshold: 1
    evaluation:
      depth: 100
      measures: [map, P.10]
    judgments:
      conflict_rule: last
    judging:
      lease_seconds: 600
    """)


def campaign(root: Path) -> Path:
    """Topics 1-2, two runs of 12 documents each; imported judgments 1/d1, 1/d2; the log has 1/d3 by ann and
    2/d1 by bob; pool day0 (older) holds topic 1 d1..d3, pool day1 (newest) topic 1 d1..d6 and topic 2 d1..d4."""
    for sub in ("runs", "topics", "judgments", "pools"):
        (root / sub).mkdir(parents=True)
    (root / "campaign.yaml").write_text(CONFIG)
    for tag, shift in (("alpha", 0), ("beta", 3)):
        lines = [f"{t} Q0 d{(i + shift) % 12 + 1} {i + 1} {20 - i} {tag}" for t in (1, 2) for i in range(12)]
        (root / "runs" / f"{tag}.txt").write_text("\n".join(lines) + "\n")
    (root / "topics" / "topics.tsv").write_text("1\tfirst topic\n2\tsecond topic\n")
    (root / "judgments" / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n")
    log = [{"topic": "1", "doc": "d3", "grade": 1, "assessor": "ann", "ts": "2026-01-01T00:00:00Z", "op": "judge"},
           {"topic": "2", "doc": "d1", "grade": 0, "assessor": "bob", "ts": "2026-01-01T00:00:01Z", "op": "judge"}]
    (root / "judgments" / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    head = "topic\tdoc\tstratum\tprob\tmethod\torder\n"

    def pool(name, rows, mtime):
        p = root / "pools" / f"pool-{name}.tsv"
        p.write_text(head + "".join(f"{t}\t{d}\t1\t1.0\tdepth\t{i + 1}\n" for i, (t, d) in enumerate(rows)))
        os.utime(p, (mtime, mtime))
    pool("day0", [("1", f"d{i}") for i in (1, 2, 3)], 1_000_000)
    pool("day1", [("1", f"d{i}") for i in range(1, 7)] + [("2", f"d{i}") for i in range(1, 5)], 2_000_000)
    return root


def cli(*args, assessor: str | None = None, process: bool = False) -> subprocess.CompletedProcess:
    """`cranfield ARGS` as `assessor`: through main() in this process, or (`process`) in a fresh one; the
    tests below run each command at least once as a process."""
    if not process:
        r = _cli(*args, in_process=True, env={"COLUMNS": "200", **({"CRANFIELD_ASSESSOR": assessor} if assessor else {})})
        return subprocess.CompletedProcess(list(map(str, args)), r.rc, r.out, r.err)
    env = {**ENV, "CRANFIELD_ASSESSOR": assessor} if assessor else ENV
    return subprocess.run([sys.executable, "-m", "cranfield.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def judged_docs(d: Path) -> list[tuple[str, str, str]]:
    return [(r["topic"], r["doc"], r["assessor"]) for r in map(json.loads, (d / "judgments" / "log.jsonl")
                                                              .read_text().splitlines()) if r.get("op") == "judge"]


# ---------------------------------------------------------------------------- leases across CLI and TUI

def test_cli_assessors_and_a_tui_lease_never_share_a_document(tmp_path):
    d = campaign(tmp_path / "c")
    # the TUI's judging screen leases the first open document of topic 1 (d4) to the organizer
    by = {("1", "d1"): {""}, ("1", "d2"): {""}, ("1", "d3"): {"ann"}}
    held = assess.acquire(d, "1", ["d4", "d5", "d6"], "organizer", judged_by=by, seconds=600)
    assert held == "d4"
    offered: dict[tuple[str, str], str] = {}
    again = cli("judgments", "next", d, "--topic", "1", "--pool", "day1", assessor="alice", process=True)
    assert again.returncode == 0, again.stderr
    first = again.stdout.split()[1]
    assert first != "d4"
    # asking again before judging returns the document alice holds, not a new one
    assert cli("judgments", "next", d, "--topic", "1", "--pool", "day1", assessor="alice").stdout == again.stdout
    codes = {}
    for topic in ("1", "2"):          # rounds: both ask, then both judge what they were given
        for _ in range(5):
            got = {}
            for who in ("alice", "bob"):
                r = cli("judgments", "next", d, "--topic", topic, "--pool", "day1", assessor=who)
                codes[(topic, who)] = r.returncode
                if r.returncode == 0:
                    t, doc = r.stdout.split()
                    assert t == topic and (t, doc) != ("1", "d4"), (doc, who)
                    assert offered.get((t, doc), who) == who, (doc, who, offered)   # never offered to two people
                    offered[(t, doc)] = who
                    got[who] = doc
                else:
                    assert r.stdout == "", r.stdout
            for who, doc in got.items():
                a = cli("judgments", "add", d, topic, doc, "1", assessor=who)
                assert a.returncode == 0, a.stderr
            if not got:
                break
    assert codes[("1", "alice")] == codes[("1", "bob")] == 5         # d4 is the organizer's
    assert codes[("2", "alice")] == codes[("2", "bob")] == 4         # topic 2 is done
    assert set(offered) == {("1", "d5"), ("1", "d6"), ("2", "d2"), ("2", "d3"), ("2", "d4")}
    assert set(offered.values()) == {"alice", "bob"}
    # what is left (d4) is leased to the organizer: a distinct exit code, a message naming the holder
    r = cli("judgments", "next", d, "--topic", "1", "--pool", "day1", assessor="alice", process=True)
    assert r.returncode == 5 and r.stdout == "" and "organizer" in r.stderr and "day1" in r.stderr
    # no document judged by two people
    judged = [(t, x) for t, x, _ in judged_docs(d)]
    assert len(judged) == len(set(judged))
    # add of the organizer's document is refused (who holds it, until when), accepted with --override-lease
    r = cli("judgments", "add", d, "1", "d4", "0", assessor="alice", process=True)
    assert r.returncode == 5 and "leased to organizer until" in r.stderr and "--override-lease" in r.stderr
    assert ("1", "d4", "alice") not in judged_docs(d)
    r = cli("judgments", "add", d, "1", "d4", "0", "--override-lease", assessor="alice", process=True)
    assert r.returncode == 0, r.stderr
    assert ("1", "d4", "alice") in judged_docs(d)
    r = cli("judgments", "next", d, "--topic", "1", "--pool", "day1", assessor="bob", process=True)
    assert r.returncode == 4 and r.stdout == "" and "topic 1: nothing left to judge in pool day1" in r.stderr


def test_engine_lease_check_refuses_and_expires(tmp_path):
    d = campaign(tmp_path / "c")
    assert assess.acquire(d, "2", ["d2"], "organizer", seconds=10, now=100.0) == "d2"
    h = assess.lease_holder(d, "2", "d2", "alice", now=105.0)
    assert h == ("organizer", 110.0)
    assert assess.lease_holder(d, "2", "d2", "organizer", now=105.0) is None     # one's own lease
    assert assess.lease_holder(d, "2", "d2", "alice", now=111.0) is None         # expired


# ---------------------------------------------------------------------------- the lease file is not a judgment file

def test_lease_file_is_never_a_bad_judgment_file(tmp_path):
    d = campaign(tmp_path / "c")
    assess.acquire(d, "2", ["d2"], "organizer", seconds=600)
    assert (d / "judgments" / "leases.jsonl").is_file()
    runs = [("status", d, "--plain"), ("eval", "--campaign", d),
            ("judgments", "next", d, "--topic", "2"), ("judgments", "add", d, "2", "d3", "1"),
            ("judgments", "auto", d, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--dry-run"),
            ("report", d, "--out", d / "reports" / "r")]
    for args in runs:
        r = cli(*args, assessor="alice")
        assert r.returncode == 0, (args, r.stderr)
        assert "leases" not in r.stderr and "not read as judgments" not in r.stderr, (args, r.stderr)
    from engine.campaign.campaign import load_campaign
    assert [p.name for p in load_campaign(d).judgment_files()] == ["qrels.txt"]


# ---------------------------------------------------------------------------- one progress count

HAND = {"1": (6, 3, 3), "2": (4, 1, 3)}        # pool day1: pooled, judged, left per topic (see campaign())


def test_progress_is_one_count_everywhere(tmp_path):
    from engine.judging.progress import judging_progress
    d = campaign(tmp_path / "c")
    p = judging_progress(d)
    assert p.pool == "day1"
    assert {r.topic: (r.pooled, r.judged, r.left) for r in p.topics.itertuples()} == HAND
    assert (p.pooled, p.judged, p.left) == (10, 4, 6)
    assert dict(zip(p.assessors["assessor"], p.assessors["judged"])) == {"": 2, "ann": 1, "bob": 1}
    assert judging_progress(d, "day0").left == 0

    st = cli("status", d, "--plain", process=True)
    assert "active pool:   day1: 4 of 10 judged, 6 left" in st.stdout, st.stdout
    from cranfield.cli.cmd_status import status_tables
    from engine.campaign.campaign import load_campaign
    per = status_tables(load_campaign(d))["topics"]
    assert dict(zip(per["topic"], per["pool left"])) == {t: v[2] for t, v in HAND.items()}

    for t, (pooled, judged, left) in HAND.items():
        r = cli("judgments", "next", d, "--topic", t, assessor="zed")
        assert r.returncode == 0, r.stderr
        assert f"pool day1 (the newest in pools/), topic {t}: {judged} of {pooled} judged, {left} left" in r.stderr
    zed = [json.loads(x) for x in (d / "judgments" / "leases.jsonl").read_text().splitlines()]
    assert [(x["topic"], x["doc"], x["expires"] - x["ts"]) for x in zed] == [("1", "d4", 600), ("2", "d2", 600)]

    s = cli("judgments", "summary", d, "--format", "json", process=True)
    got = json.loads(s.stdout)["pool"]
    assert {r["topic"]: (r["pooled"], r["judged"], r["left"]) for r in got if r["topic"] != "all"} == HAND
    txt = cli("judgments", "summary", d).stdout
    assert "Pool day1 (the newest in pools/): 4 of 10 judged, 6 left" in txt


# ---------------------------------------------------------------------------- nothing left

def test_next_with_nothing_left_names_the_pool_on_stderr(tmp_path):
    d = campaign(tmp_path / "c")
    r = cli("judgments", "next", d, "--topic", "1", "--pool", "day0", assessor="alice")
    assert r.returncode == 4 and r.stdout == ""
    assert "topic 1: nothing left to judge in pool day0" in r.stderr
    for x in ("d1", "d2", "d3", "d4"):
        cli("judgments", "add", d, "2", x, "0", assessor="bob") if x != "d1" else None
    r = cli("judgments", "next", d, "--topic", "2", assessor="alice")      # the newest pool, day1
    assert r.returncode == 4 and r.stdout == ""
    assert "topic 2: nothing left to judge in pool day1 (the newest in pools/)" in r.stderr
    for p in (d / "pools").glob("pool-*.tsv"):
        p.unlink()
    for _ in range(3):                                       # no pool: the strategy to the depth given
        r = cli("judgments", "next", d, "--topic", "1", "--depth", "2", assessor="alice")
        if r.returncode != 0:
            break
        assert cli("judgments", "add", d, *r.stdout.split(), "0", assessor="alice").returncode == 0
    assert r.returncode == 4 and r.stdout == ""
    assert "topic 1: nothing left to judge under strategy depth at depth 2 (no pool in pools/)" in r.stderr
    h = cli("judgments", "next", "--help", process=True).stdout
    assert "exit status 4" in " ".join(h.split()) and "exit status 5" in " ".join(h.split())


def test_a_torn_lease_line_is_set_aside_and_never_a_judgment_file(tmp_path):
    from engine.campaign.campaign import load_campaign
    from engine.errors import Warnings
    d = campaign(tmp_path / "c")
    (d / "judgments" / "leases.jsonl").write_text('{"op": "lease", "topic": "2", "doc": "d2", "assess')
    assert assess.acquire(d, "2", ["d2"], "alice", seconds=60) == "d2"          # the torn line held nothing
    assert (d / "judgments" / "leases.jsonl.torn").read_text().startswith('{"op": "lease"')
    assert [json.loads(x)["assessor"] for x in (d / "judgments" / "leases.jsonl").read_text().splitlines()] == ["alice"]
    w = Warnings()
    camp = load_campaign(d, warnings=w)
    assert [p.name for p in camp.judgment_files()] == ["qrels.txt"] and not list(w)
