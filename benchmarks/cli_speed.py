"""Whole-process time of `cranfield compare` and `cranfield stability gstudy` on a simulated 31-run x 40-topic
campaign (issue 25: compare took 14-21 s before the two runs' ranked lists came from one pass of the ranking
kernel, target <= 2 s; gstudy 12.9 s), and of `cranfield cost --plan` on (a copy of) the bundled demo
(issue 25: 12.8 s).

    python3 benchmarks/cli_speed.py               # median of 5 runs of each command
    python3 benchmarks/cli_speed.py --reps 3 --campaign DIR A B

Timed, each as a fresh process, in turns: `cranfield compare DIR A B`, `cranfield stability gstudy
--campaign DIR`, `cranfield cost --campaign DEMO --plan` and, as the floor every command pays,
`cranfield status DIR` (interpreter start, imports, reading the campaign). A first run of each (it fills
the run store and the evaluation cache) is timed apart. The commands run as an installed program does:
bytecode compiled first, PYTHONDONTWRITEBYTECODE removed from their environment. The load average is
printed beside the figures: the machine is shared.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


CPU: dict[str, list[float]] = {}


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}   # as an installed program runs


def _time(cmd: list[str], name: str = "") -> float:
    """Wall seconds of one fresh process; its CPU seconds (user + system) go to CPU[name]."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(name, []).append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--campaign", default=None, help="campaign directory (default: simulate one)")
    ap.add_argument("runs", nargs="*", default=["asterA1", "asterA2"])
    a = ap.parse_args()
    cli = [sys.executable, "-m", "cranfield.cli"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "engine", "cranfield"], cwd=ROOT, check=True, env=ENV)
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, str(ROOT))
        from tui.testing import private_copy
        demo = str(private_copy(ROOT / "campaigns" / "demo", Path(tmp) / "demo"))   # the demo is never written
        camp = a.campaign or str(Path(tmp) / "sim31")
        if a.campaign is None:
            subprocess.run(cli + ["simulate", "--runs", "31", "--topics", "40", "--seed", "7", "--out", camp],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        cmds = {"cranfield compare": cli + ["compare", camp, *a.runs[:2]],
                "cranfield stability gstudy": cli + ["stability", "gstudy", "--campaign", camp],
                "cranfield cost --plan (demo)": cli + ["cost", "--campaign", demo, "--plan"],
                "cranfield status": cli + ["status", camp]}
        first = {name: _time(cmd) for name, cmd in cmds.items()}   # fills the store and the caches
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(a.reps):
            for name, cmd in cmds.items():
                times[name].append(_time(cmd, name))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus); "
          f"31 runs x 40 topics (cost --plan: the demo, 12 runs x 20 topics), {a.reps} repetitions")
    floor = statistics.median(times["cranfield status"])
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:<28} median {m:5.2f} s  min {min(ts):5.2f} s  first {first[name]:5.2f} s  "
              f"ratio to status {m / floor:4.2f}  CPU {statistics.median(CPU[name]):5.2f} s")
    print("target: compare <= 2 s whole process (CPU time: the wall time of an idle machine, roughly)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
