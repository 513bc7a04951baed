"""`cranfield nuggets`: answer runs, nuggets, assignments, automatic assignment, scores and agreement
(TREC RAG style nugget evaluation; docs/rag.md)."""
from __future__ import annotations

import argparse
import sys

from engine.errors import CranfieldError, Warnings


def _who(args) -> str:
    from engine.judging.checks import default_assessor
    return default_assessor(args.by)


def register(sub) -> None:
    p = sub.add_parser("nuggets", help="nugget evaluation of generated answers (TREC RAG style)",
                       description="Answer runs (answers/RUN.jsonl), per-topic nuggets with provenance and edit "
                                   "history (nuggets/nuggets.jsonl), assignments per source (nuggets/assign/), "
                                   "automatic assignment through an OpenAI-compatible endpoint, nugget scores, "
                                   "citation support and agreement. See docs/rag.md.")
    ns = p.add_subparsers(dest="nuggets_command", metavar="ACTION")

    c = ns.add_parser("check", help="check TREC RAG answer files (every problem as file:line, errors and warnings "
                                    "as NIST's RAG24 checker gives them)")
    c.add_argument("files", nargs="+")
    c.add_argument("--topics", default=None, metavar="FILE",
                   help="the track's topics (TOPIC<TAB>question lines): unknown topics and other question texts "
                        "are errors, unanswered topics warnings")
    c.add_argument("--profile", choices=["rag24"], default=None,
                   help="rag24: MS MARCO v2.1 segment references, at most 20, 400 words (NIST's rules)")
    c.set_defaults(func=run_check)

    ls = ns.add_parser("list", help="the nuggets in force, with importance and provenance")
    ls.add_argument("campaign")
    ls.add_argument("--topic", default=None)
    ls.add_argument("--format", choices=["text", "csv", "json"], default="text")
    ls.set_defaults(func=run_list)

    a = ns.add_parser("add", help="add a nugget to a topic (made by a person)")
    a.add_argument("campaign")
    a.add_argument("topic")
    a.add_argument("text")
    a.add_argument("--importance", choices=["vital", "okay"], default="okay")
    a.add_argument("--by", default=None, help="who made it (default $CRANFIELD_ASSESSOR, else $USER)")
    a.add_argument("--seconds", type=float, default=None, help="time spent making it")
    a.set_defaults(func=run_add)

    e = ns.add_parser("edit", help="reword a nugget or change its importance (history kept)")
    e.add_argument("campaign")
    e.add_argument("topic")
    e.add_argument("nugget")
    e.add_argument("--text", default=None)
    e.add_argument("--importance", choices=["vital", "okay"], default=None)
    e.add_argument("--by", default=None)
    e.set_defaults(func=run_edit)

    m = ns.add_parser("merge", help="merge nuggets into a new one")
    m.add_argument("campaign")
    m.add_argument("topic")
    m.add_argument("nuggets", nargs="+")
    m.add_argument("--text", required=True)
    m.add_argument("--importance", choices=["vital", "okay"], required=True)
    m.add_argument("--by", default=None)
    m.set_defaults(func=run_merge)

    s = ns.add_parser("split", help="split a nugget into new ones (--part IMPORTANCE:TEXT, repeated)")
    s.add_argument("campaign")
    s.add_argument("topic")
    s.add_argument("nugget")
    s.add_argument("--part", action="append", required=True, metavar="IMPORTANCE:TEXT")
    s.add_argument("--by", default=None)
    s.set_defaults(func=run_split)

    r = ns.add_parser("retire", help="take a nugget out of force (its history stays)")
    r.add_argument("campaign")
    r.add_argument("topic")
    r.add_argument("nugget")
    r.add_argument("--by", default=None)
    r.set_defaults(func=run_retire)

    h = ns.add_parser("history", help="every operation that made or changed a nugget")
    h.add_argument("campaign")
    h.add_argument("topic")
    h.add_argument("nugget")
    h.set_defaults(func=run_history)

    g = ns.add_parser("assign", help="record an assignment: support, partial_support or not_support")
    g.add_argument("campaign")
    g.add_argument("run")
    g.add_argument("topic")
    g.add_argument("nugget")
    g.add_argument("label", choices=["support", "partial_support", "not_support", "s", "p", "n"])
    g.add_argument("--source", default="human", help="assignment source (default human)")
    g.add_argument("--by", default=None)
    g.add_argument("--seconds", type=float, default=None)
    g.set_defaults(func=run_assign)

    u = ns.add_parser("undo", help="retract the latest assignment of (run, topic, nugget) in a source")
    u.add_argument("campaign")
    u.add_argument("run")
    u.add_argument("topic")
    u.add_argument("nugget")
    u.add_argument("--source", default="human")
    u.add_argument("--by", default=None)
    u.set_defaults(func=run_undo)

    cr = ns.add_parser("create", help="create nuggets with an LLM from each topic's passages (iterative, cached)")
    cr.add_argument("campaign")
    _endpoint_options(cr)
    cr.add_argument("--from", dest="passages", choices=["cited", "judged"], default="cited",
                    help="passages: those the answer runs cite (default) or the judged relevant ones")
    cr.add_argument("--window", type=int, default=10, help="passages per request (default 10)")
    cr.add_argument("--max-nuggets", type=int, default=30)
    cr.add_argument("--batch", type=int, default=10, help="nuggets per importance request (default 10)")
    cr.add_argument("--redo", action="store_true", help="also topics that already have nuggets")
    cr.set_defaults(func=run_create)

    au = ns.add_parser("auto", help="assign nuggets (and, with --support, citation support) through an "
                                    "OpenAI-compatible endpoint; cached, resumable")
    au.add_argument("campaign")
    _endpoint_options(au)
    au.add_argument("--source", default=None, help="source name (default llm-MODEL)")
    au.add_argument("--batch", type=int, default=10, help="nuggets per request (default 10)")
    au.add_argument("--support", action="store_true", help="also label each citation's support")
    au.add_argument("--stop-after", type=int, dest="max_failures", default=argparse.SUPPRESS,
                    help="the same as --max-failures")
    au.set_defaults(func=run_auto)

    sc = ns.add_parser("scores", help="nugget leaderboard: strict_vital, strict_all, vital, all, weighted per run")
    sc.add_argument("campaign")
    sc.add_argument("--source", default="human", help="assignment source (default human)")
    sc.add_argument("--support-source", default=None, help="add citation support from this source")
    sc.add_argument("--per-topic", action="store_true", help="per (run, topic) scores")
    sc.add_argument("--format", choices=["text", "csv", "json"], default="text")
    sc.set_defaults(func=run_scores)

    ag = ns.add_parser("agree", help="kappa between two assignment sources and tau between their leaderboards")
    ag.add_argument("campaign")
    ag.add_argument("reference")
    ag.add_argument("other")
    ag.add_argument("--measure", default="all")
    ag.add_argument("--top", type=int, default=10, help="topics shown, lowest kappa first (default 10)")
    ag.set_defaults(func=run_agree)

    sg = ns.add_parser("significance", help="pairwise significance tests between answer runs on a nugget measure")
    sg.add_argument("campaign")
    sg.add_argument("--source", default="human")
    sg.add_argument("--measure", default="all")
    sg.add_argument("--tests", default="t,randomization", help="comma separated: t, wilcoxon, randomization")
    sg.add_argument("--n-perm", type=int, default=10000)
    sg.add_argument("--alpha", type=float, default=0.05)
    sg.add_argument("--format", choices=["text", "csv", "json"], default="text")
    sg.set_defaults(func=run_significance)

    gs = ns.add_parser("gstudy", help="G-study (variance components) and D-study of a nugget measure")
    gs.add_argument("campaign")
    gs.add_argument("--source", default="human")
    gs.add_argument("--measure", default="all")
    gs.set_defaults(func=run_gstudy)

    tu = ns.add_parser("tui", help="the Nuggets and Assign screens (80x24, keys in the footer)")
    tu.add_argument("campaign")
    tu.add_argument("--source", default="human", help="assignment source the screens write (default human)")
    tu.add_argument("--by", default=None, help="assessor (default $CRANFIELD_ASSESSOR, else $USER)")
    tu.set_defaults(func=run_tui)

    co = ns.add_parser("cost", help="assessor time per assignment source and for nugget creation, from the logs, "
                                    "with the hours left to finish")
    co.add_argument("campaign")
    co.add_argument("--source", default="human", help="the source to project (default human)")
    co.set_defaults(func=run_cost)

    from .nuggets_io import register_io
    register_io(ns)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _endpoint_options(p) -> None:
    """The options of a command that calls the endpoint (cranfield/cli/model_options.py)."""
    from .model_options import add_model_options
    add_model_options(p)


