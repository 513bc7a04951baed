"""Real SIGKILLs of `cranfield ingest`, `cranfield judgments add` and `cranfield pool` (issue 14).

    python benchmarks/kills.py [--kills 100 --seed 1] [--only ingest,judgments,pool] [--work DIR]

ingest     A simulated campaign switches between two states of its run files (one run edited, one
           added); its run store starts empty or built for the other state. `cranfield ingest` runs
           in a subprocess and gets SIGKILL after a delay drawn uniformly over the measured length of
           a whole ingest (start-up included). After each kill: the committed store is checked (the
           manifest parses and every part it names has its recorded size); `cranfield eval` must give
           exactly the clean reference numbers of that state, or refuse clearly (non-zero exit, no
           traceback, a message naming the part or `cranfield ingest --rebuild`); then `cranfield
           ingest` must succeed, leave no temporary or unreferenced file, and eval give the reference.
judgments  Two writer processes append acknowledged judgments to the same log at once (one loops over
           the CLI's `judgments add` in process, or, one time in three, runs `cranfield judgments add`
           as separate processes). One writer gets SIGKILL at a random moment, the other a little later
           (two kills per trial). Every judgment a writer acknowledged (printed after `judgments add`
           returned) must be in the log, the log must read back, and the next add must leave it clean.
pool       `cranfield pool` (a depth pool with a random depth, named after an existing pool or a new
           one) gets SIGKILL at a random moment while a second `cranfield pool` builds another pool at
           the same time. After `recover_pools`: no `.pending` file, every pool file has the sha256 of
           its latest log entry, every pool in the log has its file, the log reads back.

The summary table at the end is what docs/reliability.md quotes. `tests/test_kills.py` runs a small
seeded version of the same trials (a dozen kills each) in the test suite.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
CLI = [sys.executable, "-m", "cranfield.cli"]
EVAL = ["-m", "map", "-m", "ndcg", "-m", "P.10", "-m", "bpref", "--format", "csv"]
STORE = ".cranfield-store"


# ----------------------------------------------------------------------------- running commands

@dataclass
class Outcome:
    rc: int
    out: str
    err: str


def run_cli(args: list[str], in_process: bool = False, timeout: float = 300) -> Outcome:
    """`cranfield ARGS` in a subprocess, or through cranfield.cli.main in this process (fast, for the
    tests; an exception escaping main is reported as the traceback a subprocess would print)."""
    if not in_process:
        p = subprocess.run(CLI + args, env=ENV, capture_output=True, text=True, timeout=timeout)
        return Outcome(p.returncode, p.stdout, p.stderr)
    from cranfield.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:                       # noqa: BLE001 - a traceback is what we count
            traceback.print_exc()
            rc = 1
    return Outcome(int(rc), out.getvalue(), err.getvalue())


def start(args: list[str], stdout=subprocess.DEVNULL) -> subprocess.Popen:
    """A command in its own process group (SIGKILL reaches its children too)."""
    return subprocess.Popen(args, env=ENV, stdout=stdout, stderr=subprocess.DEVNULL, start_new_session=True)


def kill(p: subprocess.Popen) -> bool:
    """SIGKILL the process group of `p`; True when it was still running."""
    alive = p.poll() is None
    if alive:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            alive = False
    p.wait()
    return alive


def timed_kill(args: list[str], delay: float) -> tuple[bool, float]:
    """Start `args`, SIGKILL it after `delay` s; (killed, seconds it ran)."""
    t0 = time.perf_counter()
    p = start(args)
    try:
        p.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        pass
    return kill(p), time.perf_counter() - t0


# ----------------------------------------------------------------------------- the campaign

def make_campaign(work: Path, runs: int, topics: int, depth: int, seed: int) -> tuple[Path, list[dict]]:
    """A simulated campaign and two states of its run files: [{name: bytes}] (state 1 edits one run's
    scores and adds a run)."""
    from engine.simulation.campaigns import simulate, write_campaign
    root = work / "campaign"
    write_campaign(simulate(n_runs=runs, n_topics=topics, depth=depth, seed=seed), root, pool_depth=20)
    s0 = {p.name: p.read_bytes() for p in sorted((root / "runs").iterdir())}
    rng = random.Random(seed)
    names = sorted(s0)
    s1 = dict(s0)
    lines = s0[names[1]].decode().splitlines()
    edited = []
    for ln in lines:
        f = ln.split()
        f[4] = f"{float(f[4]) + rng.uniform(-2, 2):.6f}"
        edited.append(" ".join(f))
    s1[names[1]] = ("\n".join(edited) + "\n").encode()
    extra = [ln.split() for ln in s0[names[0]].decode().splitlines()]
    s1["extraZ.txt"] = "".join(f"{f[0]} Q0 {f[2]} {f[3]} {float(f[4]) * 0.5 + rng.random():.6f} extraZ\n"
                               for f in extra).encode()
    return root, [s0, s1]


def set_runs(root: Path, state: dict) -> None:
    d = root / "runs"
    for p in d.iterdir():
        if p.name not in state:
            p.unlink()
    for name, data in state.items():
        p = d / name
        if not p.exists() or p.read_bytes() != data:
            p.write_bytes(data)


def store_problem(root: Path) -> str | None:
    """What is wrong with the committed store right after a kill: the manifest must parse and every
    part it names must exist with its recorded size (None when no manifest was ever committed)."""
    m = root / STORE / "manifest.json"
    if not m.exists():
        return None
    try:
        man = json.loads(m.read_text())
    except ValueError as exc:
        return f"manifest does not parse ({exc})"
    for e in man.get("files", {}).values():
        if e.get("part"):
            p = root / e["part"]
            if not p.is_file() or p.stat().st_size != e.get("part_bytes"):
                return f"committed part {e['part']} missing or resized"
    return None


def leftovers(root: Path) -> list[str]:
    """Files of the store that the committed manifest does not account for (temporary files, pending or
    unreferenced parts)."""
    d = root / STORE
    man = json.loads((d / "manifest.json").read_text())
    keep = {str(root / e["part"]) for e in man["files"].values() if e.get("part")}
    keep |= {str(d / n) for n in ("manifest.json", "index.parquet", ".gitignore", ".lock")}
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file() and str(p) not in keep)


def snapshot(root: Path) -> tuple:
    d = root / STORE
    if not d.exists():
        return ()
    return tuple(sorted((str(p.relative_to(d)), p.stat().st_size, p.stat().st_mtime_ns)
                        for p in d.rglob("*") if p.is_file()))


def is_refusal(o: Outcome) -> bool:
    return o.rc != 0 and "Traceback" not in o.err and ("--rebuild" in o.err or "part" in o.err)


# ----------------------------------------------------------------------------- ingest

@dataclass
class IngestStats:
    kills: int = 0
    finished_first: int = 0
    store_changed: int = 0
    temp_left_by_kill: int = 0
    committed_damaged: int = 0
    right_numbers: int = 0
    refusals: int = 0
    tracebacks: int = 0
    wrong_numbers: int = 0
    other_failures: int = 0
    recovered: int = 0
    leftovers_after_recovery: int = 0
    duration: float = 0.0
    notes: list[str] = field(default_factory=list)


def ingest_kills(work: Path, kills: int, seed: int, *, runs: int = 12, topics: int = 50, depth: int = 1000,
                 in_process: bool = False, log=print) -> IngestStats:
    rng = random.Random(seed)
    root, states = make_campaign(work, runs, topics, depth, seed)
    st = IngestStats()
    ref, stores = [], []
    for k, state in enumerate(states):                 # clean references and a store of each state
        set_runs(root, state)
        shutil.rmtree(root / STORE, ignore_errors=True)
        t0 = time.perf_counter()
        o = run_cli(["ingest", str(root)], in_process and k > 0)    # the first times a whole ingest
        if k == 0:
            st.duration = time.perf_counter() - t0
        assert o.rc == 0, o.err
        o = run_cli(["eval", "--campaign", str(root)] + EVAL, in_process)
        assert o.rc == 0, o.err
        ref.append(o.out)
        stores.append(work / f"store-{k}")
        shutil.rmtree(stores[-1], ignore_errors=True)
        shutil.copytree(root / STORE, stores[-1])
    assert ref[0] != ref[1]
    trial = 0
    while st.kills < kills and trial < 3 * kills:
        trial += 1
        target = rng.randrange(len(states))
        prior = rng.choice(["empty", "other"])
        shutil.rmtree(root / STORE, ignore_errors=True)
        if prior == "other":
            shutil.copytree(stores[1 - target], root / STORE)
        set_runs(root, states[target])
        before = snapshot(root)
        delay = rng.uniform(0.0, st.duration)
        killed, _ = timed_kill(CLI + ["ingest", str(root)], delay)
        if not killed:
            st.finished_first += 1
            continue
        st.kills += 1
        if snapshot(root) != before:
            st.store_changed += 1
        d = root / STORE
        if d.exists() and any(".tmp" in p.name or ".pending" in str(p) for p in d.rglob("*") if p.is_file()):
            st.temp_left_by_kill += 1
        why = store_problem(root)
        if why:
            st.committed_damaged += 1
            st.notes.append(f"trial {trial}: {why}")
        o = run_cli(["eval", "--campaign", str(root)] + EVAL, in_process)
        verdict = "right"
        if "Traceback" in o.err:
            st.tracebacks += 1
            verdict = "TRACEBACK"
            st.notes.append(f"trial {trial}: traceback after kill at {delay:.2f}s:\n{o.err[-2000:]}")
        elif o.rc == 0 and o.out == ref[target]:
            st.right_numbers += 1
        elif o.rc == 0:
            st.wrong_numbers += 1
            verdict = "WRONG NUMBERS"
            st.notes.append(f"trial {trial}: different numbers after kill at {delay:.2f}s")
        elif is_refusal(o):
            st.refusals += 1
            verdict = "refused"
        else:
            st.other_failures += 1
            verdict = "UNCLEAR FAILURE"
            st.notes.append(f"trial {trial}: exit {o.rc}: {o.err.strip()[-500:]}")
        o1 = run_cli(["ingest", str(root)], in_process)
        o2 = run_cli(["eval", "--campaign", str(root)] + EVAL, in_process)
        left = leftovers(root) if o1.rc == 0 else ["(ingest failed)"]
        if o1.rc == 0 and o2.rc == 0 and o2.out == ref[target] and "Traceback" not in o1.err + o2.err:
            st.recovered += 1
        else:
            st.notes.append(f"trial {trial}: not recovered: ingest {o1.rc} {o1.err[-300:]} eval {o2.rc}")
        if left:
            st.leftovers_after_recovery += 1
            st.notes.append(f"trial {trial}: left after re-ingest: {left[:5]}")
        log(f"  ingest kill {st.kills:3d}: state {target}, store {prior:5s}, after {delay:5.2f} s: {verdict}")
    return st


# ----------------------------------------------------------------------------- judgments

def writer(root: str, wid: str, mode: str, seed: int) -> None:
    """A judging process: add judgments forever, printing `ACK topic doc grade` once each is saved."""
    rng = random.Random(seed)
    topics = [ln.split("\t")[0] for ln in (Path(root) / "topics" / "topics.tsv").read_text().splitlines() if ln]
    from cranfield.cli import main
    i = 0
    while True:                 # READY after the first add: kills land while judgments are written
        t, doc, g = rng.choice(topics), f"{wid}-{i}", rng.choice("012")
        args = ["judgments", "add", root, t, doc, g, "--assessor", wid, "--seconds", "3"]
        if mode == "proc":
            rc = subprocess.run(CLI + args, env=ENV, capture_output=True).returncode
        else:
            with contextlib.redirect_stdout(io.StringIO()):
                rc = main(args)
        if rc == 0:
            print(f"ACK {t} {doc} {g}", flush=True)
        if i == 0:
            print("READY", flush=True)
        i += 1


@dataclass
class JudgmentStats:
    kills: int = 0
    acknowledged: int = 0
    lost: int = 0
    unacknowledged_kept: int = 0
    torn_tails: int = 0
    unreadable: int = 0
    not_clean_after_next_add: int = 0
    proc_mode_writers: int = 0
    notes: list[str] = field(default_factory=list)


def judgment_kills(work: Path, kills: int, seed: int, *, max_delay: float = 1.5, log=print) -> JudgmentStats:
    from engine.errors import FormatError, Warnings
    from engine.judging.workflow import record_judgment
    from engine.judgments.log import read_judgment_log
    from engine.simulation.campaigns import simulate, write_campaign
    rng = random.Random(seed)
    root = work / "judging"
    write_campaign(simulate(n_runs=3, n_topics=10, depth=20, seed=seed), root, pool_depth=5)
    logf = root / "judgments" / "log.jsonl"
    st = JudgmentStats()
    trial = 0
    while st.kills < kills:
        trial += 1
        outs, procs = [], []
        for w in range(2):
            mode = "proc" if rng.random() < 1 / 3 else "loop"
            st.proc_mode_writers += mode == "proc"
            f = open(work / f"writer-{w}.out", "w+")
            outs.append(f)
            procs.append(start([sys.executable, str(Path(__file__).resolve()), "_writer", str(root),
                                f"t{trial}w{w}", mode, str(rng.randrange(10**9))], stdout=f))
        deadline = time.time() + 60
        while time.time() < deadline and not all("READY" in (work / f"writer-{w}.out").read_text() for w in range(2)):
            time.sleep(0.02)
        first = rng.randrange(2)
        time.sleep(rng.uniform(0.05, max_delay))
        st.kills += kill(procs[first])
        time.sleep(rng.uniform(0.05, 0.5))
        st.kills += kill(procs[1 - first])
        acked = set()
        for f in outs:
            f.seek(0)
            for ln in f.read().splitlines():
                if ln.startswith("ACK "):
                    _, t, d, g = ln.split()
                    acked.add((t, d, int(g)))
            f.close()
        st.acknowledged += len(acked)
        w = Warnings()
        try:
            df = read_judgment_log(logf, w) if logf.exists() else None
        except FormatError as exc:
            st.unreadable += 1
            st.notes.append(f"trial {trial}: log unreadable: {exc}")
            df = None
        st.torn_tails += any("cut off" in str(x) for x in w)
        have = set() if df is None else {(str(t), str(d), int(g)) for t, d, g in
                                         zip(df["topic"], df["doc"], df["grade"]) if str(d).startswith(f"t{trial}w")}
        lost = acked - have
        st.lost += len(lost)
        st.unacknowledged_kept += len(have - acked)
        if lost:
            st.notes.append(f"trial {trial}: {len(lost)} acknowledged judgment(s) lost: {sorted(lost)[:3]}")
        topic = df["topic"].iloc[0] if df is not None and len(df) else "401"
        record_judgment(root, str(topic), f"t{trial}-after", 1, "check")
        w2 = Warnings()
        try:
            read_judgment_log(logf, w2)
            if len(w2):
                raise FormatError([])
        except FormatError:
            st.not_clean_after_next_add += 1
        log(f"  judgments trial {trial:3d}: {len(acked):3d} acknowledged, {len(lost)} lost, "
            f"{len(have - acked)} saved unacknowledged{', torn tail' if any('cut off' in str(x) for x in w) else ''}")
    return st


# ----------------------------------------------------------------------------- pools

@dataclass
class PoolStats:
    kills: int = 0
    finished_first: int = 0
    committed: int = 0
    not_built: int = 0
    inconsistent: int = 0
    concurrent_ok: int = 0
    concurrent_failed: int = 0
    duration: float = 0.0
    notes: list[str] = field(default_factory=list)


def pool_problems(root: Path) -> list[str]:
    """After recover_pools: pending files, pool files whose content is not their latest log entry's,
    pools in the log without a file, unreadable log lines."""
    from engine.pooling import pool_log
    log = pool_log(root)                       # runs recover_pools
    pdir = root / "pools"
    out = [f"{p.name} left" for p in pdir.glob("*.pending")]
    raw = (pdir / "pools.log.jsonl").read_bytes().split(b"\n") if (pdir / "pools.log.jsonl").exists() else []
    if len(log) != len([x for x in raw if x.strip()]):
        out.append("a pools log line does not read back")
    last = {}
    for r in log:
        last[r["file"]] = r["sha256"]
    for f, sha in last.items():
        p = root / f
        if not p.is_file():
            out.append(f"{f}: in the log, no file")
        elif hashlib.sha256(p.read_bytes()).hexdigest() != sha:
            out.append(f"{f}: content is not its latest log entry's")
    for p in pdir.glob("pool-*.tsv"):
        if str(p.relative_to(root)) not in last:
            out.append(f"{p.name}: a pool file without a log entry")
    return out


def pool_kills(work: Path, kills: int, seed: int, *, runs: int = 8, topics: int = 30, depth: int = 200,
               log=print) -> PoolStats:
    from engine.pooling import pool_log
    from engine.simulation.campaigns import simulate, write_campaign
    rng = random.Random(seed)
    root = work / "pooling"
    write_campaign(simulate(n_runs=runs, n_topics=topics, depth=depth, seed=seed), root, pool_depth=10)
    st = PoolStats()
    assert run_cli(["ingest", str(root)]).rc == 0
    other = start(CLI + ["pool", str(root), "--strategy", "depth", "--depth", "7", "--name", "b"])
    t0 = time.perf_counter()                   # the length of a pool build beside another one
    assert run_cli(["pool", str(root), "--strategy", "depth", "--depth", "5", "--name", "a"]).rc == 0
    st.duration = time.perf_counter() - t0
    assert other.wait() == 0
    trial = 0
    while st.kills < kills and trial < 3 * kills:
        trial += 1
        name = rng.choice(["a", "b", f"n{trial}"])
        n_before = len(pool_log(root))
        args = CLI + ["pool", str(root), "--strategy", "depth", "--depth", str(rng.randint(3, 40)), "--name", name]
        other = start(CLI + ["pool", str(root), "--strategy", "depth", "--depth", str(rng.randint(3, 40)),
                             "--name", f"c{trial % 3}"])
        killed, _ = timed_kill(args, rng.uniform(0.0, st.duration))
        rc = other.wait()
        st.concurrent_ok += rc == 0
        st.concurrent_failed += rc != 0
        if not killed:
            st.finished_first += 1
            continue
        st.kills += 1
        bad = pool_problems(root)
        names = [r["name"] for r in pool_log(root)[n_before:]]
        st.committed += name in names
        st.not_built += name not in names
        if bad or rc != 0:
            st.inconsistent += bool(bad)
            st.notes.append(f"trial {trial}: {bad} (concurrent pool exit {rc})")
        log(f"  pool kill {st.kills:3d}: pool {name}: {'committed' if name in names else 'not built'}"
            f"{'; INCONSISTENT ' + str(bad) if bad else ''}")
    return st


# ----------------------------------------------------------------------------- main

def summary(i: IngestStats | None, j: JudgmentStats | None, p: PoolStats | None) -> str:
    rows = []
    if i is not None:
        rows += [("ingest", "SIGKILLs (delay uniform over a whole ingest, %.1f s)" % i.duration, i.kills),
                 ("ingest", "  store changed by the killed ingest", i.store_changed),
                 ("ingest", "  temporary files left by the kill", i.temp_left_by_kill),
                 ("ingest", "  committed store damaged by the kill", i.committed_damaged),
                 ("ingest", "  eval right after: reference numbers", i.right_numbers),
                 ("ingest", "  eval right after: clear refusal", i.refusals),
                 ("ingest", "  eval right after: different numbers", i.wrong_numbers),
                 ("ingest", "  eval right after: traceback", i.tracebacks),
                 ("ingest", "  eval right after: unclear failure", i.other_failures),
                 ("ingest", "  re-ingest then eval = reference", i.recovered),
                 ("ingest", "  files left after re-ingest", i.leftovers_after_recovery)]
    if j is not None:
        rows += [("judgments add", "SIGKILLs (two writers per trial)", j.kills),
                 ("judgments add", "  acknowledged judgments", j.acknowledged),
                 ("judgments add", "  acknowledged judgments lost", j.lost),
                 ("judgments add", "  saved but not yet acknowledged (kept)", j.unacknowledged_kept),
                 ("judgments add", "  torn last line after a kill (ignored on read)", j.torn_tails),
                 ("judgments add", "  log unreadable after a kill", j.unreadable),
                 ("judgments add", "  log not clean after the next add", j.not_clean_after_next_add)]
    if p is not None:
        rows += [("pool", "SIGKILLs (delay uniform over a build, %.1f s; a second pool built concurrently)" % p.duration, p.kills),
                 ("pool", "  killed pool committed (file + log entry)", p.committed),
                 ("pool", "  killed pool not built (nothing left)", p.not_built),
                 ("pool", "  pool file and log inconsistent", p.inconsistent),
                 ("pool", "  concurrent pool builds failed", p.concurrent_failed)]
    w = max(len(r[1]) for r in rows)
    lines = [f"| {'command':<13} | {'what':<{w}} | {'count':>5} |", f"|{'-' * 15}|{'-' * (w + 2)}|{'-' * 7}|"]
    lines += [f"| {a:<13} | {b:<{w}} | {c:>5} |" for a, b, c in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_writer":
        writer(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=100, help="SIGKILLs per experiment (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="ingest,judgments,pool")
    ap.add_argument("--work", default=None, help="working directory (default: a temporary one)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    only = set(a.only.split(","))
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="cranfield-kills-") as tmp:
        work = Path(a.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        i = ingest_kills(work, a.kills, a.seed) if "ingest" in only else None
        j = judgment_kills(work, a.kills, a.seed) if "judgments" in only else None
        p = pool_kills(work, a.kills, a.seed) if "pool" in only else None
    for s in (i, j, p):
        for n in (s.notes if s else []):
            print("NOTE", n)
    print(f"\nseed {a.seed}, {time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f}")
    print(summary(i, j, p))
    bad = ((i and (i.tracebacks or i.wrong_numbers or i.other_failures or i.committed_damaged
                   or i.recovered != i.kills or i.leftovers_after_recovery))
           or (j and (j.lost or j.unreadable or j.not_clean_after_next_add))
           or (p and (p.inconsistent or p.concurrent_failed)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
