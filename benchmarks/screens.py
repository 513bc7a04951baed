"""Key -> first frame, per screen of the TUI, on the demo and on a simulated 100-run x 50-topic campaign.

    python3 benchmarks/screens.py [--campaigns demo,100x50] [--depth 100] [--dir /tmp/tui-screens]
                                  [--screens judge,cost] [--turns 3]

For each campaign, in a fresh Python process (headless `App.run_test` at 80x24): the campaign is opened
and scored, then each screen's key is pressed from Home. `frame` is the time from the key (sent as the
terminal driver sends it) until the screen is the one showing, has handled its queued events (mount, its
data) and a frame has been laid out and rendered (what a person sees); `ready` until its background work
(planner, G-study, agreement, ...) is done too; the process's resident memory after each screen and its peak so far
are printed beside them. The target is frame <= 0.5 s (--target; issue 39); work beyond that must show
progress and be cancellable. Then `e` on the leaderboard is timed, the whole action (both tables written,
the notice drawn). With --turns N every campaign is measured N times in alternating turns
(each turn's frames and `uptime` printed) and the medians are shown. A copy of the demo is used
(campaigns/demo is never written); the simulated campaign is made once with `cranfield simulate`
(benchmarks/tui_open.py).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# (label, keys from Home, screen class shown)
SCREENS = [("leaderboard", ["l"], "LeaderboardScreen"), ("run", ["l", "enter"], "RunScreen"),
           ("matrix", ["m"], "MatrixScreen"), ("topic", ["m", "enter"], "TopicScreen"),
           ("pool", ["p"], "PoolScreen"), ("judge", ["j"], "JudgeScreen"), ("stability", ["v"], "StabilityScreen"),
           ("cost", ["c"], "CostScreen"), ("training", ["g"], "TrainingScreen"), ("agreement", ["k"], "AgreementScreen"),
           ("compare", ["l", "x"], "CompareScreen"), ("run vs field", ["l", "o"], "RunBMWScreen"),
           ("help", ["question_mark"], "HelpScreen"), ("home", ["h"], "HomeScreen")]


def send_key(app, key: str) -> None:
    """Send one key press to the app as the terminal driver would. `pilot.press` would then wait (up to 1 s,
    twice) for the whole process to idle: a screen that starts background work after its first frame
    would be charged those waits."""
    from textual import events
    from textual.keys import _character_to_key
    char = key if len(key) == 1 else {"question_mark": "?", "enter": "\r"}.get(key)
    name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
    ev = events.Key(name, char)
    ev.set_sender(app)
    app._driver.send_message(ev)


def _rss_mb() -> float:
    """This process's resident memory now, MB (Linux /proc; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def _peak_mb() -> float:
    """This process's peak resident memory so far, MB."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(campaign: Path, only: set[str] | None = None) -> dict:
    from tui.app import CranfieldApp
    from tui.testing import settle
    t0 = time.perf_counter()
    app = CranfieldApp(campaign, export_dir=Path(tempfile.mkdtemp()))
    out = {"open_s": None, "screens": {}}
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        out["open_s"] = time.perf_counter() - t0
        for label, keys, cls in SCREENS:
            if only and label not in only:
                continue
            await pilot.press("h")
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await settle(pilot)
            for k in keys[:-1]:                     # the way there is not timed
                await pilot.press(k)
                await settle(pilot)
            t, c = time.perf_counter(), time.thread_time()
            send_key(app, keys[-1])
            while type(app.screen).__name__ != cls and time.perf_counter() - t < 60:
                await asyncio.sleep(0.005)
            # the screen's queued events (mount, its data) are handled, then a frame is laid out and rendered;
            # pause() without a delay would also wait up to 1 s for the process to idle, i.e. for the
            # background work the screen started after its first frame
            await pilot.pause(0)
            frame = time.perf_counter() - t
            frame_cpu = time.thread_time() - c        # the UI thread's CPU time (the app's loop runs here)
            await settle(pilot)
            ready = time.perf_counter() - t
            rss = _rss_mb()
            out["screens"][label] = {"frame_s": frame, "ready_s": ready, "frame_cpu_s": frame_cpu,
                                     "shown": type(app.screen).__name__ == cls, "rss_mb": rss,
                                     "peak_mb": _peak_mb()}
            print(f"  {campaign.name} {label}: frame {frame:.2f} s (UI thread CPU {frame_cpu:.2f} s), ready {ready:.2f} s, "
                  f"resident {rss:.0f} MB (peak so far {_peak_mb():.0f} MB)", file=sys.stderr, flush=True)
            if len(app.screen_stack) > 1:
                await pilot.press("escape")
                await settle(pilot)
        if not only or "export" in only:
            out["export"] = await time_export(app, pilot)
        await pilot.press("q")
    return out


async def time_export(app, pilot) -> dict:
    """`e` on the leaderboard, the whole action: from the key until the table (with each measure's
    significance letters) and the significance table are written and the notice is drawn."""
    from tui.testing import settle
    await pilot.press("h")
    while len(app.screen_stack) > 1:
        app.pop_screen()
    await settle(pilot)
    await pilot.press("l")
    await settle(pilot)
    folder = app.export_folder()
    before = set(folder.glob("*")) if folder.is_dir() else set()
    t = time.perf_counter()
    send_key(app, "e")
    while "leaderboard-significance" not in (app.last_export or "") and time.perf_counter() - t < 120:
        await asyncio.sleep(0.005)
    await pilot.pause(0)
    return {"s": time.perf_counter() - t, "files": len(set(folder.glob("*")) - before)}


def fresh(campaign: Path, only: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, __file__, "--one", str(campaign)] + (["--screens", only] if only else []),
                       env=env, check=True, stdout=subprocess.PIPE, text=True)   # progress lines on stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaigns", default="demo,100x50", help="demo and/or RUNSxTOPICS, comma separated")
    ap.add_argument("--depth", type=int, default=100, help="documents per run and topic (simulated)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/tui-screens"))
    ap.add_argument("--screens", help="only these screens (comma separated labels, e.g. judge,cost)")
    ap.add_argument("--turns", type=int, default=1, help="fresh processes per campaign (median shown)")
    ap.add_argument("--target", type=float, default=0.5, help="first-frame target in seconds (issue 39: 0.5)")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        only = set(a.screens.split(",")) if a.screens else None
        print(json.dumps(asyncio.run(measure(a.one, only))))
        return 0
    from tui.testing import private_copy
    from tui_open import make_campaign
    a.dir.mkdir(parents=True, exist_ok=True)
    print(f"uptime: {load()}")
    camps = {}
    for spec in a.campaigns.split(","):
        if spec == "demo":
            dst = a.dir / "demo"
            shutil.rmtree(dst, ignore_errors=True)
            camps[spec] = private_copy(ROOT / "campaigns" / "demo", dst)
        else:
            runs, topics = (int(x) for x in spec.split("x"))
            camps[spec] = make_campaign(a.dir, runs, topics, a.depth)
    results: dict[str, list[dict]] = {spec: [] for spec in camps}
    for turn in range(a.turns):                      # campaigns in alternating turns (a shared machine is noisy)
        for spec, camp in camps.items():
            results[spec].append(fresh(camp, a.screens))
            if a.turns > 1:
                r = results[spec][-1]
                print(f"turn {turn + 1} {spec}: " + " ".join(
                    f"{k}={v['frame_s']:.2f}" for k, v in r["screens"].items())
                    + (f" export={r['export']['s']:.2f}" if "export" in r else "") + f"  ({load()})")
    slow = 0
    for spec, rs in results.items():
        med = statistics.median
        print(f"\n{spec}: opened and scored in {med(r['open_s'] for r in rs):.2f} s; key -> first frame "
              f"(target <= {a.target:g} s; the UI thread's CPU time beside it), -> background work done" + (f"; medians of {len(rs)} turns" if len(rs) > 1 else ""))
        for label in rs[0]["screens"]:
            ms = [r["screens"][label] for r in rs]
            frame = med(m["frame_s"] for m in ms)
            shown = all(m["shown"] for m in ms)
            readies = [m["ready_s"] for m in ms if m["ready_s"] is not None]
            cpu = med(m.get("frame_cpu_s", float("nan")) for m in ms)
            flag = "" if frame <= a.target and shown else f"  OVER {a.target:g} s" if shown else "  NOT SHOWN"
            slow += bool(flag)
            ready = f"{med(readies):6.2f} s" if readies else "     -  "
            print(f"  {label:13s} frame {frame:6.2f} s (UI thread CPU {cpu:5.2f} s)   ready {ready}{flag}")
        ex = [r["export"] for r in rs if "export" in r]
        if ex:
            print(f"  leaderboard export (e, whole action) {statistics.median(e['s'] for e in ex):6.2f} s, "
                  f"{ex[0]['files']} files written")
    print(f"\n{slow} screen(s) over {a.target:g} s to the first frame")
    print(f"uptime: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