def _settings(args):
    from engine.judging.auto import JudgeSettings, check_settings
    from .model_options import model_settings
    st = JudgeSettings(**model_settings(args))
    check_settings(st)
    return st


def _warn(w: Warnings) -> None:
    for item in w:
        print(f"warning: {item}", file=sys.stderr)


def _root(path):
    from pathlib import Path
    root = Path(path)
    if not root.is_dir():
        raise CranfieldError(f"{root}: not a campaign directory")
    return root


def run_check(args) -> int:
    from engine.nuggets.answers import scan_answers
    from engine.nuggets.rag24 import check_run, read_topic_file, reader_rules
    topics = read_topic_file(args.topics) if args.topics else None
    n_err = 0
    for f in args.files:
        w = Warnings()
        run, problems = scan_answers(f, w, rules=reader_rules(args.profile, topics))
        problems += check_run(run, w, topics)
        problems.sort(key=lambda p: (p.line or 0))
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        _warn(w)
        n_err += len(problems)
        if not run.answers and not problems:
            print(f"error: {f}: holds no answers", file=sys.stderr)
            n_err += 1
            continue
        n_s = sum(len(a.sentences) for a in run.answers)
        n_c = sum(len(s.citations) for a in run.answers for s in a.sentences)
        verdict = "ok" if not problems else f"{len(problems)} error(s)"
        print(f"{verdict}: {f}: run(s) {', '.join(run.runs) or '-'}; {len(run.answers)} answers read, {n_s} sentences, "
              f"{n_c} citations; {len(w)} warning(s)")
    return 3 if n_err else 0


