"""Model judging at the endpoint's speed (issue 39, item 4).

    python3 benchmarks/judge_throughput.py [--quick] [--sizes 10000,100000] [--slots 16] [--latency 0.025]
                                           [--what judgments,nuggets] [--timer] [--json PATH]

A loopback chat endpoint with a set capacity runs in its own process: `--slots` requests are answered at
once, each in `--latency` seconds, so its capacity is slots / latency requests a second (HTTP/1.1,
keep-alive, asyncio). It keeps that capacity by schedule: a request starts when it has arrived and a
slot is free by the schedule (the slot's previous request started + latency), and its reply leaves when
it ends, so the endpoint's own late wake-ups (Python timers under load, by milliseconds) neither lower its
capacity nor count against the client, while it never answers faster than slots / latency. `--timer`
runs the earlier endpoint instead, a semaphore of slots held for a sleep of the latency, whose own lateness
and hand-offs lower what it serves (its slot-time is split to show how much). `cranfield judgments auto`
(one pooled pair a request) and `cranfield nuggets auto` (10 nuggets of one answer a request) run against
it as separate processes with `--concurrency` = twice the slots (or `--concurrency N`) on simulated
campaigns of about each size in pairs. Twice the slots, by Little's law: an endpoint stays busy when the
requests in flight are capacity x (its latency + the client's turnaround between a reply and its next
request); with slots in flight, every turnaround (parsing, writing, waiting for the interpreter lock among
the threads) leaves a slot idle, while a second set queued at the endpoint covers any turnaround up to
the latency itself (a real server such as vLLM queues them the same way; the capacity is still slots /
latency). Printed per run: wall and CPU seconds and the peak RSS of the client process; the requests a
second it reached while calling (the endpoint's own count from its first start to its last end) as a
fraction of the capacity, and over the whole command with the seconds before its first request
(start-up and plan) and after its last; the endpoint's slot-time (answering, or idle because no request
had arrived for the slot: the client's gap); the client's CPU per request (and the endpoint's own); the
peak of `--dry-run` (the plan alone: runs, documents, pairs; judging's own memory is the difference);
then a rerun answered from the cache (the source's log removed, the cache kept): pairs a second of wall
time and per CPU second of the process (the figure to compare on a shared machine). The load average is
printed with every figure.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import load, machine, run_measured  # noqa: E402


# ---------------------------------------------------------------------------- the endpoint process

def serve(slots: int, latency: float, timer: bool = False) -> None:
    """Answer chat requests on 127.0.0.1 (the port printed on stdout) until stdin closes: `slots` at once,
    each `latency` s, in order of arrival. By schedule (the default): each request starts when it has
    arrived and a slot is free by the schedule (the previous request of that slot started + latency), and
    its reply is sent when it ends, so Python's timers waking late (under load, by milliseconds) do not
    lower the capacity: slots / latency exactly, as a server whose model does the work. `timer`: a
    semaphore of `slots` held for an asyncio.sleep(latency) each (the earlier endpoint: its own late
    wake-ups and hand-offs lower what it serves). GET /stats gives requests, first and last times and
    the slot-time accounts."""
    import heapq
    from engine.util.prompts import read_blocks
    stats = {"requests": 0, "first": None, "last": None, "busy": 0, "peak_busy": 0, "waiting": 0, "timer": timer,
             "busy_s": 0.0, "starved_s": 0.0, "handoff_s": 0.0, "at": None, "late_s": 0.0, "late_max": 0.0}
    free = [float("-inf")] * slots           # by schedule: when each slot is next free

    def account() -> None:
        """Slot-seconds since the last change: busy, free with no request waiting (the client sent none:
        starved), free while requests wait (the endpoint's own hand-off to the next)."""
        now = time.monotonic()
        if stats["at"] is not None:
            dt = now - stats["at"]
            stats["busy_s"] += dt * stats["busy"]
            stats["handoff_s" if stats["waiting"] else "starved_s"] += dt * (slots - stats["busy"])
        stats["at"] = now

    def answer(prompt: str) -> str:
        nuggets = read_blocks(prompt, "nugget")
        if nuggets:
            return json.dumps(["support" if hashlib.md5(n.encode()).digest()[0] & 1 else "not_support"
                               for n in nuggets])
        return f"##final score: {hashlib.md5(prompt.encode()).digest()[0] % 3}"

    def reply(body: bytes) -> bytes:
        prompt = json.loads(body)["messages"][0]["content"]
        return json.dumps({"choices": [{"message": {"role": "assistant", "content": answer(prompt)}}],
                           "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 8}}).encode()

    async def by_timer(body: bytes, gate: asyncio.Semaphore) -> bytes:
        account()
        stats["waiting"] += 1
        async with gate:
            account()
            stats["waiting"] -= 1
            stats["busy"] += 1
            stats["peak_busy"] = max(stats["peak_busy"], stats["busy"])
            if stats["first"] is None:
                stats["first"] = time.monotonic()
            await asyncio.sleep(latency)
            account()
            stats["busy"] -= 1
        out = reply(body)
        stats["last"] = time.monotonic()
        return out

    async def by_schedule(body: bytes) -> bytes:
        now = time.monotonic()
        start = max(now, heapq.heappop(free))
        end = start + latency
        heapq.heappush(free, end)
        if stats["first"] is None:
            stats["first"] = start
        stats["busy_s"] += latency
        out = reply(body)
        await asyncio.sleep(end - time.monotonic())
        late = max(0.0, time.monotonic() - end)
        stats["late_s"] += late
        stats["late_max"] = max(stats["late_max"], late)
        stats["last"] = max(stats["last"] or end, end)
        return out

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gate: asyncio.Semaphore):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                hdr = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(hdr.get("content-length", 0)))
                if lines[0].startswith("GET /stats"):
                    out = json.dumps({**stats, "cpu": time.process_time()}).encode()
                else:
                    out = await (by_timer(body, gate) if timer else by_schedule(body))
                    stats["requests"] += 1
                close = hdr.get("connection", "").lower() == "close"
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
                             % (len(out), b"Connection: close\r\n" if close else b"") + out)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        gate = asyncio.Semaphore(slots)
        server = await asyncio.start_server(lambda r, w: handle(r, w, gate), "127.0.0.1", 0, backlog=1024)
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        loop.add_reader(sys.stdin.fileno(), lambda: done.done() or done.set_result(None))
        await done

    asyncio.run(main())


