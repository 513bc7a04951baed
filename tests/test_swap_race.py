"""Issue 34, first "Done when": a campaign path swapped between the real file (or folder) and a symbolic
link to an outside one holding a canary, while the commands that write or read it run as separate
processes (`python -m cranfield.cli`). Nothing outside changes, the canary never shows in any output nor
lands in the campaign or its store, no traceback, and every acknowledged write is in the campaign.

Two ways of swapping, the same checks:
- at the worst moment (deterministic): the command's own process flips the path to the link right before
  its first use of it, after every check it made (tests/_swap.py HOOK, an audit hook);
- in a tight loop: a thread of this process flips the path back and forth while the command runs again
  and again (CRANFIELD_SWAP_ITER runs per case; 2 by default, more for benchmarks/fuzz.py).
Every entry of engine.util.confine.CAMPAIGN_PATHS is covered, with the files derived from them (the log's
.torn and .rejected, model sources and their .errors, the assignment log, locks, the store's parts,
manifest and index, the documents' SQLite file).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from _cli import cli, demo_copy
from _swap import HOOK, Swap, supported

CANARY = "CANARY7f3a"
ITER = int(os.environ.get("CRANFIELD_SWAP_ITER", "2"))
ANCHOR = "needs engine/util/fs.py (anchor)"
# the anchored open not there yet (main at 7c8dfbb): the cases that follow a link are expected to fail
BEFORE_ANCHOR = importlib.util.find_spec("engine.util.fs") is None

# path kind -> (campaign: ir | rag, path relative to the campaign, folder?)
PATHS: dict[str, tuple[str, str, bool]] = {
    "config": ("ir", "campaign.yaml", False),
    "runs": ("ir", "runs", True),
    "topics": ("ir", "topics", True),
    "judgments": ("ir", "judgments", True),
    "log": ("ir", "judgments/log.jsonl", False),
    "log.torn": ("ir", "judgments/log.jsonl.torn", False),
    "log.rejected": ("ir", "judgments/log.jsonl.rejected", False),
    "leases": ("ir", "judgments/leases.jsonl", False),
    "sources": ("ir", "judgments/sources", True),
    "source.llm": ("ir", "judgments/sources/llm-x.jsonl", False),
    "source.errors": ("ir", "judgments/sources/llm-x.errors.jsonl", False),
    "pools": ("ir", "pools", True),
    "pool_log": ("ir", "pools/pools.log.jsonl", False),
    "pools.lock": ("ir", "pools/.lock", False),
    "docs": ("ir", "docs", True),
    "docs.sqlite": ("ir", "docs/docs.sqlite", False),
    "store": ("ir", ".cranfield-store", True),
    "store.manifest": ("ir", ".cranfield-store/manifest.json", False),
    "store.index": ("ir", ".cranfield-store/index.parquet", False),
    "store.lock": ("ir", ".cranfield-store/.lock", False),
    "store.part": ("ir", ".cranfield-store/runs/run=asterA1", True),
    "cache": ("ir", ".cranfield-cache", True),
    "truth": ("ir", "truth", True),
    "exports": ("ir", "exports", True),
    "reports": ("ir", "reports", True),
    "nuggets": ("rag", "nuggets", True),
    "nuggets.log": ("rag", "nuggets/nuggets.jsonl", False),
    "nuggets.lock": ("rag", "nuggets/.lock", False),
    "assign": ("rag", "nuggets/assign", True),
    "assign.human": ("rag", "nuggets/assign/human.jsonl", False),
    "assign.errors": ("rag", "nuggets/assign/llm-x.errors.jsonl", False),
    "answers": ("rag", "answers", True),
    "audit": ("ir", "audit", True),
    "serve_tokens": ("ir", "judgments/serve-tokens.json", False),
}

# command kind -> argv ({c} campaign, {o} scratch inputs, {n} the run's number); the ack check is below
COMMANDS: dict[str, list[str]] = {
    "judgments add": ["judgments", "add", "{c}", "401", "D401-9{n}", "1"],
    "judgments import": ["judgments", "import", "{c}", "{o}/imp.qrels", "--name", "imp{n}"],
    "judgments next": ["judgments", "next", "{c}", "--topic", "401", "--pool", "deep", "-k", "1",
                       "--assessor", "ann{n}"],
    "judgments repair": ["judgments", "repair", "{c}", "--apply"],
    "judgments sources": ["judgments", "sources", "{c}"],
    "submit": ["submit", "{c}", "{o}/new{n}.txt"],
    "pool": ["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "q{n}"],
    "ingest": ["ingest", "{c}"],
    "report": ["report", "{c}", "--run", "asterA1", "--out", "{c}/reports/r{n}"],
    "judgments export": ["judgments", "export", "{c}", "--out", "{c}/exports/q{n}.qrels"],
    "docs import": ["docs", "import", "{c}", "{o}/more{n}.jsonl"],
    "eval": ["eval", "--campaign", "{c}"],
    "status": ["status", "{c}"],
    "table": ["table", "--campaign", "{c}", "-m", "map"],
    "nuggets add": ["nuggets", "add", "{c}", "q1", "fact number {n}"],
    "nuggets assign": ["nuggets", "assign", "{c}", "rag01", "q1", "n1", "{label}"],
    "nuggets scores": ["nuggets", "scores", "{c}"],
    "judgments auto": ["judgments", "auto", "{c}", "--endpoint", "{good}", "--model", "x", "--depth", "1",
                       "--retries", "0", "--concurrency", "1", "--backoff", "0"],
    "judgments auto (unparsed)": ["judgments", "auto", "{c}", "--endpoint", "{bad}", "--model", "x", "--depth", "1",
                                  "--retries", "0", "--concurrency", "1", "--backoff", "0"],
    "nuggets auto (unparsed)": ["nuggets", "auto", "{c}", "--endpoint", "{bad}", "--model", "x", "--retries", "0",
                                "--concurrency", "1", "--backoff", "0"],
    "pool --canaries": ["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "k{n}", "--canaries", "1"],
    "judgments audit": ["judgments", "audit", "{c}"],
    "serve token add": ["serve", "token", "add", "{c}", "--assessor", "ann{n}"],
    "pool --oracle": ["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "t{n}", "--oracle", "truth",
                      "--dry-run"],
}
READERS = {"eval", "status", "table", "nuggets scores", "judgments sources"}      # output compared with a clean run

# path kind -> the commands that write or read it (every command of the issue appears at least once)
CASES: dict[str, list[str]] = {
    "config": ["submit", "status"],
    "runs": ["submit", "eval"],
    "topics": ["status"],
    "judgments": ["judgments add", "eval"],
    "log": ["judgments add", "status"],
    "log.torn": ["judgments add"],
    "log.rejected": ["judgments repair"],
    "leases": ["judgments next"],
    "sources": ["judgments import"],
    "source.llm": ["judgments auto", "judgments sources"],
    "source.errors": ["judgments auto (unparsed)"],
    "pools": ["pool", "judgments next"],
    "pool_log": ["pool"],
    "pools.lock": ["pool"],
    "docs": ["docs import"],
    "docs.sqlite": ["docs import"],
    "store": ["ingest", "eval"],
    "store.manifest": ["ingest"],
    "store.index": ["eval"],
    "store.lock": ["ingest"],
    "store.part": ["eval"],
    "cache": ["table"],
    "truth": ["pool --oracle"],
    "exports": ["judgments export"],
    "reports": ["report"],
    "nuggets": ["nuggets add", "nuggets scores"],
    "nuggets.log": ["nuggets add"],
    "nuggets.lock": ["nuggets add"],
    "assign": ["nuggets assign", "nuggets scores"],
    "assign.human": ["nuggets assign"],
    "assign.errors": ["nuggets auto (unparsed)"],
    "answers": ["nuggets scores"],
    "audit": ["pool --canaries", "judgments audit"],
    "serve_tokens": ["serve token add"],
}

LLM_RECORD = {"topic": "401", "doc": "D401-2", "grade": 1, "assessor": "llm-x", "source": "llm-x", "kind": "auto",
              "model": "m", "op": "judge", "ts": 1.0}


def _tree(p: Path) -> dict[str, str]:
    """Every file under `p` (links not followed) with the sha256 of its bytes, and every link's target."""
    out = {}
    for q in sorted(p.rglob("*")):
        if q.is_symlink():
            out[str(q.relative_to(p))] = "-> " + os.readlink(q)
        elif q.is_file():
            out[str(q.relative_to(p))] = hashlib.sha256(q.read_bytes()).hexdigest()
        elif q.is_dir():
            out[str(q.relative_to(p)) + "/"] = "dir"
    return out


