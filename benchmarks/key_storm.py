"""Key storm: seeded random key sequences over every screen and modal of the TUI (each screen's own keys,
the app's, Enter/Escape/Tab/arrows, typed text in inputs), on the demo, an empty campaign, a campaign with
a malformed run and the demo while its load is running, at 80x24 and 120x40. Counts crashes (the app
ended or raised) and error notices naming a Python exception; prints the key sequence of each failure.

    python3 benchmarks/key_storm.py --seeds 50 [--keys 150] [--first-seed 0] [--kinds demo,empty,malformed,loading]

Seed s of kind k at size z is reproducible in the suite's terms: tui.testing.run_storm(campaign, s, keys, z).
Each run works on a fresh copy in a temporary folder (campaigns/demo is never written).
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.testing import run_storm, storm_campaign  # noqa: E402

SIZES = ((80, 24), (120, 40))


async def main(args) -> int:
    crashes = notices = runs = keys = 0
    t0 = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for kind in args.kinds.split(","):
            size = SIZES[seed % 2]
            with tempfile.TemporaryDirectory(prefix="cranfield-storm-") as tmp:
                camp = storm_campaign("demo" if kind == "loading" else kind, Path(tmp) / kind)
                t = time.perf_counter()
                r = await run_storm(camp, seed, args.keys, size, slow_load=kind == "loading")
            runs += 1
            keys += len(r["keys"])
            crashes += r["crash"] is not None
            notices += len(r["exception_notices"])
            print(f"seed {seed:3d} {kind:9s} {size[0]}x{size[1]} {len(r['keys']):4d} keys "
                  f"{time.perf_counter() - t:5.1f} s  " + ("CRASH" if r["crash"] else "ok")
                  + (f"  {len(r['exception_notices'])} exception notice(s)" if r["exception_notices"] else ""),
                  flush=True)
            if r["crash"] or r["exception_notices"]:
                print("  last keys:", " ".join(f"{s}:{k}" for s, k in r["keys"][-20:]))
                for n in r["exception_notices"][:5]:
                    print("  notice:", n[:300])
                if r["crash"]:
                    print("  " + r["crash"].strip().replace("\n", "\n  ")[-4000:])
    dt = time.perf_counter() - t0
    print(f"\n{runs} storms, {keys} keys in {dt:.0f} s ({keys / max(dt, 1e-9):.1f} keys/s): "
          f"{crashes} crashes, {notices} error notices naming a Python exception")
    return 1 if crashes or notices else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--keys", type=int, default=150)
    ap.add_argument("--kinds", default="demo,empty,malformed,loading")
    sys.exit(asyncio.run(main(ap.parse_args())))
