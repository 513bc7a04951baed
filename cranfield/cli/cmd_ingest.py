"""`cranfield ingest`: bring a campaign's columnar run store up to date (Parquet, one part per run)."""
from __future__ import annotations

import sys
import time


def register(sub) -> None:
    p = sub.add_parser("ingest", help="ingest run files into the campaign's columnar run store",
                       description="Parse new or changed run files once into .cranfield-store/ (Parquet, one "
                                   "part per run, rows in trec_eval order, row groups of whole topics). Every "
                                   "later command and the TUI read the store; unchanged files are not read "
                                   "again. Runs on all cores.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    p.add_argument("--rebuild", action="store_true", help="drop the store and ingest every file again")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.util import fs

    from engine.campaign.campaign import load_campaign
    from engine.errors import Warnings
    from engine.evaluation.store import RunStore, store_dir

    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    if args.rebuild:
        try:
            fs.rmtree(store_dir(camp.root))
        except OSError:
            pass
    files = camp.run_files()
    st = RunStore(camp.root)
    t0 = time.perf_counter()
    from .progress import bar_context, progress_bar
    with bar_context(progress_bar("ingest")) as bar:
        rep = st.sync(files, w, workers=args.workers,
                      progress=(lambda done, total: bar(done / max(total, 1), f"ingested {done}/{total} files"))
                      if bar else None)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    size = sum(fs.stat(p).st_size for p in fs.rglob(store_dir(camp.root), "*.parquet"))
    print(f"store {store_dir(camp.root)}: {len(st.runs)} runs, {rep.rows:,} rows, {size / 1e6:.1f} MB; "
          f"{len(rep.ingested)} file(s) ingested, {len(rep.reused)} unchanged, {len(rep.removed)} removed "
          f"in {time.perf_counter() - t0:.2f} s")
    return 0
