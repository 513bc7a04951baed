"""`cranfield eval`: trec_eval-compatible evaluation of runs against judgments."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings


def register(sub) -> None:
    p = sub.add_parser("eval", help="evaluate runs (trec_eval compatible output)",
                       description="Evaluate runs against judgments. Output is trec_eval's, line for line, "
                                   "unless --format is csv/tsv/json/markdown.")
    p.add_argument("files", nargs="*", help="QRELS RUN [RUN ...] (trec_eval order), plain or .gz")
    p.add_argument("--campaign", help="evaluate a campaign directory's runs against its judgments")
    p.add_argument("--judgments-format", choices=["qrels", "prels", "sample"], default=None,
                   help="read JUDGMENTS in this format whatever its name and content (a 5-field file is read as "
                        "sample_eval qrels only when asked)")
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
    p.add_argument("-R", dest="rel_format", default="qrels",
                   choices=["qrels", "prefs", "qrels_prefs", "qrels_jg", "diversity"],
                   help="judgments format, as trec_eval's -R: qrels (default), prefs, qrels_prefs, qrels_jg; "
                        "diversity = subtopic judgments evaluated as NIST's ndeval (its CSV output)")
    p.add_argument("--alpha", type=float, default=0.5, help="-R diversity: ndeval's alpha (default 0.5)")
    p.add_argument("--beta", type=float, default=0.5, help="-R diversity: ndeval's NRBP beta (default 0.5)")
    p.add_argument("--traditional", action="store_true",
                   help="-R diversity: rank by score (ties by document id), not by the rank field (ndeval)")
    p.add_argument("-Z", dest="zscores", metavar="ZSCORES_FILE",
                   help="standardize every measure by per-topic 'topic measure mean sd' lines (trec_eval -Z)")
    p.add_argument("--strict-trec-eval", action="store_true", dest="strict",
                   help="fail as the trec_eval binary does, with its exit codes (duplicate document, judged "
                        "topic without results: 4; bad judgments file: 2; bad run file: 3)")
    from .eval_ppi import add_arguments as add_ppi_arguments
    add_ppi_arguments(p)
    p.set_defaults(func=run)


DEFAULTS = dict(command="eval", max_read=None, files=[], campaign=None, judgments_format=None, measures=None,
                per_query=False, complete=False, max_depth=None, rel_level=None, judged_only=False,
                num_docs_in_coll=None, no_summary=False, format="trec", dask=None, judgments=None, compat="10",
                rel_format="qrels", alpha=0.5, beta=0.5, traditional=False, zscores=None, strict=False,
                ci=None, gold=None, ci_alpha=0.05, ci_normal=False, strata=None, plan_width=None, plan_topics=None, ci_table=None,
                design=None, design_pool=None)
"""What the parser gives `cranfield eval` with no option (checked against it: tests/test_startup.py)."""
_FLAGS = {"-q": "per_query", "-c": "complete", "-J": "judged_only", "-n": "no_summary"}


def fast_args(argv: list[str]):
    """The parsed arguments of `cranfield eval ARGV` for its common forms, read without argparse (whose
    import and parser cost a start-up): files, `-m MEASURE` and the flags -q -c -J -n, the files in one
    run. None for anything else: the parser then reads it (and words any error)."""
    from types import SimpleNamespace

    files: list[str] = []
    measures: list[str] = []
    flags: dict = {}
    ended = False                                # the files were given and an option followed them
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _FLAGS:
            flags[_FLAGS[a]] = True
        elif a == "-m" and i + 1 < len(argv) and argv[i + 1][:1] not in ("-", ""):
            measures.append(argv[i + 1])
            i += 1
        elif a[:1] in ("-", "") or (ended and files):
            return None                          # another option, or files after options that followed files
        else:
            files.append(a)
            i += 1
            while i < len(argv) and argv[i][:1] not in ("-", ""):
                files.append(argv[i])
                i += 1
            ended = True
            continue
        i += 1
    return SimpleNamespace(**{**DEFAULTS, "files": files, "measures": measures or None, **flags, "func": run})


def run(args) -> int:
    if not getattr(args, "strict", False):
        return _run(args)
    from engine.errors import FormatError
    from engine.measures.registry import MeasureError
    from engine.official.strict import EXIT_USAGE, input_error_code
    try:
        return _run(args)
    except MeasureError as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FormatError as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        return input_error_code(exc, args.files[0] if args.files else "")


def _run(args) -> int:
    if getattr(args, "ci", None) or getattr(args, "plan_width", None):
        from .eval_ppi import run_ppi          # intervals from a model source and a human sample
        return run_ppi(args)
    if args.compat == "9" and args.measures:
        from engine.evaluation.dialects import for_version
        args.measures = for_version(args.measures, "9")      # 9.x's all_trec, as the library gives it
    if args.judgments_format and args.files:
        from engine.formats.detect import declare_judgment_kind
        declare_judgment_kind(args.files[0], args.judgments_format)
    if args.rel_format == "diversity":
        from engine.official.ndeval import run_cli
        return run_cli(args, sys.stdout)
    from engine.ranking.ranked import EvalOptions

    w = Warnings()
    c = None
    flags = dict(rel_level=args.rel_level, max_depth=args.max_depth, judged_only=args.judged_only,
                 complete=args.complete, num_docs_in_coll=args.num_docs_in_coll,
                 trec_eval_version="9" if args.compat == "9" else "10.0")
    if args.measures and not _special(args):
        from engine.measures.names import plain
        if not plain(args.measures):
            return _run_named(args, flags, w)
    if args.campaign:
        # a campaign: the engine decides in memory or streamed, and applies gains, renames and options
        from engine.campaign.campaign import load_campaign
        from engine.evaluation.seam import evaluate_campaign
        camp = load_campaign(args.campaign, warnings=w)
        qrels = _judgments(camp, args.judgments, w)
        measures = args.measures or camp.measures() or None
        if args.format == "trec" and not _names_runid(measures):
            measures = ["runid", *(measures or ["official"])]   # a campaign's runs are told apart by their ids
        strings = args.format == "trec"
        if strings and not args.dask and qrels is None and not _special(args):
            # run by run from the store's parts in worker processes, as the file path (the engine says when)
            from engine.evaluation.seam import campaign_trec_lines
            got = campaign_trec_lines(camp, measures, options=flags, per_query=args.per_query)
            if got is not None:
                for p in w:
                    print(f"warning: {p}", file=sys.stderr)
                _note_unjudged(got[1])
                return _write_lines(got[0], args)
        if args.dask:
            from engine.evaluation.distributed import dask_executor
            with dask_executor(None if args.dask == "local" else args.dask) as ex:
                ev = evaluate_campaign(camp, measures, options=flags, strings=strings, executor=ex, qrels=qrels)
        else:   # no ranked lists needed: a large enough store is read by topic blocks across the cores
            from engine.evaluation.seam import is_large
            if not is_large(camp):            # blocks of whole runs in threads, here: no page faults twice
                from engine.util.memory import keep_freed_memory
                keep_freed_memory()
            ev = evaluate_campaign(camp, measures, options=flags, strings=strings, qrels=qrels, ranked=False)
        df, text, notes, run_names = ev.table, ev.strings, ev.notes, None
        n_groups = len(df) + (len(text) if text is not None else 0)
    elif args.judgments:
        raise CranfieldError("--judgments needs --campaign (sources belong to a campaign)")
    else:
        if len(args.files) < 2:
            raise CranfieldError("eval needs a judgments file and at least one run file "
                                 "(cranfield eval JUDGMENTS RUN [RUN ...]) or --campaign DIR")
        measures = args.measures or None
        opt = EvalOptions(**{k: v for k, v in flags.items() if v is not None})
        if _special(args):
            # trec_eval's -R formats, -Z and --strict-trec-eval: one pass over the tables (engine.official.trec_extras)
            from engine.official.trec_extras import evaluate_special
            sp = evaluate_special(args, measures, opt, w)
            c, text, notes, n_groups, run_names = sp.computed, None, sp.notes, sp.n_groups, None
            df = None
        else:
            if args.format == "trec":
                # small clean files: read and evaluated without pandas (the engine says when it can)
                from engine.evaluation.plain import plain_sized, trec_eval_lines_plain, trec_eval_lines_streamed
                if plain_sized(args.files):
                    from engine.util.memory import keep_freed_memory
                    keep_freed_memory()           # a short command on small files: no page faults twice
                lines = trec_eval_lines_plain(args.files[0], args.files[1:], measures, opt, per_query=args.per_query)
                if lines is None:             # many or large files: run by run in worker processes
                    got = trec_eval_lines_streamed(args.files[0], args.files[1:], measures, opt,
                                                   per_query=args.per_query)
                    if got is not None:
                        lines = got[0]
                        _note_unjudged(got[1])
                if lines is not None:
                    return _write_lines(lines, args)
            from engine.evaluation.evaluate import evaluate_files
            # run files are independent: read and evaluated in one batch per core (threads)
            df = evaluate_files(args.files[0], args.files[1:], measures, warnings=w, strings=True, options=opt)
            text, notes, n_groups, run_names = (df.attrs.pop(k) for k in ("strings", "notes", "groups", "runs"))
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    if getattr(args, "strict", False) and not args.campaign:
        from engine.official.strict import EXIT_EVAL, eval_failure
        why = eval_failure(w, bool(args.complete), sp.qrels["topic"].unique(), sp.runs)
        if why:
            print(f"trec_eval: {why}", file=sys.stderr)
            return EXIT_EVAL
    _note_unjudged(notes.get("topics_without_judgments"))
    if n_groups == 0:
        raise _nothing_evaluated(args)
    if args.format == "trec":
        if c is not None:
            from engine.official.trec_extras import special_lines
            lines = special_lines(c, args)
        else:
            from engine.evaluation.evaluate import trec_eval_lines_long
            lines = trec_eval_lines_long(df, measures, per_query=args.per_query, strings=text, runs=run_names)
        return _write_lines(lines, args)
    from engine.evaluation.evaluate import summarize
    from engine.formats.text_tables import format_table
    out = sys.stdout
    if c is not None:
        from engine.evaluation.evaluate import to_long
        df = to_long(c)
    table = df if args.per_query else summarize(df).rename_axis("run").reset_index()
    if args.per_query:
        table = df.pivot_table(index=["run", "topic"], columns="measure", values="value",
                               observed=True, sort=False).reset_index()
        table.columns.name = None
    out.write(format_table(table, args.format, ".4f"))
    return 0


def _nothing_evaluated(args) -> CranfieldError:
    """The error when no topic has both results and judgments; a campaign of answer runs only (TREC RAG)
    is told which commands evaluate answers."""
    msg = "no topics with both results and judgments"
    if args.campaign:
        from engine.campaign.campaign import load_campaign
        from engine.nuggets.campaign import answer_files
        answers = answer_files(args.campaign)
        if answers and not load_campaign(args.campaign).run_files():
            d = args.campaign
            return CranfieldError(
                f"{msg}: {d} has {len(answers)} answer runs and no retrieval runs (eval scores ranked lists "
                f"against judgments; answers are scored with nuggets): cranfield nuggets scores {d} for each "
                f"run's nugget scores, after cranfield nuggets assign {d} RUN TOPIC NUGGET s|p|n (by hand), "
                f"cranfield nuggets auto {d} --endpoint URL --model M (an LLM) or cranfield nuggets tui {d}; "
                f"see docs/rag.md")
    return CranfieldError(msg)


def _note_unjudged(topics: list[str] | None) -> None:
    """The note on stderr about run topics without judgments (not evaluated)."""
    if topics:
        print(f"note: {len(topics)} topic(s) in the runs have no judgments and are not evaluated: "
              f"{', '.join(topics[:10])}{' ...' if len(topics) > 10 else ''}", file=sys.stderr)


def _run_named(args, flags: dict, w: Warnings) -> int:
    """Measure names beyond trec_eval's (ir_measures': nDCG@10, P(rel=2)@10, P_5,10 ...), through the one
    request parser: the library's `evaluate` for files, the campaign's evaluation with --campaign."""
    from engine.evaluation.evaluate import summarize, trec_eval_lines
    from engine.formats.text_tables import format_table
    if flags.get("num_docs_in_coll") is not None:
        raise CranfieldError("-N applies to trec_eval's utility measure; ask for it by its trec_eval name")
    opts = {k: v for k, v in flags.items() if k != "num_docs_in_coll" and v is not None}
    if args.campaign:
        if args.judgments:
            raise CranfieldError("--judgments takes trec_eval's measure names (map, P.10, ndcg_cut.10)")
        from engine.campaign.campaign import load_campaign
        df = load_campaign(args.campaign, warnings=w).evaluate(args.measures, **opts)
    else:
        if len(args.files) < 2:
            raise CranfieldError("eval needs a judgments file and at least one run file "
                                 "(cranfield eval JUDGMENTS RUN [RUN ...]) or --campaign DIR")
        from engine.evaluation.api import evaluate
        df = evaluate(args.files[0], args.files[1:], args.measures, issues=w, **opts)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    if len(df) == 0:
        raise _nothing_evaluated(args)
    if args.format == "trec":
        return _write_lines(trec_eval_lines(df, per_query=args.per_query), args)
    if args.per_query:
        table = df.pivot_table(index=["run", "topic"], columns="measure", values="value",
                               observed=True, sort=False).reset_index()
        table.columns.name = None
    else:
        table = summarize(df).rename_axis("run").reset_index()
    sys.stdout.write(format_table(table, args.format, ".4f"))
    return 0


def _write_lines(lines: list[str], args) -> int:
    """trec_eval's text on stdout (without the summary lines with -n)."""
    if args.no_summary:
        lines = [ln for ln in lines if "\tall\t" not in ln]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _names_runid(measures) -> bool:
    """Whether the measure specs print run ids (runid, or a nickname holding it)."""
    from engine.measures import resolve
    return any(req.measure.name == "runid" for req in resolve(measures))


def _special(args) -> bool:
    """Whether trec_eval's -R formats, -Z or --strict-trec-eval ask for the table-level evaluation."""
    return args.rel_format != "qrels" or bool(args.zscores) or bool(getattr(args, "strict", False))


def _judgments(camp, spec, w):
    """The campaign's judgments, or those a --judgments SPEC combines (reported on stderr)."""
    if not spec:
        return None
    from engine.judgments.sources import combine_spec, combined_judgments, source_counts
    rule, names = combine_spec(camp, spec)
    q = combined_judgments(camp, spec, w)
    counts = source_counts(q)
    print(f"note: judgments {spec} ({rule}): " + ", ".join(f"{counts.get(n, 0)} from {n}" for n in names),
          file=sys.stderr)
    return q[["topic", "doc", "grade"]]