def _canary_in(folder: Path) -> list[str]:
    """The files under `folder` (links not followed) whose bytes hold the canary."""
    hits = []
    for q in folder.rglob("*"):
        if q.is_file() and not q.is_symlink() and CANARY.encode() in q.read_bytes():
            hits.append(str(q))
    return hits


@contextmanager
def model_endpoints():
    """Two chat endpoints on 127.0.0.1 for the model commands: one grading 1, one answering nonsense."""
    from _fakeendpoint import RawServer, answering
    with RawServer(answering(lambda p: "1")) as good, RawServer(answering(lambda p: "no idea")) as bad:
        ENDPOINTS.update(good=good.url, bad=bad.url)
        try:
            yield ENDPOINTS
        finally:
            ENDPOINTS.clear()


def make_templates(base: Path) -> dict:
    """The two small campaigns every case starts from (built once), their scratch inputs, and the output
    of each reading command on them (what a read during a swap must print, or refuse cleanly)."""
    o = base / "o"
    o.mkdir()
    ir = demo_copy(base / "ir")
    (o / "imp.qrels").write_text((ir / "judgments" / "qrels.txt").read_text())
    run = (ir / "runs" / "asterA1.txt").read_text()
    for n in range(max(ITER, 1) + 1):
        (o / f"new{n}.txt").write_text(run.replace("asterA1", f"new{n}"))
        (o / f"more{n}.jsonl").write_text(json.dumps({"id": f"X{n}", "title": "t", "text": "x"}) + "\n")
    for args in (("pool", ir, "--strategy", "depth", "--depth", "80", "--name", "deep"),
                 ("judgments", "import", ir, o / "imp.qrels", "--name", "imp"),
                 ("judgments", "add", ir, "401", "D401-1", "1"), ("ingest", ir), ("table", "--campaign", ir, "-m", "map"),
                 ("docs", "import", ir, o / "more0.jsonl"),
                 ("pool", ir, "--strategy", "depth", "--depth", "3", "--name", "aud", "--canaries", "1"),
                 ("serve", "token", "add", ir, "--assessor", "tok")):
        r = cli(*args, in_process=True)
        assert r.rc == 0, r.text
    (ir / "exports").mkdir()
    (ir / "reports").mkdir()
    (ir / "judgments" / "sources" / "llm-x.jsonl").write_text(json.dumps(LLM_RECORD) + "\n")
    (ir / "judgments" / "sources" / "llm-x.errors.jsonl").write_text(
        json.dumps({"topic": "401", "doc": "D401-3", "error": "unparsed", "ts": 1.0}) + "\n")
    assert (ir / ".cranfield-cache").is_dir() and (ir / ".cranfield-store" / "runs" / "run=asterA1").is_dir()
    rag = base / "rag"
    r = cli("simulate", "--rag", "--out", rag, "--runs", "3", "--topics", "2", "--seed", "5", in_process=True)
    assert r.rc == 0, r.text
    r = cli("nuggets", "assign", rag, "rag01", "q1", "n1", "s", in_process=True)
    assert r.rc == 0, r.text
    (rag / "nuggets" / "assign" / "llm-x.errors.jsonl").write_text(
        json.dumps({"run": "rag01", "topic": "q1", "error": "unparsed", "ts": 1.0}) + "\n")
    seen = {}
    for kind in READERS:
        c = rag if kind.startswith("nuggets") else ir
        r = cli(*_argv(kind, c, o, 0))
        assert r.rc == 0 and "Traceback" not in r.err, r.text
        seen[kind] = r.out.replace(str(c), "{c}")
    return {"ir": ir, "rag": rag, "o": o, "seen": seen}


