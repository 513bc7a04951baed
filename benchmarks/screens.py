"""Key -> first frame, per screen of the TUI, on the demo and on a simulated 100-run x 50-topic campaign.

    python3 benchmarks/screens.py [--campaigns demo,100x50] [--depth 100] [--dir /tmp/tui-screens]

For each campaign, in a fresh Python process (headless `App.run_test` at 80x24): the campaign is opened
and scored, then each screen's key is pressed from Home. `frame` is the time from the key until the screen
is the one showing and has drawn its first frame (what a person sees); `ready` until its background
work (G-study, agreement, ...) is done too (`-` when it has none). The target is frame <= 1 s; work
beyond that must show progress and be cancellable. A copy of the demo is used (campaigns/demo is never
written); the simulated campaign is made once with `cranfield simulate` (benchmarks/tui_open.py).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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


async def measure(campaign: Path) -> dict:
    from tui.app import CranfieldApp
    from tui.testing import settle
    t0 = time.perf_counter()
    app = CranfieldApp(campaign, export_dir=Path(tempfile.mkdtemp()))
    out = {"open_s": None, "screens": {}}
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        out["open_s"] = time.perf_counter() - t0
        for label, keys, cls in SCREENS:
            await pilot.press("h")
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await settle(pilot)
            for k in keys[:-1]:                     # the way there is not timed
                await pilot.press(k)
                await settle(pilot)
            t = time.perf_counter()
            await pilot.press(keys[-1])
            while type(app.screen).__name__ != cls and time.perf_counter() - t < 60:
                await asyncio.sleep(0.005)
            await pilot.pause()                      # the screen has drawn a frame
            frame = time.perf_counter() - t
            busy = app.busy or any(w.is_running for w in app.workers)
            await settle(pilot)
            ready = time.perf_counter() - t
            out["screens"][label] = {"frame_s": frame, "ready_s": ready if busy else None,
                                     "shown": type(app.screen).__name__ == cls}
            if len(app.screen_stack) > 1:
                await pilot.press("escape")
                await settle(pilot)
        await pilot.press("q")
    return out


def fresh(campaign: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, __file__, "--one", str(campaign)], env=env, check=True,
                       capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaigns", default="demo,100x50", help="demo and/or RUNSxTOPICS, comma separated")
    ap.add_argument("--depth", type=int, default=100, help="documents per run and topic (simulated)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/tui-screens"))
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(asyncio.run(measure(a.one))))
        return 0
    from tui.testing import private_copy
    from tui_open import make_campaign
    a.dir.mkdir(parents=True, exist_ok=True)
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    slow = 0
    for spec in a.campaigns.split(","):
        if spec == "demo":
            dst = a.dir / "demo"
            shutil.rmtree(dst, ignore_errors=True)
            camp = private_copy(ROOT / "campaigns" / "demo", dst)
        else:
            runs, topics = (int(x) for x in spec.split("x"))
            camp = make_campaign(a.dir, runs, topics, a.depth)
        r = fresh(camp)
        print(f"\n{spec}: opened and scored in {r['open_s']:.2f} s; key -> first frame (target <= 1 s), "
              f"-> background work done")
        for label, m in r["screens"].items():
            flag = "" if m["frame_s"] <= 1.0 and m["shown"] else "  OVER 1 s" if m["shown"] else "  NOT SHOWN"
            slow += bool(flag)
            ready = f"{m['ready_s']:6.2f} s" if m["ready_s"] is not None else "     -  "
            print(f"  {label:13s} frame {m['frame_s']:6.2f} s   ready {ready}{flag}")
    print(f"\n{slow} screen(s) over 1 s to the first frame")
    print(f"uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
