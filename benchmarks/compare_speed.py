"""Whole-process time of `cranfield compare` on a simulated 31-run x 40-topic campaign (issue 25: 14-21 s
before the two runs' ranked lists came from one pass of the ranking kernel; target <= 2 s).

    python3 benchmarks/compare_speed.py               # median of 5 runs of each command
    python3 benchmarks/compare_speed.py --reps 3 --campaign DIR A B

Timed, each as a fresh process, in turns: `cranfield compare DIR A B` and, as the floor every command
pays, `cranfield status DIR` (interpreter start, imports, reading the campaign). The first compare run
(it fills the evaluation cache) is not counted. The load average is printed beside the figures: the
machine is shared.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--campaign", default=None, help="campaign directory (default: simulate one)")
    ap.add_argument("runs", nargs="*", default=["asterA1", "asterA2"])
    a = ap.parse_args()
    cli = [sys.executable, "-m", "cranfield.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        camp = a.campaign or str(Path(tmp) / "sim31")
        if a.campaign is None:
            subprocess.run(cli + ["simulate", "--runs", "31", "--topics", "40", "--seed", "7", "--out", camp],
                           cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        compare = cli + ["compare", camp, *a.runs[:2]]
        _time(compare)                                   # warm the evaluation cache and the run store
        tc, ts = [], []
        for _ in range(a.reps):
            tc.append(_time(compare))
            ts.append(_time(cli + ["status", camp]))
    mc, ms = statistics.median(tc), statistics.median(ts)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus)")
    print(f"cranfield compare (31 runs x 40 topics): median {mc:.2f} s over {a.reps} (min {min(tc):.2f} s; "
          f"target <= 2 s)")
    print(f"cranfield status (same campaign):         median {ms:.2f} s (min {min(ts):.2f} s)")
    print(f"ratio compare / status: {mc / ms:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
