"""`cranfield judgments audit DIR`: each judge's false-positive rate on the canaries planted in pools, runs
whose human-vs-model gap stands out, and tau with and without them (engine.judgments.audit)."""
from __future__ import annotations

import sys

from engine.errors import Warnings


def add_parser(jsub) -> None:
    p = jsub.add_parser("audit", help="judge audits: false positives on planted canaries, flagged runs, tau",
                        description="Audit the campaign's model (and imported) judgment sources: per judge and "
                                    "canary kind (query-term stuffing, an instruction to mark the document "
                                    "relevant, an off-topic document in another language; planted with `cranfield "
                                    "pool --canaries N`), the false-positive rate with a Wilson interval; per "
                                    "judge and run, the gap between the model's and the gold source's mean over "
                                    "the gold-judged topics, flagged when it lies more than 2 SD from the other "
                                    "runs' gaps; Kendall's tau between the gold and the model ranking with and "
                                    "without the flagged runs. See docs/llm-judges.md.")
    p.add_argument("campaign", metavar="DIR")
    p.add_argument("--judgments", action="append", default=None, metavar="SOURCE",
                   help="the judge(s) to audit (repeatable; default every non-human source)")
    p.add_argument("--gold", default="human", metavar="SOURCE", help="the source people judged (default human)")
    p.add_argument("--measure", default=None, help="the measure of the run gaps (default the campaign's first)")
    p.add_argument("--alpha", type=float, default=0.05, help="error level of the Wilson intervals (default 0.05)")
    p.add_argument("--table", choices=["canaries", "gaps", "tau"], default=None,
                   help="with --format csv/json: which table to write (default canaries)")
    p.add_argument("--format", choices=["text", "csv", "json"], default="text")
    p.set_defaults(func=run_audit)


def run_audit(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.formats.text_tables import format_table
    from engine.judgments.audit import audit
    from engine.util.names import shown
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    rep = audit(camp, args.judgments, args.gold, args.measure, args.alpha, w)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    for n in rep.notes:
        print(f"note: {n}", file=sys.stderr)
    shown_cols = {"judge", "run"}
    tables = {"canaries": rep.canaries, "gaps": rep.gaps, "tau": rep.tau}
    for t in tables.values():
        for c in shown_cols & set(t.columns):
            t[c] = t[c].map(shown)
    if args.format != "text":
        sys.stdout.write(format_table(tables[args.table or "canaries"], args.format, ".6f"))
        return 0
    level = f"{100 * (1 - args.alpha):g}%"
    out = [f"# false-positive rate per judge and canary kind (grade >= {camp.binary_threshold()}), {level} "
           f"Wilson interval", format_table(rep.canaries, "text", ".4f")]
    if len(rep.gaps):
        out += ["# run gaps: model - gold mean over the gold-judged topics; flagged: more than 2 SD from the "
                "other runs' gaps", format_table(rep.gaps, "text", ".4f"),
                "# Kendall's tau, gold ranking (judged topics) vs model ranking (every topic)",
                format_table(rep.tau, "text", ".4f")]
    sys.stdout.write("\n".join(s.rstrip("\n") for s in out) + "\n")
    return 0