def run_list(args) -> int:
    from engine.formats.text_tables import format_table
    from engine.nuggets.store import current_nuggets
    w = Warnings()
    df = current_nuggets(_root(args.campaign), args.topic, w)
    if not len(df):
        print("no nuggets" + (f" for topic {args.topic}" if args.topic else ""))
    else:
        cols = ["topic", "nugget", "importance", "provenance", "edits", "text"]
        if args.format == "text":
            df = df.assign(text=[t if len(t) <= 60 else t[:59] + "…" for t in df["text"]])
        sys.stdout.write(format_table(df[cols] if args.format == "text" else df, args.format))
    _warn(w)
    return 0


def run_add(args) -> int:
    from engine.nuggets.store import add_nuggets
    ids = add_nuggets(_root(args.campaign), args.topic, [(args.text, args.importance)], by=_who(args),
                      seconds=args.seconds)
    print(f"topic {args.topic}: nugget {ids[0]} ({args.importance}) added (saved)")
    return 0


def run_edit(args) -> int:
    from engine.nuggets.store import edit_nugget
    edit_nugget(_root(args.campaign), args.topic, args.nugget, args.text, args.importance, by=_who(args))
    print(f"topic {args.topic}: nugget {args.nugget} edited (saved; history kept)")
    return 0


def run_merge(args) -> int:
    from engine.nuggets.store import merge_nuggets
    nid = merge_nuggets(_root(args.campaign), args.topic, args.nuggets, args.text, args.importance, by=_who(args))
    print(f"topic {args.topic}: {', '.join(args.nuggets)} merged into {nid} (saved)")
    return 0


def run_split(args) -> int:
    from engine.nuggets.store import split_nugget
    parts = []
    for p in args.part:
        imp, sep, text = p.partition(":")
        if not sep or imp not in ("vital", "okay"):
            raise CranfieldError(f"--part {p!r}: write IMPORTANCE:TEXT, e.g. vital:Paris is the capital")
        parts.append((text, imp))
    ids = split_nugget(_root(args.campaign), args.topic, args.nugget, parts, by=_who(args))
    print(f"topic {args.topic}: {args.nugget} split into {', '.join(ids)} (saved)")
    return 0


def run_retire(args) -> int:
    from engine.nuggets.store import retire_nugget
    retire_nugget(_root(args.campaign), args.topic, args.nugget, by=_who(args))
    print(f"topic {args.topic}: nugget {args.nugget} retired (saved; history kept)")
    return 0


def run_history(args) -> int:
    from engine.nuggets.store import nugget_history
    for r in nugget_history(_root(args.campaign), args.topic, args.nugget):
        what = r.get("text") or ", ".join(r.get("texts") or [])
        extra = f" importance {r['importance']}" if "importance" in r else ""
        o = r.get("origin") or {}
        src = f" (from {o.get('file')}:{o.get('line')}, {o.get('format')})" if o else ""
        print(f"{r.get('ts', '')}  {r['op']:<6} {r.get('nugget')} by {r.get('by') or '-'}"
              f" [{r.get('provenance', '')}]{extra}: {what}{src}")
    return 0


