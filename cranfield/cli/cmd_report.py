"""`cranfield report`: per-run participant pages (Markdown + self-contained HTML) and an index."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("report", help="write participant reports (per-run Markdown and HTML pages, index)",
                       description="For each run: summary measures and leaderboard position, per-topic scores "
                                   "against the best, median and worst of all (or the pooled) runs, and the "
                                   "interpolated recall-precision curve. HTML pages embed their plots as SVG.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("--run", action="append", dest="runs", help="only this run tag; repeatable")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help="measure to report (default: the campaign's); repeatable")
    p.add_argument("--against", choices=["all", "pooled"], default="all",
                   help="best/median/worst over all runs (default) or the pooled runs")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.campaign.participant import write_reports

    camp = load_campaign(args.campaign)
    paths = write_reports(camp, args.out, args.runs, args.measures, args.against)
    n = sum(1 for p in paths if p.suffix == ".html" and p.name != "index.html")
    print(f"wrote {n} run pages (HTML and Markdown) and index.html / index.md to {args.out}")
    return 0
