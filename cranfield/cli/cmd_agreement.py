"""`cranfield agreement`: how far two judgment sources agree, on labels and on the system ranking."""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError, Warnings


def register(sub) -> None:
    p = sub.add_parser("agreement", help="agreement between two judgment sources (kappa, alpha, tau)",
                       description="Compare two judgment sources on the documents both judged: Cohen's kappa "
                                   "(unweighted, linear, quadratic), Krippendorff's alpha (nominal, ordinal), "
                                   "confusion matrices, graded and binarized, overall and per topic; with a "
                                   "campaign also the leaderboards under each source (Kendall tau, tau_ap, "
                                   "largest rank change, top-k overlap). Give CAMPAIGN [--sources A B] or two "
                                   "judgment files QRELS_A QRELS_B.")
    p.add_argument("inputs", nargs="+", help="CAMPAIGN, or QRELS_A QRELS_B")
    p.add_argument("--sources", nargs=2, metavar=("A", "B"), default=None,
                   help="the two sources (default: the official source and the first other one)")
    p.add_argument("-m", "--measure", default=None, help="measure for the system comparison (default: the "
                                                          "campaign's first measure)")
    p.add_argument("-k", type=int, default=10, help="top-k overlap depth (default 10)")
    p.add_argument("-l", "--rel-level", type=int, default=None, help="binarization threshold (default: the "
                                                                      "campaign's binary_threshold, else 1)")
    p.add_argument("--topics", type=int, default=10, help="how many per-topic rows to print")
    p.add_argument("--runs", nargs="*", default=None, help="with two files: run files for the system comparison")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.judgments.agreement import label_agreement, leaderboard_agreement, mean_scores, report_lines

    w = Warnings()
    sa = None
    first = Path(args.inputs[0])
    if first.is_dir():
        from engine.campaign.campaign import load_campaign
        from engine.judgments.sources import resolve_name, source_config, source_judgments, source_names
        if len(args.inputs) != 1:
            raise CranfieldError("agreement takes one campaign directory or two judgment files")
        camp = load_campaign(first, warnings=w)
        if args.sources:
            a_name, b_name = (resolve_name(camp, s) for s in args.sources)
        else:
            a_name = source_config(camp)["official"]
            others = [n for n in source_names(camp) if n != a_name]
            if not others:
                raise CranfieldError(f"{first}: only one judgment source ({a_name}); import another with "
                                     f"`cranfield judgments import` or run `cranfield judgments auto`")
            b_name = others[0]
        a, b = source_judgments(camp, a_name, w), source_judgments(camp, b_name, w)
        thr = camp.binary_threshold() if args.rel_level is None else args.rel_level
        la = label_agreement(a, b, (a_name, b_name), sorted(camp.scale()), thr)
        measure = args.measure or camp.measures()[0]
        runs = camp.runs()
        opt = camp.eval_options()
        if runs["run"].nunique() >= 2:
            sa = leaderboard_agreement(mean_scores(a, runs, measure, opt, camp.gains()),
                                       mean_scores(b, runs, measure, opt, camp.gains()), (a_name, b_name),
                                       measure, args.k)
    else:
        from engine.formats.runs import read_runs
        from engine.judging.workflow import read_judgment_file
        if len(args.inputs) != 2:
            raise CranfieldError("agreement takes one campaign directory or two judgment files QRELS_A QRELS_B")
        a, b = (read_judgment_file(f, w) for f in args.inputs)
        names = tuple(Path(f).name for f in args.inputs)
        thr = 1 if args.rel_level is None else args.rel_level
        la = label_agreement(a, b, names, None, thr)
        if args.runs:
            from engine.ranking.ranked import EvalOptions
            runs = read_runs(args.runs, w)
            measure = args.measure or "map"
            opt = EvalOptions(rel_level=thr)
            sa = leaderboard_agreement(mean_scores(a, runs, measure, opt), mean_scores(b, runs, measure, opt),
                                       names, measure, args.k)
    for item in w:
        print(f"warning: {item}", file=sys.stderr)
    if args.format == "json":
        import json
        g = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in la.graded.items()}
        bn = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in la.binary.items()}
        out = {"sources": la.names, "labels": la.labels, "threshold": la.threshold, "graded": g, "binary": bn,
               "per_topic": la.per_topic.to_dict("records")}
        if sa is not None:
            out["systems"] = {"measure": sa.measure, "tau": sa.tau, "tau_ap": sa.tau_ap, "k": sa.k,
                              "top_k_overlap": sa.overlap, "largest_change": sa.largest_change,
                              "table": sa.table.to_dict("records")}
        sys.stdout.write(json.dumps(out, indent=1, default=str) + "\n")
        return 0
    sys.stdout.write("\n".join(report_lines(la, sa, args.topics)) + "\n")
    return 0
