"""`cranfield table`: the experiment table of a campaign (means, improved/degraded, significance marks)."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("table", help="table for papers: means, +/- topics vs a baseline, significance marks",
                       description="Per measure each run's mean; with --baseline the topics improved/degraded "
                                   "against it and a dagger (better) / double dagger (worse) when the paired test "
                                   "is significant after the correction; without, all pairs (letter marks). "
                                   "Best mean in bold. Markdown, CSV or LaTeX.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("--baseline", default=None, help="baseline run tag (default: all pairs)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help="measure (default: the campaign's); repeatable")
    p.add_argument("--run", action="append", dest="runs", help="only these runs (in this order); repeatable")
    p.add_argument("--test", choices=["t", "wilcoxon", "randomization", "sign"], default="t")
    p.add_argument("--correction", choices=["holm", "bonferroni", "bh", "none"], default="holm")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--format", choices=["markdown", "csv", "latex"], default="markdown")
    p.add_argument("-o", "--out", default=None, help="write to this file (default: standard output)")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.formats.files import write_text
    from engine.campaign.tables import compare_scores

    camp = load_campaign(args.campaign)
    table = camp.evaluate(args.measures or camp.measures())
    res = compare_scores(table, None, args.baseline, test=args.test, correction=args.correction,
                         alpha=args.alpha, runs=args.runs)
    text = res.render(args.format)
    if args.out:
        write_text(args.out, text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0
