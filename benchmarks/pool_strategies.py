"""Pool strategies at equal judging budgets against the simulated truth: the README's figure, as the
`cranfield experiment pools` command computes it (RMSE, Kendall tau and Pearson rho of every run's estimated
MAP against its true MAP), whole process, with its wall time.

    python3 benchmarks/pool_strategies.py                     # 30 runs x 50 topics, budget 5%, 5 trials
    python3 benchmarks/pool_strategies.py --runs 10 --topics 10 --trials 1
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import load  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--budget", default="5%")
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "cranfield.cli", "experiment", "pools", "--runs", str(args.runs),
           "--topics", str(args.topics), "--budget", args.budget, "--trials", str(args.trials)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stderr.strip()[-600:])
    print(p.stdout.rstrip())
    print(f"{' '.join(cmd[2:])}: {time.perf_counter() - t0:.1f} s whole process, load {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
