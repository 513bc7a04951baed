"""Real SIGKILLs of `cranfield ingest`, `cranfield judgments add` and `cranfield pool` (issue 14).

    python benchmarks/kills.py [--kills 100 --seed 1] [--only ingest,judgments,pool,repair,submit,fulldisk]
                               [--work DIR]

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
repair     (issue 26) `judgments repair --apply` swaps in a new log while two writer processes append:
           every acknowledged judgment must be in the log afterwards.
submit     (issue 26) two `cranfield submit --manual --group G` at once: every accepted run is in
           campaign.yaml with its group and type, and its file in runs/.
fulldisk   (issue 26) `judgments add` in a loop under a file-size limit (RLIMIT_FSIZE at a random byte,
           a write past it fails as on a full disk): every acknowledged judgment is present, no torn
           line is left, the error names the log.

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
    unreferenced parts and heads)."""
    d = root / STORE
    man = json.loads((d / "manifest.json").read_text())
    keep = {str(root / e["part"]) for e in man["files"].values() if e.get("part")}
    from engine.evaluation.store.heads import head_name      # each committed part's head beside it
    keep |= {str(head_name(d, e["tag"], e["sha256"])) for e in man["files"].values()
             if e.get("tag") is not None and e.get("sha256")}
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
    # the kill falls within the ingest's length: a whole ingest's at first, then the shortest an ingest of
    # that kind (onto an empty store, or onto the other state's, which re-ingests only what changed) was
    # seen to finish in
    span = {"empty": st.duration, "other": st.duration}
    while st.kills < kills and trial < 3 * kills:
        trial += 1
        target = rng.randrange(len(states))
        prior = rng.choice(["empty", "other"])
        shutil.rmtree(root / STORE, ignore_errors=True)
        if prior == "other":
            shutil.copytree(stores[1 - target], root / STORE)
        set_runs(root, states[target])
        before = snapshot(root)
        delay = rng.uniform(0.0, span[prior])
        killed, ran = timed_kill(CLI + ["ingest", str(root)], delay)
        if not killed:
            st.finished_first += 1
            span[prior] = min(span[prior], ran)
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


# ----------------------------------------------------------------------------- races and a full disk (issue 26)

def _fork_ctx():
    import multiprocessing
    return multiprocessing.get_context("fork")


def _repair_writer(root: str, wid: str, out, stop) -> None:
    """Append judgments as fast as the log takes them (the append every judgment write of the CLI and the
    TUI goes through), sending each acknowledged doc id to `out`, until told to stop."""
    from engine.judgments.log import append_records, judgment_record, log_path
    rng = random.Random(wid)
    i = 0
    while not stop.is_set():
        d = f"{wid}-{i}"
        append_records(log_path(root), [judgment_record("401", d, 1, wid)])
        out.put(d)
        i += 1
        time.sleep(rng.uniform(0, 0.004))          # a busy judging desk; gaps let a repair's plan hold
    out.put(None)


@dataclass
class RaceStats:
    trials: int = 0
    acknowledged: int = 0
    lost: int = 0
    unreadable: int = 0
    failures: int = 0
    repairs: int = 0                 # repair: swaps done while the writers ran
    repair_retries: int = 0          # repair: refused because the log changed while planning (then retried)
    notes: list[str] = field(default_factory=list)


def _small_campaign(root: Path, seed: int) -> Path:
    from engine.simulation.campaigns import simulate, write_campaign
    write_campaign(simulate(n_runs=2, n_topics=4, depth=10, seed=seed), root, pool_depth=3)
    return root


