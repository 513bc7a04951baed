"""`cranfield fuse`: CombSUM / CombMNZ / RRF fusion of runs into one valid run file."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("fuse", help="fuse runs into one run (CombSUM, CombMNZ, RRF)",
                       description="Fuse runs (files, or a campaign's runs with --campaign) into one run file "
                                   "that `cranfield eval` reads: a baseline or a pooling source.")
    p.add_argument("files", nargs="*", help="run files to fuse (or use --campaign)")
    p.add_argument("--campaign", help="fuse this campaign's runs (all, or --run TAG ...)")
    p.add_argument("--run", action="append", dest="runs", help="with --campaign: a run tag to fuse; repeatable")
    p.add_argument("--method", choices=["combsum", "combmnz", "rrf"], default="rrf")
    p.add_argument("-k", type=float, default=60.0, help="RRF constant k (default 60)")
    p.add_argument("--depth", type=int, default=1000, help="documents per topic in the fused run (default 1000)")
    p.add_argument("--normalize", choices=["minmax", "none"], default="minmax",
                   help="CombSUM/CombMNZ score normalization per run and topic (default minmax)")
    p.add_argument("--tag", default=None, help="run tag of the fused run (default: fused-METHOD)")
    p.add_argument("-o", "--out", required=True, help="output run file")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.errors import CranfieldError, Warnings
    from engine.formats.runs import read_runs, write_run
    from engine.pooling.rank_fusion import fuse, select_runs

    w = Warnings()
    if args.campaign:
        from engine.campaign.campaign import load_campaign
        runs, where = load_campaign(args.campaign, warnings=w).runs(), args.campaign
    elif args.files:
        runs, where = read_runs(args.files, w), "the run files"
    else:
        raise CranfieldError("fuse needs run files or --campaign DIR")
    for item in w:
        print(f"warning: {item}", file=sys.stderr)
    runs = select_runs(runs, args.runs if args.campaign else None, where)
    n = runs["run"].astype(str).nunique()
    tag = args.tag or f"fused-{args.method}"
    out = fuse(runs, args.method, k=args.k, depth=args.depth, tag=tag, normalize=args.normalize)
    write_run(args.out, out, tag=tag)
    print(f"wrote {args.out}: {args.method} of {n} runs, {out['topic'].nunique()} topics, {len(out)} lines, "
          f"tag {tag}")
    return 0
