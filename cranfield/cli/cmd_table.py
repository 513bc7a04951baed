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
    p.add_argument("--ci", choices=["ppi", "ppi-classic"], default=None,
                   help="instead, every pair's prediction-powered interval and p-value beside the human-only "
                        "result (a model source on every topic, people on a sample; --correction over all pairs "
                        "of a measure; with --baseline the baseline's pairs)")
    p.add_argument("--judgments", default=None, metavar="SOURCE", help="with --ci: the model source")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.formats.files import write_text
    from engine.campaign.tables import compare_scores

    camp = load_campaign(args.campaign)
    if args.ci:
        return _run_ppi(args, camp)
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


def _run_ppi(args, camp) -> int:
    """`table --ci ppi`: the PPI significance table (engine.campaign.ppisig) in the chosen format."""
    from engine.campaign.ppisig import ppi_significance
    from engine.formats.files import write_text
    from engine.formats.text_tables import format_table
    from engine.util.names import shown
    sig = ppi_significance(camp, args.measures or camp.measures() or None, model=args.judgments, alpha=args.alpha,
                           correction=args.correction, method=args.ci)
    p = sig.pairs
    if args.runs:
        p = p[p["run_a"].isin(args.runs) & p["run_b"].isin(args.runs)]
    if args.baseline:
        p = p[(p["run_a"] == args.baseline) | (p["run_b"] == args.baseline)]
    fmt = args.format
    note = "; ".join([sig.heading(), *([sig.caution()] if sig.caution() else []), *sig.notes])
    head = "" if fmt == "csv" else ("% " if fmt == "latex" else "") + note + "\n\n"
    text = head + format_table(p.reset_index(drop=True), fmt, ".4g")
    if args.out:
        write_text(args.out, text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(shown(text, "\n\t"))
    return 0
