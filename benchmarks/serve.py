"""`cranfield serve` under load: N concurrent assessor sessions, each pressing a key every second.

    python3 benchmarks/serve.py [--sessions 20] [--seconds 30] [--key i] [--dir /tmp/serve-bench]

A copy of the demo campaign (pool depth 60: documents left to judge) is served by `cranfield serve` on a
free loopback port, with one token per session. Each session is a websocket client speaking
textual-serve's protocol exactly as the browser page does (connect to /ws with the sign-in cookie,
`["stdin", KEY]` text frames, binary screen frames back): headless Chromium is not used for the load,
because 20 browsers would measure Chromium's own rendering on these 2 cores, not the desk. After every
session has drawn its first screen, each presses KEY once a second (default `i`, which shows or hides the
topic panel: a real redraw of most of the screen, and no judgment written), starting at staggered
offsets. Latency is from sending the key to the first screen frame that follows it ("first") and to the
last frame of that update (frames until 50 ms of quiet, less the quiet: "complete"). Memory per session
is the resident and proportional set (PSS: shared pages divided among the processes sharing them) of
each desk process, read from /proc after the run; the load average is printed before and after (the
machine may be shared). Goal: 20 sessions on a 2-core machine with p95 under 150 ms.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def pctl(xs: list[float], q: float) -> float:
    """The q-quantile of xs (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))] if s else float("nan")