class Endpoint:
    """The endpoint process, started with `with`."""

    def __init__(self, slots: int, latency: float, timer: bool = False):
        self.slots, self.latency, self.timer = slots, latency, timer

    def __enter__(self):
        self.p = subprocess.Popen([sys.executable, __file__, "--serve", str(self.slots), str(self.latency),
                                   "timer" if self.timer else "schedule"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env())
        self.port = int(self.p.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def stats(self) -> dict:
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("GET", "/stats", headers={"Connection": "close"})
        return json.loads(c.getresponse().read())

    def __exit__(self, *a):
        self.p.stdin.close()
        self.p.wait(10)


# ---------------------------------------------------------------------------- the client side

def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": ""}


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "cranfield.cli", *map(str, args)]


def judging_campaign(pairs: int, where: Path) -> tuple[Path, list[str]]:
    """A simulated campaign with about `pairs` pooled pairs at depth 100 (documents with text)."""
    topics = max(2, round(pairs / 250))
    d = where / f"judge-{pairs}"
    subprocess.run(cli("simulate", "--out", d, "--runs", 10, "--topics", topics, "--depth", 100, "--docs", 100,
                       "--pool-depth", 10), check=True, capture_output=True, env=_env())
    return d, ["judgments", "auto", d, "--depth", 100, "--source", "bench"]


def nugget_campaign(pairs: int, where: Path) -> tuple[Path, list[str]]:
    """A simulated RAG campaign with about `pairs` (answer, nugget) pairs (about 9 nuggets a topic)."""
    runs = 10 if pairs <= 20000 else 50
    topics = max(2, round(pairs / (9 * runs)))
    d = where / f"nuggets-{pairs}"
    subprocess.run(cli("simulate", "--rag", "--out", d, "--runs", runs, "--topics", topics), check=True,
                   capture_output=True, env=_env())
    return d, ["nuggets", "auto", d, "--source", "bench"]


def source_log(kind: str, d: Path) -> Path:
    return (d / "judgments" / "sources" / "bench.jsonl") if kind == "judgments" else (d / "nuggets" / "assign" / "bench.jsonl")


def measure(kind: str, pairs: int, slots: int, latency: float, where: Path, concurrency: int,
            timer: bool = False) -> dict:
    d, args = (judging_campaign if kind == "judgments" else nugget_campaign)(pairs, where)
    common = ["--endpoint", None, "--model", "bench", "--concurrency", concurrency, "--max-failures", 0,
              "--retries", 1, "--backoff", 0.1]
    plan_mb = None
    if kind == "judgments":                  # the plan alone (runs, documents, pairs): what judging adds is the rest
        dry = [*args, *common, "--dry-run"]
        dry[dry.index(None)] = "http://127.0.0.1:9/v1"
        plan_mb = round(run_measured(cli(*dry), env=_env()).peak_mb)
    with Endpoint(slots, latency, timer) as ep:
        common[1] = ep.url
        l0 = load()
        cpu0 = ep.stats()["cpu"]
        t_start = time.monotonic()           # the same clock as the endpoint's (CLOCK_MONOTONIC)
        m = run_measured(cli(*args, *common), env=_env())
        t_end = time.monotonic()
        st = ep.stats()
    got = sum(1 for _ in open(source_log(kind, d), "rb"))
    calling = (st["last"] - st["first"]) if st["requests"] > 1 else float("nan")
    capacity = slots / latency
    rate = (st["requests"] - 1) / calling if calling else float("nan")
    src = source_log(kind, d)
    kept = src.with_name("bench.first.jsonl")
    os.replace(src, kept)
    with Endpoint(slots, latency) as ep:
        common[1] = ep.url
        l1 = load()
        r = run_measured(cli(*args, *common), env=_env())
        asked = ep.stats()["requests"]
    again = sum(1 for _ in open(src, "rb"))
    same = (sorted(_grades(kept)) == sorted(_grades(src)))
    return {"kind": kind, "pairs": got, "requests": st["requests"], "wall": round(m.wall, 2), "cpu": round(m.cpu, 2),
            "peak_mb": round(m.peak_mb), "plan_peak_mb": plan_mb, "load": l0, "calling_s": round(calling, 2),
            "rate": round(rate, 1), "capacity": round(capacity, 1), "fraction": round(rate / capacity, 3),
            "whole_fraction": round(st["requests"] / m.wall / capacity, 3),
            "before_first_s": round(st["first"] - t_start, 2) if st["first"] else None,
            "after_last_s": round(t_end - st["last"], 2) if st["last"] else None,
            "cpu_ms_per_request": round(1000 * m.cpu / max(1, st["requests"]), 3),
            "peak_busy": st["peak_busy"], **_slot_time(st, slots, latency),
            "endpoint_cpu_ms_per_request": round(1000 * (st["cpu"] - cpu0) / max(1, st["requests"]), 3),
            "rerun": {"pairs": again, "wall": round(r.wall, 2), "cpu": round(r.cpu, 2), "peak_mb": round(r.peak_mb),
                      "pairs_per_s": round(again / r.wall), "pairs_per_cpu_s": round(again / r.cpu),
                      "asked": asked, "same_grades": same, "load": l1}}


def _slot_time(st: dict, slots: int, latency: float) -> dict:
    """The endpoint's slot-time while it was asked, as fractions: answering (its latency), late (its
    timer past the latency), idle with no request waiting (the client's gap: starved) and idle while
    requests waited (its own hand-off). By schedule every idle slot-second is the client's: no request
    had arrived for it; `late_ms` is how late replies left after their time on average (and at most)."""
    if st["requests"] < 2:
        return {}
    if not st.get("timer", True):
        total = slots * (st["last"] - st["first"])
        return {"answering": round(st["busy_s"] / total, 3), "late": 0.0,
                "starved": round(1 - st["busy_s"] / total, 3), "handoff": 0.0,
                "late_ms": round(1000 * st["late_s"] / st["requests"], 2), "late_max_ms": round(1000 * st["late_max"], 1)}
    total = st["busy_s"] + st["starved_s"] + st["handoff_s"]
    if not total:
        return {}
    answering = min(st["busy_s"], st["requests"] * latency)
    return {"answering": round(answering / total, 3), "late": round((st["busy_s"] - answering) / total, 3),
            "starved": round(st["starved_s"] / total, 3), "handoff": round(st["handoff_s"] / total, 3)}


def _grades(p: Path) -> list[tuple]:
    out = []
    for line in open(p, "rb"):
        r = json.loads(line)
        out.append((r.get("key"), r.get("run"), r.get("topic"), r.get("doc"), r.get("nugget"),
                    r.get("grade"), r.get("label")))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", nargs=3, metavar=("SLOTS", "LATENCY", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="2,000 and 10,000 pairs")
    ap.add_argument("--sizes", default=None, help="pairs per run, comma separated (default 10000,100000)")
    ap.add_argument("--slots", type=int, default=16, help="requests the endpoint answers at once (default 16)")
    ap.add_argument("--latency", type=float, default=0.025, help="seconds per request (default 0.025)")
    ap.add_argument("--concurrency", type=int, default=None,
                    help="the client's --concurrency (default: twice the slots, see the module)")
    ap.add_argument("--what", default="judgments,nuggets")
    ap.add_argument("--timer", action="store_true",
                    help="the earlier endpoint: a semaphore held for a sleep of the latency (see serve)")
    ap.add_argument("--dir", default=None, help="where the campaigns go (default a temporary directory)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.serve:
        serve(int(a.serve[0]), float(a.serve[1]), a.serve[2] == "timer")
        return 0
    sizes = [int(x) for x in (a.sizes or ("2000,10000" if a.quick else "10000,100000")).split(",")]
    print(f"# {machine()}; endpoint: {a.slots} slots x {a.latency * 1000:g} ms = {a.slots / a.latency:g} requests/s "
          f"(by {'timer' if a.timer else 'schedule'}); "
          f"client --concurrency {a.concurrency or 2 * a.slots}")
    rows = []
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        # compiled modules kept, as an installed package has them (this environment may set
        # PYTHONDONTWRITEBYTECODE, which makes every process compile Cranfield again: ~0.5 s CPU each);
        # the first command (the campaign's simulation) fills the cache, outside the source tree
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for kind in a.what.split(","):
            for n in sizes:
                r = measure(kind, n, a.slots, a.latency, Path(tmp), a.concurrency or 2 * a.slots, a.timer)
                rows.append(r)
                rr = r["rerun"]
                print(f"{kind} auto, {r['pairs']:,} pairs, {r['requests']:,} requests: {r['wall']} s wall, "
                      f"{r['cpu']} s CPU, peak {r['peak_mb']} MB" + (f" (the plan alone {r['plan_peak_mb']} MB)" if r['plan_peak_mb'] else "")
                      + f"; {r['rate']:g} requests/s while calling = "
                      f"{100 * r['fraction']:.1f}% of capacity ({100 * r['whole_fraction']:.1f}% over the whole "
                      f"command: {r['before_first_s']} s before its first request, {r['after_last_s']} s after its "
                      f"last); client CPU {r['cpu_ms_per_request']} ms/request (the endpoint's own "
                      f"{r['endpoint_cpu_ms_per_request']} ms); load {r['load']}")
                if "late_ms" in r:
                    print(f"  the endpoint's slot-time: {100 * r['answering']:.1f}% answering, {100 * r['starved']:.1f}% "
                          f"idle (no request had arrived for the slot); replies left {r['late_ms']} ms after their "
                          f"time on average (at most {r['late_max_ms']} ms)")
                elif "answering" in r:
                    print(f"  the endpoint's slot-time: {100 * r['answering']:.1f}% answering, {100 * r['late']:.1f}% "
                          f"its timer late, {100 * r['starved']:.1f}% idle with no request waiting (the client's "
                          f"gap), {100 * r['handoff']:.1f}% idle while requests waited (its hand-off)")
                print(f"  rerun from the cache: {rr['pairs']:,} pairs in {rr['wall']} s = {rr['pairs_per_s']:,} pairs/s "
                      f"({rr['cpu']} s CPU = {rr['pairs_per_cpu_s']:,} pairs per CPU second, peak {rr['peak_mb']} MB, {rr['asked']} requests, same grades: "
                      f"{rr['same_grades']}); load {rr['load']}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "slots": a.slots, "latency": a.latency}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