_SHORT = {"s": "support", "p": "partial_support", "n": "not_support"}


def run_assign(args) -> int:
    from engine.nuggets.campaign import campaign_answers
    from engine.nuggets.store import assign, current_nuggets
    root = _root(args.campaign)
    label = _SHORT.get(args.label, args.label)
    if not any(a.run == args.run and a.topic == args.topic for a in campaign_answers(root)):
        raise CranfieldError(f"run {args.run} has no answer to topic {args.topic} in {root / 'answers'}")
    nug = current_nuggets(root, args.topic)
    if args.nugget not in set(nug["nugget"]):
        raise CranfieldError(f"topic {args.topic} has no nugget {args.nugget} in force (cranfield nuggets list)")
    assign(root, args.source, [(args.run, args.topic, args.nugget, label)], assessor=_who(args), seconds=args.seconds)
    print(f"{args.run} {args.topic} {args.nugget}: {label} (saved to source {args.source})")
    return 0


def run_undo(args) -> int:
    from engine.nuggets.store import undo_assign
    undo_assign(_root(args.campaign), args.source, args.run, args.topic, args.nugget, assessor=_who(args))
    print(f"{args.run} {args.topic} {args.nugget}: latest assignment in source {args.source} retracted")
    return 0


def run_auto(args) -> int:
    from engine.judging.auto import read_docs
    from engine.nuggets.auto import auto_assign, auto_support
    from engine.nuggets.campaign import campaign_answers
    from engine.nuggets.store import current_nuggets
    root = _root(args.campaign)
    w = Warnings()
    answers = campaign_answers(root, w)
    nug = current_nuggets(root, warnings=w)
    if not answers or not len(nug):
        raise CranfieldError(f"{root}: needs answer runs (answers/) and nuggets (cranfield nuggets add) first")
    st = _settings(args)
    source = args.source or "llm-" + "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in args.model)
    last = [0.0]

    def progress(done, total, res):
        import time
        now = time.monotonic()
        if done == total or now - last[0] > 2:
            last[0] = now
            print(f"  {done}/{total} requests", file=sys.stderr)

    res = auto_assign(root, source, st, answers, nug, batch=args.batch, progress=progress)
    _report(f"assignments -> source {source}", res)
    if args.support and not res.stopped:
        passages = {k: f"{v.get('title', '')}\n{v.get('text', '')}".strip() for k, v in read_docs(root).items()}
        sres = auto_support(root, source, st, answers, passages, progress=progress)
        _report(f"citation support -> source {source}", sres)
        res = sres if sres.stopped or sres.failed else res
    _warn(w)
    return 1 if (res.stopped or res.failed) else 0


def _report(what: str, res) -> None:
    print(f"{what}: {res.items} wanted, {res.already} already there, {res.from_cache} from the cache, "
          f"{res.labelled} new from {res.calls} requests ({res.unparsed} unparseable, {res.http_errors} failed "
          f"requests); tokens {res.prompt_tokens:,} prompt + {res.completion_tokens:,} completion")
    if res.failed:
        print(f"  {len(res.failed)} request(s) given up after all retries; rerun to ask them again", file=sys.stderr)
    if res.stopped:
        print(f"  {res.stopped}", file=sys.stderr)


def run_scores(args) -> int:
    from engine.formats.text_tables import format_table
    from engine.nuggets.campaign import leaderboard, per_topic_scores
    root = _root(args.campaign)
    w = Warnings()
    if args.per_topic:
        df = per_topic_scores(root, args.source, w)
    else:
        df = leaderboard(root, args.source, w, support_source=args.support_source)
    sys.stdout.write(format_table(df, args.format))
    _warn(w)
    return 0


def run_agree(args) -> int:
    from engine.nuggets.campaign import agreement
    w = Warnings()
    a = agreement(_root(args.campaign), args.reference, args.other, args.measure, w)
    print(f"{args.other} against {args.reference}: {a.pairs} shared assignments, kappa {a.kappa:.4f}, "
          f"label accuracy {a.accuracy:.4f}; Kendall tau over {a.runs} runs ({a.measure}) {a.tau:.4f}")
    if a.per_topic is not None and len(a.per_topic):
        from engine.formats.text_tables import format_table
        print(f"\nper topic, lowest kappa first (first {min(args.top, len(a.per_topic))} of {len(a.per_topic)}):")
        sys.stdout.write(format_table(a.per_topic.head(args.top), "text"))
    _warn(w)
    return 0