@pytest.fixture(scope="module")
def endpoints():
    with model_endpoints() as e:
        yield e


@pytest.fixture(scope="module")
def templates(tmp_path_factory, endpoints):
    return make_templates(tmp_path_factory.mktemp("swap"))


def _argv(kind: str, c: Path, o: Path, n: int) -> list[str]:
    return [a.format(c=c, o=o, n=n, label="spn"[n % 3], good=ENDPOINTS.get("good"), bad=ENDPOINTS.get("bad"))
            for a in COMMANDS[kind]]


ENDPOINTS: dict[str, str] = {}          # "good": answers grade 1, "bad": answers what no parser takes


def _outside_copy(target: Path, away: Path, folder: bool) -> Path:
    """A copy of `target` outside the campaign with the canary in every text file (and a file of its
    own in a folder): what a command would read or change by following the link."""
    dest = away / ("x-" + target.name)
    if folder:
        if target.is_dir():
            shutil.copytree(target, dest, symlinks=True)
        else:
            dest.mkdir()
        for q in list(dest.rglob("*")):
            if q.is_file() and q.suffix in (".txt", ".jsonl", ".tsv", ".qrels", ".yaml", ".json", ".md"):
                q.write_bytes(q.read_bytes().replace(b"asterA1", CANARY.encode()).replace(
                    b"rag01", CANARY.encode()) + (b"" if q.suffix == ".json" else f"{CANARY}\n".encode()))
        (dest / f"{CANARY}.txt").write_text(f"401 Q0 {CANARY} 1 1.0 {CANARY}\n")
    else:
        data = target.read_bytes() if target.is_file() else b""
        if target.suffix in (".jsonl", ".txt", ".yaml"):
            data = data.replace(b"asterA1", CANARY.encode()).replace(b"rag01", CANARY.encode())
            rec = dict(LLM_RECORD, doc=CANARY, assessor="tester", source="human", kind="human")
            data += (json.dumps(rec) + "\n").encode() if target.suffix == ".jsonl" else f"# {CANARY}\n".encode()
        elif not data or target.suffix not in (".parquet", ".sqlite"):
            data += f"{CANARY}\n".encode()
        else:                                   # a binary file: the canary where a reader would show it
            data = data.replace(b"asterA1", CANARY[:7].encode())
            data += CANARY.encode()
        dest.write_bytes(data)
    return dest


