"""Whole-process measurement shared by the benchmarks: wall time, CPU seconds and the peak summed
resident set of a process tree (the command and every process it starts), sampled from /proc.

`run_measured(cmd)` runs one command; `run_group(cmds)` runs several one after another (trec_eval's one
file after another) and reports their summed wall and CPU and the largest peak. CPU comes from
getrusage(RUSAGE_CHILDREN) before and after (Linux counts every waited-for descendant), so a command's
worker processes are included.
"""
from __future__ import annotations

import os
import platform
import resource
import subprocess
import threading
import time
from dataclasses import dataclass

PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Summed RSS in bytes of process `root` and all its descendants (0 when it has exited)."""
    kids: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            kids.setdefault(int(parts[1]), []).append(int(d))
            rss[int(d)] = int(parts[21]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(kids.get(p, []))
    return total


class PeakRSS:
    """Largest summed RSS of the tree under `root` (default: this process) while the block runs."""

    def __init__(self, root: int | None = None, every: float = 0.02):
        self.root, self.every, self.peak, self._stop = root, every, 0, threading.Event()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.root or os.getpid()))
            self._stop.wait(self.every)

    def __enter__(self):
        self.t0 = time.perf_counter()
        self._cpu0 = _cpu_tree()
        self._th = threading.Thread(target=self._run, daemon=True)
        self._th.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._th.join()
        self.peak = max(self.peak, tree_rss(self.root or os.getpid()))
        self.seconds = time.perf_counter() - self.t0
        self.cpu = _cpu_tree() - self._cpu0          # this process and its reaped workers
        self.load = os.getloadavg()[0]


def _cpu_tree() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@dataclass
class Measured:
    """One command's (or one group's) whole-process figures."""

    wall: float
    cpu: float
    peak_mb: float
    stdout: bytes = b""


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_measured(cmd: list[str], env: dict | None = None, stdin=None, shell: bool = False) -> Measured:
    """Run `cmd` to completion; its wall and CPU seconds, its tree's peak RSS and its stdout. Raises
    SystemExit with the command's stderr when it fails."""
    c0, t0 = _cpu_children(), time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, stdin=stdin, shell=shell)
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss(p.pid))
            stop.wait(0.02)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    if p.returncode != 0:
        raise SystemExit(f"{cmd if shell else ' '.join(map(str, cmd))} failed ({p.returncode}): "
                         f"{err.decode(errors='replace').strip()[-600:]}")
    return Measured(wall, _cpu_children() - c0, peak[0] / 2**20, out)


def run_group(cmds: list[list[str]], env: dict | None = None) -> Measured:
    """Commands one after another: summed wall and CPU, largest peak, concatenated stdout."""
    ms = [run_measured(c, env) for c in cmds]
    return Measured(sum(m.wall for m in ms), sum(m.cpu for m in ms), max(m.peak_mb for m in ms),
                    b"".join(m.stdout for m in ms))


def machine() -> str:
    """CPU model, cores and Python version of this machine, one line."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()}-CPU {platform.machine()} ({model}), Python {platform.python_version()}"


def load() -> str:
    """The 1/5/15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
