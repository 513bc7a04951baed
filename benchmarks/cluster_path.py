"""The cluster path (issue 39, item 5): a campaign's evaluation through a real `distributed` scheduler
with two local single-threaded workers, against the local path.

    python3 benchmarks/cluster_path.py [--dir /tmp/cranfield-scale] [--workers 2] [--json PATH]

The campaign (default: benchmarks/scale.py's Million-Query one, built by that script) is evaluated by
`cranfield eval --campaign DIR -m official` as a separate process, once locally (its own worker
processes) and once with `--dask tcp://...`: a `dask scheduler` and `--workers` `dask worker --nthreads 1`
processes started here, on this machine. Printed: whether the two outputs are identical byte for byte,
each path's wall time, the CPU seconds of the command and (cluster) of the scheduler and workers, peak
memory (the command's, the cluster's, and the scheduler's and each worker's own), and the cluster's
overhead over the local path. The load average is printed with each figure.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import load, machine, run_measured  # noqa: E402


def _cpu(pids: list[int]) -> float:
    import psutil
    total = 0.0
    for p in pids:
        try:
            proc = psutil.Process(p)
            for q in [proc, *proc.children(recursive=True)]:
                t = q.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def _rss(pids: list[int]) -> int:
    import psutil
    total = 0
    for p in pids:
        try:
            proc = psutil.Process(p)
            total += sum(q.memory_info().rss for q in [proc, *proc.children(recursive=True)])
        except psutil.NoSuchProcess:
            pass
    return total


def _ram_gb() -> float:
    import psutil
    return psutil.virtual_memory().total / 2**30


class Cluster:
    """A dask scheduler and `n` single-threaded workers on 127.0.0.1 (started with `with`)."""

    def __init__(self, n: int, env: dict):
        self.n, self.env = n, env

    def __enter__(self):
        dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        self.procs = []
        sched = subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", "0", "--no-dashboard"], env=self.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(sched)
        self.address = None
        t0 = time.monotonic()
        while self.address is None and time.monotonic() - t0 < 60:
            line = sched.stderr.readline()
            if "Scheduler at:" in line:
                self.address = line.split("Scheduler at:", 1)[1].strip()
        if self.address is None:
            raise SystemExit("the dask scheduler did not start")
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                 "--nworkers", "1", "--no-dashboard", "--memory-limit", "0"],
                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client
        with Client(self.address) as c:
            c.wait_for_workers(self.n, timeout=120)
        return self

    def __exit__(self, *a):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/tmp/cranfield-scale")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--measures", default="official")
    ap.add_argument("--json", default=None)
    ap.add_argument("--cluster-first", action="store_true",
                    help="run the cluster path first (for an A/B in turns on a shared machine)")
    a = ap.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "cranfield.cli", "eval", "--campaign", a.dir, "-m", a.measures]
    print(f"# {machine()}; campaign {a.dir}; `cranfield eval --campaign DIR -m {a.measures}`")
    def run_local():
        l0 = load()
        local = run_measured(cmd, env)
        print(f"local path:   {local.wall:7.1f} s wall, {local.cpu:6.1f} s CPU, peak {local.peak_mb / 1024:.2f} GB; "
              f"load {l0}", flush=True)
        return local, l0
    if not a.cluster_first:
        local, l0 = run_local()
    with Cluster(a.workers, env) as cl:
        pids = [p.pid for p in cl.procs]
        c0, l1 = _cpu(pids), load()
        peak = [0]
        each = [0] * len(pids)                   # the scheduler's and each worker's own peak (its nanny's tree)
        import threading
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                now = [_rss([p]) for p in pids]
                peak[0] = max(peak[0], sum(now))
                each[:] = [max(a, b) for a, b in zip(each, now)]
                stop.wait(0.1)
        th = threading.Thread(target=sample, daemon=True)
        th.start()
        dist = run_measured([*cmd, "--dask", cl.address], env)
        stop.set()
        th.join()
        c1 = _cpu(pids)
    print(f"cluster path: {dist.wall:7.1f} s wall, {dist.cpu:6.1f} s CPU in the command + {c1 - c0:.1f} s in the "
          f"scheduler and {a.workers} workers, peak {dist.peak_mb / 1024:.2f} GB (command) + {peak[0] / 2**30:.2f} GB "
          f"(cluster); load {l1}", flush=True)
    print(f"  peaks: scheduler {each[0] / 2**30:.2f} GB, " + ", ".join(
        f"worker {i} {b / 2**30:.2f} GB" for i, b in enumerate(each[1:], 1)) + f"; RAM {_ram_gb():.0f} GB")
    if a.cluster_first:
        local, l0 = run_local()
    same = local.stdout == dist.stdout
    print(f"output identical: {same} ({len(local.stdout):,} bytes, sha256 {hashlib.sha256(local.stdout).hexdigest()[:16]}); "
          f"cluster overhead over the local path: {dist.wall - local.wall:+.1f} s wall ({dist.wall / local.wall:.2f}x), "
          f"{dist.cpu + c1 - c0 - local.cpu:+.1f} s CPU; load {load()}")
    if a.json:
        Path(a.json).write_text(json.dumps({"local": [local.wall, local.cpu, local.peak_mb],
                                            "cluster": [dist.wall, dist.cpu, c1 - c0, dist.peak_mb, peak[0] / 2**20],
                                            "peaks_mb": {"scheduler": each[0] / 2**20,
                                                         "workers": [b / 2**20 for b in each[1:]]},
                                            "load": [l0, l1],
                                            "identical": same}, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