def _setup_run(kind: str, path_kind: str, c: Path) -> None:
    """Before each run: what makes the command touch the derived file (a torn log tail, a bad line)."""
    log = c / "judgments" / "log.jsonl"
    if path_kind == "log.torn":
        with open(log, "ab") as fh:
            fh.write(b'{"topic": "401", "doc": "D401-7", "gra')
    if path_kind == "log.rejected":
        with open(log, "ab") as fh:
            fh.write(b'{"topic": "401", "doc": "D401-8", "grade": "not a grade"}\n')


def _acknowledged(kind: str, c: Path, n: int, out: str) -> None:
    """The write the command acknowledged (exit 0) is in the campaign."""
    if kind == "judgments add":
        recs = [json.loads(ln) for ln in (c / "judgments" / "log.jsonl").read_text().splitlines()
                if ln.endswith("}")]
        assert any(r.get("doc") == f"D401-9{n}" for r in recs), f"judgment D401-9{n} acknowledged, not in the log"
    elif kind == "judgments import":
        assert (c / "judgments" / "sources" / f"imp{n}.qrels").is_file()
    elif kind == "judgments next":
        doc = out.split()[1]
        assert f'"doc": "{doc}"' in (c / "judgments" / "leases.jsonl").read_text() and f"ann{n}" in \
            (c / "judgments" / "leases.jsonl").read_text(), f"lease of {doc} acknowledged, not in leases.jsonl"
    elif kind == "submit":
        assert f"new{n}" in (c / "campaign.yaml").read_text() and (c / "runs").is_dir()
    elif kind == "pool":
        assert (c / "pools" / f"pool-q{n}.tsv").is_file() and f'"q{n}"' in (c / "pools" / "pools.log.jsonl").read_text()
    elif kind == "report":
        assert (c / "reports" / f"r{n}" / "index.html").is_file()
    elif kind == "judgments export":
        assert (c / "exports" / f"q{n}.qrels").is_file()
    elif kind == "docs import":
        import sqlite3
        con = sqlite3.connect(f"file:{c / 'docs' / 'docs.sqlite'}?mode=ro", uri=True)
        try:
            assert f"X{n}" in str(con.execute("select * from sqlite_master").fetchall()) or \
                any(f"X{n}" in str(row) for t, in con.execute("select name from sqlite_master where type='table'")
                    for row in con.execute(f'select * from "{t}"'))
        finally:
            con.close()
    elif kind == "judgments auto":
        assert len((c / "judgments" / "sources" / "llm-x.jsonl").read_text().splitlines()) > 1
    elif kind == "nuggets add":
        assert f"fact number {n}" in (c / "nuggets" / "nuggets.jsonl").read_text()


