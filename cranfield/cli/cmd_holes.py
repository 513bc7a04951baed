"""`cranfield holes`: hole filling as an explicit choice — each run's score and rank with the official
judgments alone and with another source judging the documents they left unjudged."""
from __future__ import annotations

import sys

from engine.errors import Warnings


def register(sub) -> None:
    p = sub.add_parser("holes", help="score and rank change of every run when another source fills the holes",
                       description="Evaluate every run with the official judgments (or --base), then with "
                                   "--fill SOURCE judging the documents the base left unjudged, and report "
                                   "per measure each run's score, rank and their change. The filled scores "
                                   "are those of `cranfield eval --campaign DIR --judgments BASE+FILL`.")
    p.add_argument("campaign")
    p.add_argument("--fill", required=True, help="the source that fills unjudged documents (e.g. an LLM source)")
    p.add_argument("--base", default="official", help="the source whose holes are filled (default official)")
    p.add_argument("-m", "--measure", action="append", dest="measures", help="measure (repeatable; default: "
                                                                               "the campaign's measures)")
    p.add_argument("--format", choices=["text", "csv", "tsv", "json", "markdown"], default="text")
    p.set_defaults(func=run)
    # filled@10: share of the run's top 10 documents whose judgment came from the fill source


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.formats.text_tables import format_table
    from engine.judgments.sources import hole_filling

    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    t = hole_filling(camp, args.fill, args.measures, args.base, w)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    out = sys.stdout
    if args.format != "text":
        out.write(format_table(t, args.format, ".4f"))
        return 0
    out.write(f"Hole filling: {t.attrs['base']} judgments, unjudged documents judged by {t.attrs['fill']} "
              f"({t.attrs['filled']} filled)\n")
    for m, g in t.groupby("measure", sort=False):
        out.write(f"\n{m}\n{'run':<22}{t.attrs['base'][:12]:>12}{'rank':>6}{'filled':>12}{'rank':>6}{'delta':>10}"
                  f"{'change':>8}{'filled@10':>11}\n")
        for r in g.rename(columns={"filled@10": "filled10"}).itertuples():
            out.write(f"{str(r.run)[:22]:<22}{r.score:>12.4f}{r.rank:>6}{r.filled_score:>12.4f}{r.filled_rank:>6}"
                      f"{r.delta:>+10.4f}{r.rank_change:>+8d}{r.filled10:>11.2f}\n")
    return 0
