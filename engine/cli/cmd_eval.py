"""`cranfield eval`: trec_eval-compatible evaluation of runs against judgments."""
from __future__ import annotations

import sys

from ..errors import CranfieldError, Warnings


def register(sub) -> None:
    p = sub.add_parser("eval", help="evaluate runs (trec_eval compatible output)",
                       description="Evaluate runs against judgments. Output is trec_eval's, line for line, "
                                   "unless --format is csv/tsv/json/markdown.")
    p.add_argument("files", nargs="*", help="QRELS RUN [RUN ...] (trec_eval order), plain or .gz")
    p.add_argument("--campaign", help="evaluate a campaign directory's runs against its judgments")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help="measure, measure.params or nickname (official, all_trec, set); repeatable")
    p.add_argument("-q", action="store_true", dest="per_query", help="also print per-topic values")
    p.add_argument("-c", action="store_true", dest="complete",
                   help="average over all judged topics; a topic a run misses scores 0")
    p.add_argument("-M", type=int, dest="max_depth", help="use only the first N documents per topic")
    p.add_argument("-l", type=int, dest="rel_level", default=None,
                   help="minimum grade counted relevant (default 1, or the campaign's binary_threshold)")
    p.add_argument("-J", action="store_true", dest="judged_only", help="evaluate over judged documents only")
    p.add_argument("-N", type=int, dest="num_docs_in_coll",
                   help="number of documents in the collection (utility's d coefficient; default 0)")
    p.add_argument("-n", action="store_true", dest="no_summary", help="no summary lines (with -q)")
    p.add_argument("--format", choices=["trec", "csv", "tsv", "json", "markdown", "latex", "text"], default="trec",
                   help="trec (trec_eval text, default) or a table: csv, tsv, json, markdown, latex, text")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="with --campaign: run the topic blocks on a Dask cluster (scheduler address, or 'local'); "
                        "workers must see the campaign directory at the same path")
    p.add_argument("--compat", choices=["10", "9"], default="10",
                   help="trec_eval version semantics for cut-off rounding (default 10.0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..evaluate import evaluate_files, summarize, trec_eval_lines_long
    from ..ranking import EvalOptions
    from ..report import format_table

    w = Warnings()
    flags = dict(rel_level=args.rel_level, max_depth=args.max_depth, judged_only=args.judged_only,
                 complete=args.complete, num_docs_in_coll=args.num_docs_in_coll,
                 trec_eval_version="9" if args.compat == "9" else "10.0")
    if args.campaign:
        # a campaign: the engine decides in memory or streamed, and applies gains, renames and options
        from ..campaign import load_campaign
        from ..evaluation import evaluate_campaign
        camp = load_campaign(args.campaign, warnings=w)
        measures = args.measures or camp.measures() or None
        if args.format == "trec" and not _names_runid(measures):
            measures = ["runid", *(measures or ["official"])]   # a campaign's runs are told apart by their ids
        strings = args.format == "trec"
        if args.dask:
            from ..distributed import dask_executor
            with dask_executor(None if args.dask == "local" else args.dask) as ex:
                ev = evaluate_campaign(camp, measures, options=flags, strings=strings, executor=ex)
        else:
            ev = evaluate_campaign(camp, measures, options=flags, strings=strings)
        df, text, notes, run_names = ev.table, ev.strings, ev.notes, None
        n_groups = len(df) + (len(text) if text is not None else 0)
    else:
        if len(args.files) < 2:
            raise CranfieldError("eval needs a judgments file and at least one run file "
                                 "(cranfield eval JUDGMENTS RUN [RUN ...]) or --campaign DIR")
        # run files are independent: read and evaluated in one batch per core (threads)
        measures = args.measures or None
        df = evaluate_files(args.files[0], args.files[1:], measures, warnings=w, strings=True,
                            options=EvalOptions(**{k: v for k, v in flags.items() if v is not None}))
        text, notes, n_groups, run_names = (df.attrs.pop(k) for k in ("strings", "notes", "groups", "runs"))
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    if notes.get("topics_without_judgments"):
        t = notes["topics_without_judgments"]
        print(f"note: {len(t)} topic(s) in the runs have no judgments and are not evaluated: "
              f"{', '.join(t[:10])}{' ...' if len(t) > 10 else ''}", file=sys.stderr)
    if n_groups == 0:
        raise CranfieldError("no topics with both results and judgments")
    out = sys.stdout
    if args.format == "trec":
        lines = trec_eval_lines_long(df, measures, per_query=args.per_query, strings=text, runs=run_names)
        if args.no_summary:
            lines = [ln for ln in lines if "\tall\t" not in ln]
        out.write("\n".join(lines) + "\n")
        return 0
    table = df if args.per_query else summarize(df).rename_axis("run").reset_index()
    if args.per_query:
        table = df.pivot_table(index=["run", "topic"], columns="measure", values="value",
                               observed=True, sort=False).reset_index()
        table.columns.name = None
    out.write(format_table(table, args.format, ".4f"))
    return 0


def _names_runid(measures) -> bool:
    """Whether the measure specs print run ids (runid, or a nickname holding it)."""
    from ..measures import resolve
    return any(req.measure.name == "runid" for req in resolve(measures))