def repair_race(work: Path, trials: int, seed: int, *, log=print) -> RaceStats:
    """`judgments repair --apply` (which swaps in a new log) while two writers append: every
    acknowledged judgment must be in the log afterwards."""
    import fcntl

    from engine.errors import CranfieldError
    from engine.judgments.repair import apply_repair, plan_repair
    from engine.judgments.log import _open_locked, _write_all, read_judgment_log
    rng = random.Random(seed)
    root = _small_campaign(work / "repair", seed)
    logf = root / "judgments" / "log.jsonl"
    ctx = _fork_ctx()
    st = RaceStats()
    for trial in range(trials):
        if logf.exists() and logf.stat().st_size > 1 << 20:
            logf.unlink()                            # keep planning a repair cheap
        q, stop = ctx.Queue(), ctx.Event()
        ws = [ctx.Process(target=_repair_writer, args=(str(root), f"r{trial}w{w}", q, stop)) for w in range(2)]
        for w in ws:
            w.start()
        time.sleep(rng.uniform(0.02, 0.2))
        fd = _open_locked(logf)                      # a damaged line for the repair to move away
        try:
            _write_all(fd, b"{damaged\n")
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        for _ in range(50):                          # a log that changed while planning is refused: again
            try:
                apply_repair(plan_repair(logf))
                st.repairs += 1
                break
            except CranfieldError:
                st.repair_retries += 1
        time.sleep(rng.uniform(0.0, 0.05))
        stop.set()
        acked, done = set(), 0
        while done < 2:
            d = q.get(timeout=60)
            if d is None:
                done += 1
            else:
                acked.add(d)
        for w in ws:
            w.join(30)
            st.failures += w.exitcode != 0
        apply_repair(plan_repair(logf))              # writers stopped: a repair still due succeeds now
        try:
            have = set(read_judgment_log(logf)["doc"].astype(str))
        except Exception as exc:                     # noqa: BLE001
            st.unreadable += 1
            st.notes.append(f"repair trial {trial}: log unreadable: {exc}")
            have = set()
        lost = acked - have
        st.trials += 1
        st.acknowledged += len(acked)
        st.lost += len(lost)
        if lost:
            st.notes.append(f"repair trial {trial}: {len(lost)} acknowledged judgment(s) lost, e.g. {sorted(lost)[0]}")
        if trial % 10 == 9:
            log(f"  repair vs append: {trial + 1} trials, {st.acknowledged} acknowledged, {st.lost} lost")
    return st


def _submitter(root: str, run: str, group: str, out) -> None:
    from cranfield.cli import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            rc = main(["submit", root, run, "--group", group, "--manual"])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    out.put((run, rc))


def submit_race(work: Path, trials: int, seed: int, *, log=print) -> RaceStats:
    """Two `cranfield submit --manual --group G` at once: both accepted must both be in campaign.yaml
    (group G, type manual) with their run files."""
    from engine.campaign.campaign import load_campaign
    rng = random.Random(seed)
    root = _small_campaign(work / "submit", seed)
    base = sorted((root / "runs").iterdir())[0]
    tag0 = base.read_text().split()[5]
    ctx = _fork_ctx()
    st = RaceStats()
    for trial in range(trials):
        runs = []
        for k in range(2):
            tag = f"s{trial}x{k}"
            p = work / f"{tag}.txt"
            p.write_text(base.read_text().replace(tag0, tag))
            runs.append(str(p))
        q = ctx.Queue()
        ps = [ctx.Process(target=_submitter, args=(str(root), r, "G", q)) for r in runs]
        for p in ps:
            p.start()
            time.sleep(rng.uniform(0, 0.01))
        res = [q.get(timeout=120) for _ in ps]
        for p in ps:
            p.join(30)
        accepted = [Path(r).stem for r, rc in res if rc == 0]
        st.failures += sum(rc != 0 for _, rc in res)
        try:
            cfg = load_campaign(root).config["runs"]
        except Exception as exc:                     # noqa: BLE001
            st.unreadable += 1
            st.notes.append(f"submit trial {trial}: campaign.yaml unreadable: {exc}")
            cfg = {}
        st.trials += 1
        st.acknowledged += len(accepted)
        for tag in accepted:
            m = cfg.get(tag)
            if not m or m.get("group") != "G" or m.get("type") != "manual" or not (root / "runs" / f"{tag}.txt").is_file():
                st.lost += 1
                st.notes.append(f"submit trial {trial}: accepted run {tag} missing or changed: {m}")
        if trial % 10 == 9:
            log(f"  concurrent submits: {trial + 1} trials, {st.acknowledged} accepted, {st.lost} lost")
    return st


def _full_disk_writer(root: str, limit: int, wid: str, out) -> None:
    """Judge with the file size limited (RLIMIT_FSIZE: a write past `limit` fails like a full disk)."""
    import resource
    from engine.util.atomic import os_error_message
    from engine.errors import CranfieldError
    from engine.judging.workflow import record_judgment
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    sys.dont_write_bytecode = True    # a .pyc cut short by the limit would break every later import of it
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    i = 0
    while True:
        d = f"{wid}-{i}"
        try:
            record_judgment(root, "401", d, 1, wid)
        except OSError as exc:
            out.put(("ERR", os_error_message(exc)))
            return
        except CranfieldError as exc:
            out.put(("ERR", str(exc)))
            return
        out.put(("ACK", d))
        i += 1