def desk_pids(server_pid: int) -> list[int]:
    """The desk processes (children of the server)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[1]) == server_pid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                continue
    return out


def desk_cpu(server_pid: int) -> dict[int, float]:
    """CPU seconds (user + system) used so far per process: the desks and the server itself."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for p in [server_pid, *desk_pids(server_pid)]:
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            out[p] = (int(f[11]) + int(f[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return out


def memory(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of process `pid` in MiB."""
    rss = pss = 0.0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1]) / 1024
        elif line.startswith("Pss:"):
            pss = int(line.split()[1]) / 1024
    return rss, pss


async def session(url: str, token: str, key: str, seconds: float, offset: float, started: asyncio.Event,
                  ready: set, lat_first: list, lat_done: list, failed: list) -> None:
    """One assessor's session; a session that breaks is counted in `failed` (with why), not fatal."""
    try:
        await _session(url, token, key, seconds, offset, started, ready, lat_first, lat_done)
    except Exception as exc:                  # noqa: BLE001 - reported with the figures
        failed.append(f"{type(exc).__name__}: {exc}")
    finally:
        ready.add(token)                      # never wait for a broken session


async def _session(url: str, token: str, key: str, seconds: float, offset: float, started: asyncio.Event,
                   ready: set, lat_first: list, lat_done: list) -> None:
    import aiohttp
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(f"{url}/ws?width=100&height=30", headers={"Cookie": f"cranfield_desk={token}"},
                                max_msg_size=0) as ws:
            n = 0
            while n < 2000:                                  # the first screen
                m = await ws.receive(timeout=120)
                if m.type == aiohttp.WSMsgType.BINARY:
                    n += len(m.data)
            while True:                                      # ... drawn completely
                try:
                    await ws.receive(timeout=1.0)
                except asyncio.TimeoutError:
                    break
            ready.add(token)
            await started.wait()
            await asyncio.sleep(offset)
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                while True:                                  # frames of an earlier update are not this key's
                    try:
                        await ws.receive(timeout=0.001)
                    except asyncio.TimeoutError:
                        break
                tick = time.perf_counter()
                await ws.send_str(json.dumps(["stdin", key]))
                first = last = None
                while True:
                    try:
                        m = await ws.receive(timeout=0.05 if first is not None else 5.0)
                    except asyncio.TimeoutError:
                        break
                    if m.type == aiohttp.WSMsgType.BINARY:
                        last = time.perf_counter()
                        first = first or last
                    elif m.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        return
                if first is not None:
                    lat_first.append((first - tick) * 1000)
                    lat_done.append((last - tick) * 1000)
                await asyncio.sleep(max(0.0, tick + 1.0 - time.perf_counter()))


async def drive(url: str, tokens: list[str], key: str, seconds: float, server_pid: int) -> tuple:
    started = asyncio.Event()
    ready: set = set()
    failed: list[str] = []
    lat_first: list[float] = []
    lat_done: list[float] = []
    n = len(tokens)
    tasks = []
    for i, t in enumerate(tokens):
        tasks.append(asyncio.create_task(session(url, t, key, seconds, i / n, started, ready, lat_first, lat_done,
                                                 failed)))
        await asyncio.sleep(0.3)                             # sessions open one after another, as people arrive
    t0 = time.perf_counter()
    while len(ready) < n:
        await asyncio.sleep(0.1)
    opened = time.perf_counter() - t0
    cpu0 = desk_cpu(server_pid)
    started.set()
    await asyncio.gather(*tasks)
    cpu1 = desk_cpu(server_pid)
    desks = sum(cpu1[p] - cpu0[p] for p in cpu1 if p in cpu0 and p != server_pid)   # desks alive throughout
    return lat_first, lat_done, opened, (desks, cpu1[server_pid] - cpu0[server_pid]), failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--key", default="i")
    ap.add_argument("--dir", default="/tmp/serve-bench")
    a = ap.parse_args()
    from _cli import cli
    from _serve import Served
    from engine.judging import tokens as tk
    from tui.testing import deepen_demo_pool, private_copy
    folder = Path(a.dir)
    shutil.rmtree(folder, ignore_errors=True)
    camp = private_copy(ROOT / "campaigns" / "demo", folder / "c", skip=("pools", "log.jsonl*"))
    deepen_demo_pool(camp, 60)
    cli("pool", camp, "--strategy", "depth", "--depth", "60", "--name", "day1", in_process=True)
    tokens = [tk.add_token(camp, f"a{i:02d}")[1] for i in range(a.sessions)]
    load0 = os.getloadavg()
    srv = Served(camp)
    try:
        first, done, opened, cpu, failed = asyncio.run(drive(srv.url, tokens, a.key, a.seconds, srv.p.pid))
        pids = desk_pids(srv.p.pid)
        mem = []
        for p in pids:                      # a desk that ended meanwhile (its session closed) is left out
            try:
                mem.append(memory(p))
            except OSError:
                continue
    finally:
        log = srv.stop()
    trouble = [ln for ln in log.splitlines() if any(w in ln for w in ("rror", "Traceback", "failed", "xception"))]
    load1 = os.getloadavg()
    rss = [m[0] for m in mem]
    pss = [m[1] for m in mem]
    print(f"cranfield serve: {a.sessions} sessions (websocket clients speaking textual-serve's protocol), "
          f"key {a.key!r} once a second each for {a.seconds:.0f} s; {os.cpu_count()} cores")
    print(f"load average before: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; after: "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} (a shared machine: other work counts here)")
    print(f"all {a.sessions} sessions drawn {opened:.1f} s after the last one connected")
    print(f"keypresses measured: {len(first)}; sessions broken: {len(failed)}"
          + (f" (first: {failed[0]})" if failed else ""))
    for ln in trouble[:5]:
        print(f"  server: {ln[:200]}")
    for name, xs in (("first frame", first), ("complete update", done)):
        print(f"  keypress -> {name}: p50 {pctl(xs, 0.5):.0f} ms, p95 {pctl(xs, 0.95):.0f} ms, "
              f"max {max(xs):.0f} ms")
    desk, server = cpu
    print(f"CPU while pressing ({a.seconds:.0f} s): desks {desk:.1f} s ({100 * desk / a.seconds / a.sessions:.1f}% "
          f"of a core per session, {1000 * desk / max(1, len(first)):.0f} ms per keypress, idle time included), "
          f"server {server:.1f} s ({1000 * server / max(1, len(first)):.0f} ms per keypress)")
    print(f"memory per session ({len(mem)} desk processes): RSS median {statistics.median(rss):.0f} MiB, "
          f"PSS median {statistics.median(pss):.0f} MiB; all sessions: PSS {sum(pss):.0f} MiB")
    goal = pctl(done, 0.95) < 150 and a.sessions >= 20 and not failed
    print(f"goal (20 sessions, p95 complete update < 150 ms): {'met' if goal else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