def _check_run(kind: str, c: Path, r, seen: dict) -> None:
    assert CANARY not in r.text, f"{kind}: the outside canary was shown:\n{r.text[-1500:]}"
    assert "Traceback" not in r.text, f"{kind}:\n{r.text[-3000:]}"
    assert r.rc == 0 or r.rc >= 2 or (r.rc == 1 and "unparsed" in kind), (kind, r.rc, r.text[-1500:])
    if r.rc == 0 and kind in seen:
        assert r.out.replace(str(c), "{c}") == seen[kind], f"{kind} read something else during the swap"


def _case(templates, tmp_path, path_kind) -> tuple[Path, Path, Path, Path]:
    camp, rel, folder = PATHS[path_kind]
    c = tmp_path / "c"
    shutil.copytree(templates[camp], c, symlinks=True)
    away = tmp_path / "away"
    away.mkdir()
    target = c / rel
    outside = _outside_copy(target, away, folder)
    if not os.path.lexists(target):                  # a derived file not there yet: the command creates it
        if folder:
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"")
    return c, away, target, outside


def _after(c: Path, away: Path, before: dict, acked: list) -> None:
    assert _tree(away) == before, f"the outside folder changed: {sorted(set(_tree(away).items()) ^ set(before.items()))[:6]}"
    assert not _canary_in(c), f"the canary landed in the campaign: {_canary_in(c)[:5]}"
    for kind, n, out in acked:
        _acknowledged(kind, c, n, out)
    left = [str(q) for q in c.rglob("*") if q.is_symlink()]
    assert not left, f"links left in the campaign: {left}"


ALL = [(p, k) for p in CASES for k in CASES[p]]


def test_every_campaign_path_and_command_is_covered():
    from engine.util.confine import CAMPAIGN_PATHS
    rels = {rel for _, rel, _ in PATHS.values()}
    assert set(CAMPAIGN_PATHS.values()) <= rels, set(CAMPAIGN_PATHS.values()) - rels
    assert set(PATHS) == set(CASES)
    used = {k for ks in CASES.values() for k in ks}
    assert used == set(COMMANDS), set(COMMANDS) ^ used


# (path kind, command) that follow the link on main at 7c8dfbb: checked, then opened by name
WORST_FAILS_ON_MAIN: set[tuple[str, str]] = {
    ("config", "submit"),
    ("config", "status"),
    ("runs", "submit"),
    ("runs", "eval"),
    ("topics", "status"),
    ("judgments", "judgments add"),
    ("judgments", "eval"),
    ("log", "judgments add"),
    ("log.torn", "judgments add"),
    ("log.rejected", "judgments repair"),
    ("leases", "judgments next"),
    ("sources", "judgments import"),
    ("source.llm", "judgments auto"),
    ("source.errors", "judgments auto (unparsed)"),
    ("pool_log", "pool"),
    ("docs", "docs import"),
    ("docs.sqlite", "docs import"),
    ("store", "ingest"),
    ("store", "eval"),
    ("store.part", "eval"),
    ("cache", "table"),
    ("truth", "pool --oracle"),
    ("exports", "judgments export"),
    ("reports", "report"),
    ("assign", "nuggets assign"),
    ("assign.human", "nuggets assign"),
    ("assign.errors", "nuggets auto (unparsed)"),
}


def _mark(cases, fails):
    return [pytest.param(p, k, id=f"{p}-{k.replace(' ', '_')}",
                         marks=[pytest.mark.xfail(BEFORE_ANCHOR, strict=True, reason=ANCHOR)] if (p, k) in fails else [])
            for p, k in cases]


