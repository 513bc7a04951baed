"""`cranfield autojudge`: TREC AutoJudge interchange (export, import) and its meta-evaluation values
(meta-evaluate, qrel-evaluate) with a reason wherever a value is undefined."""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError, Warnings

METHODS_HELP = "kendall, pearson, spearman, tauap_b, tau_gap or METHOD@K (e.g. kendall@10); repeatable (default: all)"


def register(sub) -> None:
    p = sub.add_parser("autojudge", help="TREC AutoJudge formats and meta-evaluation (tau, tau_AP_b, kappa, alpha)",
                       description="Write a campaign's judgment sources as AutoJudge qrels and leaderboards, read "
                                   "AutoJudge qrels and nugget banks into a campaign, and compute the values of "
                                   "auto-judge-evaluate's meta-evaluate and qrel-evaluate, saying why a value is "
                                   "undefined where that tool prints 0.0 (docs/llm-judges.md, AutoJudge).")
    a = p.add_subparsers(dest="autojudge_command", metavar="ACTION")

    e = a.add_parser("export", help="each judgment source as SOURCE.qrels and SOURCE.eval.jsonl (and the nuggets "
                                    "as nuggets.jsonl, nuggetizer's bank, and nuggets.argue.jsonl, AutoARGUE's)")
    e.add_argument("campaign")
    e.add_argument("--out", required=True, help="output directory")
    e.add_argument("--source", action="append", dest="sources", help="source to export (repeatable; default all)")
    e.add_argument("-m", "--measure", action="append", dest="measures", help="leaderboard measure (repeatable; "
                                                                            "default: the campaign's)")
    e.add_argument("--leaderboard-format", choices=["jsonl", "tot", "ir_measures"], default="jsonl")
    e.set_defaults(func=run_export)

    i = a.add_parser("import", help="an AutoJudge qrels file as a judgment source, or a nugget bank (nuggetizer "
                                    "or AutoARGUE)")
    i.add_argument("campaign")
    i.add_argument("file")
    i.add_argument("--what", choices=["qrels", "nuggets"], default="qrels")
    i.add_argument("--name", default=None, help="source name for qrels (default: the file's stem)")
    i.add_argument("--model", default="", help="the judge's model, when known")
    i.set_defaults(func=run_import)

    m = a.add_parser("meta-evaluate", help="correlate judge leaderboards with a truth leaderboard")
    m.add_argument("inputs", nargs="+", help="judge leaderboard files")
    m.add_argument("--truth-leaderboard", required=True)
    m.add_argument("--truth-format", choices=["jsonl", "tot", "ir_measures"], default=None,
                   help="default: jsonl when the file holds JSON lines (4-column files need the format)")
    m.add_argument("--eval-format", choices=["jsonl", "tot", "ir_measures"], default=None)
    m.add_argument("--truth-measure", action="append", default=None)
    m.add_argument("--eval-measure", action="append", default=None)
    m.add_argument("--correlation", action="append", default=None, help=METHODS_HELP)
    m.add_argument("--on-missing", choices=["error", "skip", "default"], default="error",
                   help="a truth run the judge did not score: error, leave out, or score 0.0 (default error)")
    m.add_argument("--format", choices=["text", "csv", "json"], default="text")
    m.set_defaults(func=run_meta)

    q = a.add_parser("qrel-evaluate", help="per-topic agreement of predicted qrels with truth qrels")
    q.add_argument("--truth-qrels", required=True)
    q.add_argument("--predict-qrels", required=True)
    q.add_argument("--truth-max-grade", type=int, default=1)
    q.add_argument("--predict-max-grade", type=int, default=1)
    q.add_argument("--truth-relevance-threshold", type=int, default=1)
    q.add_argument("--predict-relevance-threshold", type=int, default=1)
    q.add_argument("--default-grade", type=int, default=0)
    q.add_argument("--on-missing", choices=["default", "skip"], default="default")
    q.add_argument("--format", choices=["text", "csv", "json"], default="text")
    q.set_defaults(func=run_qrel)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _table(df, fmt: str) -> None:
    from engine.formats.text_tables import format_table
    from engine.util.names import shown
    if fmt == "json":
        import json
        rows = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()} for r in df.to_dict("records")]
        sys.stdout.write(json.dumps(rows, indent=1, default=str) + "\n")
        return
    if fmt == "csv":
        sys.stdout.write(format_table(df, "csv", float_format="%.17g"))
        return
    body = df.drop(columns=["reasons"])
    sys.stdout.write(shown(format_table(body, "text"), "\n"))
    notes = [(r[0], r[-1]) for r in df.itertuples(index=False) if r[-1]]
    if notes:
        sys.stdout.write("\nwhy values are missing (nan):\n")
        for who, why in notes:
            sys.stdout.write(shown(f"  {who}: {why}", "") + "\n")


