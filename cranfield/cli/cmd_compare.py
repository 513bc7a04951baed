"""`cranfield compare`: two runs of a campaign side by side."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("compare", help="compare two runs: wins/losses, paired test, ranked lists side by side",
                       description="Per-topic differences of run A against run B, wins/losses/ties, a paired "
                                   "test with effect size, the topics where they differ most, their ranked lists "
                                   "side by side (grades; ? = unjudged) and Kendall tau / tau_ap of the lists.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("a", help="run tag A")
    p.add_argument("b", help="run tag B")
    p.add_argument("-m", "--measure", default=None, help="measure (default: the campaign's first)")
    p.add_argument("--test", choices=["t", "wilcoxon", "sign", "randomization"], default="t")
    p.add_argument("--threshold", type=float, default=0.0, help="|difference| at or below this is a tie")
    p.add_argument("--top", type=int, default=5, help="topics with the largest differences to list")
    p.add_argument("--topic", default=None, help="topic for the side-by-side lists (default: most different)")
    p.add_argument("--depth", type=int, default=10, help="documents in the side-by-side lists (default 10)")
    p.add_argument("--corr-depth", type=int, default=100,
                   help="documents per list for Kendall tau / tau_ap (default 100)")
    p.add_argument("--per-topic", action="store_true", help="print every topic's scores and difference")
    p.add_argument("--alpha", type=float, default=0.05, help="with --ci: the level (default 0.05)")
    from .cmd_stability import _add_ppi
    _add_ppi(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.errors import CranfieldError
    from engine.formats.text_tables import format_table
    from engine.campaign.runcompare import compare_two, side_by_side

    camp = load_campaign(args.campaign)
    measure = args.measure or (camp.measures() or ["map"])[0]
    table = camp.evaluate([measure])
    names = list(dict.fromkeys(table["measure"].astype(str)))
    if measure not in names:
        measure = names[0] if len(names) == 1 else measure
    runs = camp.runs()
    res = compare_two(table, args.a, args.b, measure, test=args.test, threshold=args.threshold, runs=runs,
                      depth=args.corr_depth)
    ppi = None
    if args.ci:                        # before any output: a campaign without the PPI condition is refused whole
        from engine.util.names import shown

        from .cmd_stability import ppi_significance_from_args
        sig = ppi_significance_from_args(args, camp, [measure])
        ppi = shown("\n".join(sig.pair_lines(str(sig.pairs["measure"].iat[0]), args.a, args.b)), "\n")
    print("\n".join(res.summary_lines()))
    if ppi:
        print(ppi)
    print(f"\ntopics where they differ most ({args.a} - {args.b}):")
    top = res.most_different(args.top).rename(columns={"a": args.a, "b": args.b})
    print(format_table(top, "text"), end="")
    if args.per_topic:
        print("\nper topic:")
        print(format_table(res.topics.rename(columns={"a": args.a, "b": args.b}), "text"), end="")
    topic = args.topic or (str(top["topic"].iloc[0]) if len(top) else None)
    if topic is not None:
        if topic not in set(res.topics["topic"]):
            raise CranfieldError(f"--topic {topic}: not a topic both runs were evaluated on")
        c = res.correlation
        row = c[c["topic"] == topic].iloc[0]
        print(f"\ntopic {topic}: ranked lists (grade; ? = unjudged); Kendall tau {row['tau']:.3f}, "
              f"tau_ap {row['tau_ap']:.3f} over {int(row['common'])} common documents")
        print(format_table(side_by_side(runs, camp.qrels(), args.a, args.b, topic, args.depth), "text"), end="")
    return 0
