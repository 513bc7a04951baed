"""Cold time for the TUI to open a campaign to a scored leaderboard, for 50, 100 and 200 runs.

    python3 benchmarks/tui_open.py [--runs 50,100,200] [--topics 50] [--depth 1000] [--dir /tmp/tui-open]

Each campaign is made once with `cranfield simulate` (runs x topics x depth documents, campaign.yaml
naming every run file) into --dir and reused by later calls. Every measurement starts from a cold
campaign: its run store and caches (`.cranfield-cache`) are deleted, and the app runs in a fresh
Python process (headless, `App.run_test` at 120x40): `l` is pressed at the first frame, and the time is
from creating the app until the leaderboard shows one scored row per run (CPU time of every thread beside
it, and of the evaluation's worker processes; a worker's peak memory; when every worker was done). With
--again each campaign is then opened once more as it is (run store and evaluation cache kept). The targets are
<= 30 s for 200 runs and <= 10 s for 1,000 runs (`--runs 1000`) on a 2-core machine; `uptime` is
printed beside the figures (shared machines are noisy).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_campaign(folder: Path, runs: int, topics: int, depth: int) -> Path:
    """A simulated campaign `folder`/sim-RxTxD (made once with `cranfield simulate`)."""
    out = folder / f"sim-{runs}x{topics}x{depth}"
    if not (out / "campaign.yaml").is_file():
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "-m", "cranfield.cli", "simulate", "--out", str(out), "--runs", str(runs),
                        "--topics", str(topics), "--depth", str(depth), "--force"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    return out


def cold(campaign: Path, keep_store: bool = False) -> None:
    """Remove every cache the engine keeps inside the campaign (run store unless `keep_store`, evaluation cache)."""
    for p in campaign.iterdir():
        if p.is_dir() and p.name.startswith(".cranfield") and not (keep_store and p.name == ".cranfield-store"):
            shutil.rmtree(p)


async def open_to_leaderboard(campaign: Path) -> dict:
    """Seconds from creating the app to a leaderboard with one scored row per run (in this process): `l` is
    pressed at the first frame, as a user would, and the board is watched until every run has its scored
    row (`total_s`); then until every worker is done (`settled_s`: e.g. the PPI intervals' check)."""
    import resource
    t0, c0 = time.perf_counter(), time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    from tui.app import CranfieldApp
    from tui.testing import settle
    app = CranfieldApp(campaign, export_dir=campaign / ".bench-exports")
    async with app.run_test(size=(120, 40)) as pilot:
        t_frame = time.perf_counter() - t0          # the app is ready: its first screen composed and shown
        await pilot.press("l")
        rows, scored, t_loaded = 0, False, None
        while True:
            if t_loaded is None and app.model is not None and app.model.scores is not None:
                t_loaded = time.perf_counter() - t0
            try:
                t = app.screen.query_one("#lb")
            except Exception:               # the leaderboard's table is not up yet
                t = None
            if t is not None and t_loaded is not None:
                rows = t.row_count
                scored = rows == len(app.model.scores.runs) and rows > 0
                if scored:
                    break
            if time.perf_counter() - t0 > 600:
                break
            await pilot.pause(0.02)
        total = time.perf_counter() - t0
        cpu = time.process_time() - c0              # every thread of this process
        k1 = resource.getrusage(resource.RUSAGE_CHILDREN)   # the evaluation's worker processes (ended by now)
        await settle(pilot)
        settled = time.perf_counter() - t0
        await pilot.press("q")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    return {"rows": rows, "scored": scored, "first_frame_s": t_frame, "loaded_s": t_loaded or float("nan"),
            "total_s": total, "settled_s": settled, "cpu_s": cpu, "workers_cpu_s": workers, "peak_mb": peak,
            "workers_peak_mb": k1.ru_maxrss / 1024}


def load() -> str:
    """The load averages (a shared machine's wall times need them beside)."""
    return "load " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def one(campaign: Path, keep_store: bool = False, warm: bool = False) -> dict:
    """Measure in a fresh interpreter (cold imports; a cold campaign unless `warm`)."""
    if not warm:
        cold(campaign, keep_store)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, __file__, "--one", str(campaign)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="50,100,200", help="comma-separated run counts")
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/tui-open"), help="where the campaigns are made")
    ap.add_argument("--keep-store", action="store_true",
                    help="keep the ingested run store (time to score, without ingest)")
    ap.add_argument("--again", action="store_true",
                    help="then open each campaign once more as it is (the run store and the evaluation cache "
                         "kept: a second open)")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(asyncio.run(open_to_leaderboard(a.one))))
        return 0
    a.dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in a.runs.split(",") if x]
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    results = []
    for n in sizes:
        camp = make_campaign(a.dir, n, a.topics, a.depth)
        r = one(camp, a.keep_store)
        results.append((n, r))
        ok = r["scored"] and r["rows"] == n
        print(f"{n:4d} runs x {a.topics} topics x {a.depth} docs: scored leaderboard in {r['total_s']:6.1f} s "
              f"(cpu {r['cpu_s']:.1f} s + workers {r.get('workers_cpu_s', 0):.1f} s; first frame "
              f"{r.get('first_frame_s', float('nan')):.2f} s, scored {r['loaded_s']:.1f} s, every worker done "
              f"{r.get('settled_s', float('nan')):.1f} s; {r['rows']} rows{'' if ok else ', NOT all scored'}; "
              f"peak {r.get('peak_mb', float('nan')):.0f} MB, a worker's {r.get('workers_peak_mb', 0):.0f} MB)"
              f"  [{load()}]", flush=True)
        if a.again:
            w = one(camp, warm=True)
            print(f"{'':4s}  opened again (store and evaluation cache kept): {w['total_s']:6.1f} s (cpu {w['cpu_s']:.1f} s; "
                  f"{w['rows']} rows; peak {w.get('peak_mb', float('nan')):.0f} MB)  [{load()}]", flush=True)
    if len(results) > 1:
        base_n, base = results[0]
        for n, r in results[1:]:
            print(f"  {n} / {base_n} runs: time x{r['total_s'] / base['total_s']:.2f} for runs x{n / base_n:.2f}")
    for size, limit in ((200, 30), (1000, 10)):
        big = [r for n, r in results if n == size]
        if big:
            print(f"target {size} runs <= {limit} s: {'met' if big[0]['total_s'] <= limit else 'NOT met'}")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