def full_disk(work: Path, trials: int, seed: int, *, log=print) -> RaceStats:
    """`judgments add` until the disk is full (a file-size limit at a random byte): every acknowledged
    judgment is present, the log reads back without a torn line, the error names the log."""
    from engine.errors import Warnings
    from engine.judgments.log import read_judgment_log
    rng = random.Random(seed)
    root = _small_campaign(work / "fulldisk", seed)
    logf = root / "judgments" / "log.jsonl"
    ctx = _fork_ctx()
    st = RaceStats()
    for trial in range(trials):
        size = logf.stat().st_size if logf.exists() else 0
        q = ctx.Queue()
        p = ctx.Process(target=_full_disk_writer, args=(str(root), size + rng.randrange(1, 4000), f"f{trial}", q))
        p.start()
        acked, msg = set(), ""
        while True:
            kind, val = q.get(timeout=120)
            if kind == "ACK":
                acked.add(val)
            else:
                msg = val
                break
        p.join(30)
        w = Warnings()
        try:
            have = set(read_judgment_log(logf, w)["doc"].astype(str))
        except Exception as exc:                     # noqa: BLE001
            st.unreadable += 1
            st.notes.append(f"full disk trial {trial}: log unreadable: {exc}")
            have = set()
        st.trials += 1
        st.acknowledged += len(acked)
        st.lost += len(acked - have)
        if len(w) or str(logf) not in msg or "unknown file" in msg:
            st.failures += 1
            st.notes.append(f"full disk trial {trial}: {'torn line left; ' if len(w) else ''}message: {msg}")
        if trial % 10 == 9:
            log(f"  full disk: {trial + 1} trials, {st.acknowledged} acknowledged, {st.lost} lost")
    return st


def race_summary(r: RaceStats | None, s: RaceStats | None, f: RaceStats | None) -> str:
    rows = []
    if r is not None:
        rows += [("repair", "trials (repair --apply while two writers append)", r.trials),
                 ("repair", "  repairs done while the writers ran", r.repairs),
                 ("repair", "  repairs refused (log changed while planning), retried", r.repair_retries),
                 ("repair", "  acknowledged judgments", r.acknowledged),
                 ("repair", "  acknowledged judgments lost", r.lost),
                 ("repair", "  log unreadable", r.unreadable),
                 ("repair", "  writer failures", r.failures)]
    if s is not None:
        rows += [("submit", "trials (two submits --manual --group G at once)", s.trials),
                 ("submit", "  accepted runs", s.acknowledged),
                 ("submit", "  accepted runs lost or changed in campaign.yaml", s.lost),
                 ("submit", "  campaign.yaml unreadable", s.unreadable),
                 ("submit", "  submits refused", s.failures)]
    if f is not None:
        rows += [("full disk", "trials (judgments add until a write fails)", f.trials),
                 ("full disk", "  acknowledged judgments", f.acknowledged),
                 ("full disk", "  acknowledged judgments lost", f.lost),
                 ("full disk", "  log unreadable", f.unreadable),
                 ("full disk", "  torn line left or message not naming the log", f.failures)]
    return _table(rows)


def _table(rows: list[tuple]) -> str:
    """The Markdown table (command, what, count) the summaries print."""
    if not rows:
        return ""
    w = max(len(x[1]) for x in rows)
    lines = [f"| {'command':<13} | {'what':<{w}} | {'count':>5} |", f"|{'-' * 15}|{'-' * (w + 2)}|{'-' * 7}|"]
    lines += [f"| {a:<13} | {b:<{w}} | {c:>5} |" for a, b, c in rows]
    return "\n".join(lines)


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
    return _table(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_writer":
        writer(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=100, help="SIGKILLs per experiment (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="ingest,judgments,pool,repair,submit,fulldisk")
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
        r = repair_race(work, a.kills, a.seed) if "repair" in only else None
        sb = submit_race(work, a.kills, a.seed) if "submit" in only else None
        fd = full_disk(work, a.kills, a.seed) if "fulldisk" in only else None
    for s in (i, j, p, r, sb, fd):
        for n in (s.notes if s else []):
            print("NOTE", n)
    print(f"\nseed {a.seed}, {time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f}")
    if i or j or p:
        print(summary(i, j, p))
    print(race_summary(r, sb, fd))
    bad = ((i and (i.tracebacks or i.wrong_numbers or i.other_failures or i.committed_damaged
                   or i.recovered != i.kills or i.leftovers_after_recovery))
           or (j and (j.lost or j.unreadable or j.not_clean_after_next_add))
           or (p and (p.inconsistent or p.concurrent_failed))
           or any(x and (x.lost or x.unreadable or x.failures) for x in (r, sb, fd)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