def run_meta(args) -> int:
    from engine.formats.autojudge import read_leaderboard
    from engine.judgments.autojudge import meta_evaluate
    truth = read_leaderboard(args.truth_leaderboard, args.truth_format)
    judges = {}
    for f in args.inputs:
        name = Path(f).name.replace(".txt", "")
        if name in judges:
            raise CranfieldError(f"two judge leaderboards named {name}; rename one")
        judges[name] = read_leaderboard(f, args.eval_format)
    df = meta_evaluate(truth, judges, args.truth_measure, args.eval_measure, args.correlation, args.on_missing)
    _table(df, args.format)
    return 0


def run_qrel(args) -> int:
    from engine.formats.qrels import read_qrels
    from engine.judgments.autojudge import qrel_evaluate
    w = Warnings()
    for flag in ("truth_max_grade", "predict_max_grade"):
        if getattr(args, flag) < 1:
            raise CranfieldError(f"--{flag.replace('_', '-')} must be 1 or more")
    t, p = read_qrels(args.truth_qrels, w), read_qrels(args.predict_qrels, w)
    for item in w:
        print(f"warning: {item}", file=sys.stderr)
    df = qrel_evaluate(t, p, args.truth_max_grade, args.predict_max_grade, args.truth_relevance_threshold,
                       args.predict_relevance_threshold, args.default_grade, args.on_missing)
    if not len(df):
        raise CranfieldError("the two qrels files share no topic")
    _table(df, args.format)
    return 0


def run_export(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.judgments.autojudge import export_campaign
    from engine.util.confine import confine_output
    camp = load_campaign(args.campaign)
    confine_output(camp.root, args.out)
    paths = export_campaign(camp, args.out, args.sources, args.measures, args.leaderboard_format)
    from engine.nuggets.exchange import export_text
    from engine.nuggets.store import nuggets_path
    if nuggets_path(camp.root).is_file():
        from engine.util.atomic import atomic_write
        for fmt, name in (("nuggetizer-nuggets", "nuggets.jsonl"), ("autoargue-nuggets", "nuggets.argue.jsonl")):
            text = export_text(camp.root, fmt)
            if text:
                p = Path(args.out) / name
                atomic_write(p, text.encode("utf-8"))
                paths.append(p)
    print(f"wrote {len(paths)} file(s) to {args.out}: " + ", ".join(p.name for p in paths))
    return 0


def run_import(args) -> int:
    from engine.campaign.campaign import load_campaign
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    if args.what == "qrels":
        from engine.judgments.sources import import_source
        names = import_source(camp.root, args.file, args.name, "qrels", "auto", args.model, "", w)
        msg = f"imported source {', '.join(names)}"
    else:
        from engine.nuggets.exchange import import_file
        from engine.nuggets.interchange import read_interchange
        fmt = read_interchange(args.file)[0]
        if fmt not in ("nuggetizer-nuggets", "autoargue-nuggets"):
            raise CranfieldError(f"{args.file}: reads as {fmt}, not a nugget bank (nuggetizer or AutoARGUE)")
        res = import_file(camp.root, args.file, fmt, by="autojudge")
        msg = res.summary()
        for n in res.notes:
            print(f"note: {n}", file=sys.stderr)
    for item in w:
        print(f"warning: {item}", file=sys.stderr)
    print(msg)
    return 0