def _worst(templates, tmp_path: Path, path_kind: str, kind: str) -> None:
    """The path becomes a link out right before the command's first use of it (after its checks)."""
    c, away, target, outside = _case(templates, tmp_path, path_kind)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    before = _tree(away)
    sw = Swap(target, outside)
    _setup_run(kind, path_kind, c)
    env = {"CRANFIELD_TEST_SWAP": json.dumps({"target": str(target), "park": str(sw.park)}),
           "PYTHONPATH": os.pathsep.join([str(hook), str(Path(__file__).resolve().parents[1])])}
    r = cli(*_argv(kind, c, templates["o"], 1), cwd=tmp_path, env=env)
    fired = not sw.park.is_symlink()
    sw.restore()
    assert fired, f"{kind} never used {target.relative_to(c)}: the case tests nothing"
    _check_run(kind, c, r, templates["seen"])
    _after(c, away, before, [(kind, 1, r.out)] if r.rc == 0 else [])


def _loop(templates, tmp_path: Path, path_kind: str, kind: str) -> None:
    """A thread flips the path between the real entry and the link as fast as it can while the command
    runs ITER times as a separate process."""
    c, away, target, outside = _case(templates, tmp_path, path_kind)
    before = _tree(away)
    sw = Swap(target, outside)
    stop = threading.Event()
    flips = [0]

    def swapper():
        while not stop.is_set():
            try:
                sw.flip()
                flips[0] += 1
            except OSError:
                pass
            time.sleep(0.0002)

    acked, runs = [], []
    for n in range(1, ITER + 1):
        _setup_run(kind, path_kind, c)
        th = threading.Thread(target=swapper, daemon=True)
        stop.clear()
        th.start()
        try:
            r = cli(*_argv(kind, c, templates["o"], n), cwd=tmp_path)
        finally:
            stop.set()
            th.join()
            sw.restore()
        runs.append(r)
        if r.rc == 0:
            acked.append((kind, n, r.out))
    for r in runs:
        _check_run(kind, c, r, templates["seen"])
    assert flips[0] > 10, flips
    _after(c, away, before, acked)


def _all(templates, factory, fn, cases) -> dict:
    """Every case of `cases` through `fn`, a few processes at a time: (path kind, command) -> the
    AssertionError it raised, or None."""
    from concurrent.futures import ThreadPoolExecutor

    def one(case):
        try:
            fn(templates, factory.mktemp("case"), *case)
        except AssertionError as exc:
            return exc
        return None

    with ThreadPoolExecutor(max_workers=WORKERS) as ex:
        return dict(zip(cases, ex.map(one, cases)))


WORKERS = int(os.environ.get("CRANFIELD_SWAP_WORKERS", "4"))


@pytest.fixture(scope="module")
def worst(templates, tmp_path_factory):
    return _all(templates, tmp_path_factory, _worst, ALL)


@pytest.mark.parametrize("path_kind,kind", _mark(ALL, WORST_FAILS_ON_MAIN))
def test_swapped_at_the_worst_moment(worst, path_kind, kind):
    """The path becomes a link out right before the command's first use of it (after its checks):
    refused or done inside the campaign, never followed."""
    if worst[(path_kind, kind)] is not None:
        raise worst[(path_kind, kind)]


# the cases the tight loop runs by default (the reproduced ones); all of them with CRANFIELD_SWAP_ITER
LOOP = ALL if "CRANFIELD_SWAP_ITER" in os.environ else [
    ("log", "judgments add"), ("sources", "judgments import"), ("nuggets.log", "nuggets add"),
    ("assign.human", "nuggets assign"), ("runs", "status"), ("config", "submit")]


@pytest.fixture(scope="module")
def looped(templates, tmp_path_factory):
    if not supported(tmp_path_factory.mktemp("probe")):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here")
    return _all(templates, tmp_path_factory, _loop, LOOP)


@pytest.mark.parametrize("path_kind,kind", [
    pytest.param(p, k, id=f"{p}-{k.replace(' ', '_')}",
                 marks=pytest.mark.xfail(BEFORE_ANCHOR, strict=False, reason=ANCHOR + "; a race: fails on main in some runs only"))
    for p, k in LOOP])
def test_swapped_in_a_tight_loop(looped, path_kind, kind):
    """A thread flips the path back and forth while the command runs ITER times as a separate process:
    nothing outside changes or shows, every acknowledged write is in the campaign."""
    if looped[(path_kind, kind)] is not None:
        raise looped[(path_kind, kind)]
