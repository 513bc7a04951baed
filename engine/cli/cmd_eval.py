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
    p.add_argument("--judgments", metavar="SPEC", default=None,
                   help="with --campaign: which judgment sources to use: a source (official, human, llm, ...), "
                        "A+B (A, with B filling the documents A left unjudged), majority:A,B,C, or campaign "
                        "(campaign.yaml's sources.combine); default: the campaign's judgments as before")
    p.add_argument("--compat", choices=["10", "9"], default="10",
                   help="trec_eval version semantics for cut-off rounding (default 10.0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..evaluate import compute, summarize, to_long, trec_eval_lines, trec_eval_lines_long
    from ..ranking import EvalOptions
    from . import load_inputs
    from ..report import format_table

    w = Warnings()
    flags = dict(rel_level=args.rel_level, max_depth=args.max_depth, judged_only=args.judged_only,
                 complete=args.complete, num_docs_in_coll=args.num_docs_in_coll,
                 trec_eval_version="9" if args.compat == "9" else "10.0")
    store = None
    if args.campaign:
        from ..campaign import load_campaign
        camp = load_campaign(args.campaign, warnings=w)
        store = camp.store()
        qrels = _judgments(camp, args.judgments, w)
    elif args.judgments:
        raise CranfieldError("--judgments needs --campaign (sources belong to a campaign)")
    if store is not None:
        # a campaign: streamed over its run store by topic blocks (bounded memory, all cores)
        from ..blocks import evaluate_store
        measures = args.measures or camp.measures() or None
        opt = camp.eval_options(**flags)   # campaign depth and threshold unless a flag overrides them
        if args.dask:
            from ..distributed import dask_executor
            with dask_executor(None if args.dask == "local" else args.dask) as ex:
                df = evaluate_store(store, qrels, measures, options=opt, gains=camp.gains(), strings=True,
                                    executor=ex)
        else:
            df = evaluate_store(store, qrels, measures, options=opt, gains=camp.gains(), strings=True)
        rename = camp.run_renames()
        strings = df.attrs.get("strings")
        if rename and len(df):
            df["run"] = df["run"].cat.rename_categories([rename.get(r, r) for r in df["run"].cat.categories])
            if strings is not None:
                strings = strings.assign(run=strings["run"].map(lambda r: rename.get(r, r)))
        notes = df.attrs.get("notes", {})
        n_groups = len(df)
    else:
        camp, qrels0, runs = load_inputs(args, "eval", w)
        qrels = qrels if args.campaign else qrels0
        measures = args.measures or (camp.measures() if camp is not None else None) or None
        if args.campaign:
            opt = camp.eval_options(**flags)
        else:
            opt = EvalOptions(**{k: v for k, v in flags.items() if v is not None})
        extra = {"gains": camp.gains()} if camp is not None else None   # campaign.yaml relevance.scale gains
        c = compute(qrels, runs, measures, opt, extra=extra)
        notes, n_groups = c.notes, c.ranked.n_groups
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
        if store is not None:
            lines = trec_eval_lines_long(df, measures, per_query=args.per_query, strings=strings)
        else:
            lines = trec_eval_lines(c, per_query=args.per_query)
        if args.no_summary:
            lines = [ln for ln in lines if "\tall\t" not in ln]
        out.write("\n".join(lines) + "\n")
        return 0
    if store is None:
        df = to_long(c)
    table = df if args.per_query else summarize(df).rename_axis("run").reset_index()
    if args.per_query:
        table = df.pivot_table(index=["run", "topic"], columns="measure", values="value",
                               observed=True, sort=False).reset_index()
        table.columns.name = None
    out.write(format_table(table, args.format, ".4f"))
    return 0


def _judgments(camp, spec, w):
    """The campaign's judgments, or those a --judgments SPEC combines (reported on stderr)."""
    if not spec:
        return camp.qrels()
    from ..sources import combine_spec, combined_judgments, source_counts
    rule, names = combine_spec(camp, spec)
    q = combined_judgments(camp, spec, w)
    counts = source_counts(q)
    print(f"note: judgments {spec} ({rule}): " + ", ".join(f"{counts.get(n, 0)} from {n}" for n in names),
          file=sys.stderr)
    return q[["topic", "doc", "grade"]]