def run_cost(args) -> int:
    from engine.nuggets.campaign import assessor_seconds, time_model
    from engine.nuggets.store import list_sources
    root = _root(args.campaign)
    for s in list_sources(root):
        c = assessor_seconds(root, s)
        mean = "unknown" if c["timed"] == 0 else f"{c['mean_seconds']:.1f} s"
        print(f"{s}: {c['assignments']} assignments, {c['timed']} timed, mean {mean}, total "
              f"{c['total_seconds'] / 3600:.2f} h")
    m = time_model(root, args.source)
    per_n = "unknown" if not m["nugget_ops_timed"] else f"{m['seconds_per_nugget']:.1f} s"
    print(f"nugget creation by people: {m['nugget_ops']} operations, {m['nugget_ops_timed']} timed, {per_n} each")
    left = ("unknown (no timed assignment yet)" if m["hours_to_finish"] != m["hours_to_finish"]
            else f"{m['hours_to_finish']:.2f} h")
    print(f"{args.source}: {m['assigned']}/{m['pairs']} (answer, nugget) pairs assigned; {m['remaining']} left, "
          f"about {left} at the measured pace; {m['hours_spent']:.2f} h spent")
    return 0


def run_significance(args) -> int:
    from engine.formats.text_tables import format_table
    from engine.nuggets.campaign import significance
    w = Warnings()
    tests = tuple(t.strip() for t in args.tests.split(",") if t.strip())
    df = significance(_root(args.campaign), args.source, args.measure, tests, args.n_perm, args.alpha, warnings=w)
    if args.format == "text":
        keep = ["a", "b", "mean_a", "mean_b", "diff"] + [c for c in df.columns if c.endswith("_holm") or
                                                         c in ("p_tukey",)]
        df = df[keep]
    sys.stdout.write(format_table(df, args.format))
    _warn(w)
    return 0


def run_gstudy(args) -> int:
    from engine.nuggets.campaign import g_study_report
    w = Warnings()
    r = g_study_report(_root(args.campaign), args.source, args.measure, w)
    print(f"{args.measure} over {r['n_topics']} topics x {r['n_systems']} answer runs (source {args.source})")
    print(f"variance: runs {r['var_system']:.6f}, topics {r['var_topic']:.6f}, residual {r['var_residual']:.6f}")
    print(f"E rho^2 {r['erho2']:.4f} [{r['erho2_lower']:.4f}, {r['erho2_upper']:.4f}], "
          f"Phi {r['phi']:.4f} [{r['phi_lower']:.4f}, {r['phi_upper']:.4f}]")
    print(f"topics for E rho^2 >= {r['target']}: {r['topics_for_erho2']}; for Phi: {r['topics_for_phi']}")
    for m in r["warnings"]:
        print(f"warning: {m}", file=sys.stderr)
    _warn(w)
    return 0


def run_create(args) -> int:
    from engine.nuggets.campaign import topic_passages
    from engine.nuggets.create import create_nuggets
    root = _root(args.campaign)
    w = Warnings()
    passages, queries = topic_passages(root, args.passages, w)
    st = _settings(args)
    res = create_nuggets(root, st, passages, queries, window=args.window, max_nuggets=args.max_nuggets,
                         batch=args.batch, redo=args.redo)
    made = sum(res.created.values())
    print(f"{made} nuggets for {len(res.created)} topic(s) (provenance llm, model {args.model}); "
          f"{len(res.skipped)} topic(s) already had nuggets; {res.calls} requests, {res.from_cache} from the cache, "
          f"{res.unparsed} unparseable; tokens {res.prompt_tokens:,} + {res.completion_tokens:,}")
    for t, reason in res.failed[:10]:
        print(f"  topic {t}: not created ({reason}); rerun to resume", file=sys.stderr)
    if len(res.failed) > 10:
        print(f"  … and {len(res.failed) - 10} more topic(s) not created", file=sys.stderr)
    if res.stopped:
        print(f"  {res.stopped}", file=sys.stderr)
    _warn(w)
    return 1 if res.failed else 0


def run_tui(args) -> int:
    from tui.nuggets import NuggetsApp
    from engine.judgments.sources import check_name
    check_name(args.source)
    NuggetsApp(_root(args.campaign), args.source, _who(args)).run()
    return 0
