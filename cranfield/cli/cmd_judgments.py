"""`cranfield judgments`: summary, add, undo, next, batch and export of judgments."""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError, Warnings

EXIT_NOTHING_LEFT = 4     # `judgments next`: nothing left to judge for this assessor (the pool or depth is done)
EXIT_LEASED = 5           # `next`: what is left is leased to others; `add`: the document is leased to another
NEXT_EPILOG = ("Without --pool the newest pool in pools/ is followed (the pool the judging screen follows); "
               "without any pool, the strategy to --depth over the pooled runs. Each document printed "
               "(TOPIC<tab>DOC on stdout) is leased to the assessor for judging.lease_seconds; documents "
               "leased to others are skipped; asking again before judging gives the same document. "
               "Progress goes to stderr. Exit status 0: documents printed; exit status 4: nothing left to "
               "judge (stderr names the pool, or the strategy and depth); exit status 5: what is left is "
               "leased to other assessors (stderr names them and until when; try again later); 3: bad input.")

def register(sub) -> None:
    p = sub.add_parser("judgments", help="judgment summaries, judging (add/undo/next), batches, exports",
                       description="Work with judgments: summarize a judgment file or campaign, record "
                                   "judgments in the append-only log, ask for the next document, export.")
    jsub = p.add_subparsers(dest="judgments_command", metavar="ACTION")
    from .judgments_predict import add_parser as add_predict
    add_predict(jsub)
    from .judgments_audit import add_parser as add_audit
    add_audit(jsub)

    s = jsub.add_parser("summary", help="judged / relevant per topic, category and judgment target")
    s.add_argument("source", help="a campaign directory, or a qrels / prels / sample / log.jsonl file")
    s.add_argument("--targets", choices=["auto", "derive", "campaign", "none"], default="auto",
                   help="judgment targets: from campaign.yaml, derived from each topic's judgment count "
                        "(smallest level >= count), or none; auto = campaign targets if any, derived for prels")
    s.add_argument("--levels", default="8,16,32,64,128", help="target levels for --targets derive")
    s.add_argument("-l", "--rel-level", type=int, default=None, help="minimum relevant grade (default 1 "
                                                                      "or the campaign's binary_threshold)")
    s.add_argument("--no-topics", action="store_true", help="omit the per-topic table")
    s.add_argument("--format", choices=["text", "csv", "json"], default="text")
    s.add_argument("--pool", default=None, help="for a campaign: the pool whose progress is shown "
                                                "(default: the newest in pools/)")
    s.set_defaults(func=run_summary)

    a = jsub.add_parser("add", help="record a judgment (durable when the command returns)")
    a.add_argument("campaign")
    a.add_argument("topic")
    a.add_argument("doc")
    a.add_argument("grade", help="a grade on the campaign's relevance scale")
    a.add_argument("--assessor", default=None, help="who judged (default: $CRANFIELD_ASSESSOR, else $USER)")
    a.add_argument("--seconds", default=None, help="time spent judging (a finite number >= 0)")
    a.add_argument("--strategy", default=None, help="strategy that selected the document")
    a.add_argument("--new-topic", action="store_true", help="allow a topic the campaign's topics do not list")
    a.add_argument("--override-lease", action="store_true",
                   help="record even when another assessor holds the document's judging lease (refused "
                        "otherwise, exit status 5)")
    a.set_defaults(func=run_add)

    r = jsub.add_parser("repair", help="repair a damaged judgment log (shows the changes; --apply does them)")
    r.add_argument("campaign")
    r.add_argument("--apply", action="store_true", help="make the changes shown (nothing is deleted: bad "
                                                       "lines move to log.jsonl.rejected)")
    r.set_defaults(func=run_repair)

    u = jsub.add_parser("undo", help="retract your latest judgment of a document")
    u.add_argument("campaign")
    u.add_argument("topic")
    u.add_argument("doc")
    u.add_argument("--assessor", default=None, help="default: $CRANFIELD_ASSESSOR, else $USER (as for add)")
    u.set_defaults(func=run_undo)

    n = jsub.add_parser("next", help="the next document(s) to judge for a topic, leased to the assessor",
                        description="Print the next document(s) of a topic to judge and lease them to the "
                                    "assessor.", epilog=NEXT_EPILOG)
    n.add_argument("campaign")
    n.add_argument("--topic", required=True)
    n.add_argument("--assessor", default=None, help="who will judge (default: $CRANFIELD_ASSESSOR, else $USER)")
    n.add_argument("--strategy", default=None, help="pool strategy (default: campaign.yaml pool.strategy)")
    n.add_argument("--pool", default=None, help="follow pools/pool-NAME.tsv (default: the newest pool)")
    n.add_argument("--depth", type=int, default=None)
    n.add_argument("--seed", type=int, default=0)
    n.add_argument("--budget", default=None, help="per-topic budget for sampling strategies without --pool")
    n.add_argument("-k", type=int, default=1, help="how many (static strategies)")
    n.add_argument("--text", action="store_true",
                   help="print each document's title and text under its line (indented), to judge from")
    n.set_defaults(func=run_next)

    b = jsub.add_parser("batch", help="export the not-yet-judged documents of a pool for assessors")
    b.add_argument("campaign")
    b.add_argument("--pool", required=True, help="pool name (pools/pool-NAME.tsv)")
    b.add_argument("--out", required=True, help="output file (.tsv or .jsonl)")
    b.add_argument("--topic", action="append", dest="topics")
    b.add_argument("--limit", type=int, default=None, help="at most N documents per topic")
    b.set_defaults(func=run_batch)

    e = jsub.add_parser("export", help="export the merged judgments as qrels, prels or sample_eval qrels",
                        description="Export the campaign's judgments in force. Beside the file, OUT.about.json "
                                    "says which judgments (source, how many) and when (UTC); an OUT that is a "
                                    "folder (or ends in /) gets a file named after them: "
                                    "judgments_official_NNNj_YYYYMMDDTHHMMSSZ.FORMAT. An existing file is "
                                    "never replaced unless --force.")
    e.add_argument("campaign")
    e.add_argument("--out", required=True, help="the file to write, or a folder to write a named file into")
    e.add_argument("--force", action="store_true", help="replace an existing OUT (and its .about.json)")
    e.add_argument("--format", choices=["qrels", "prels", "sample"], default="qrels")
    e.add_argument("--pool", default=None, help="pool giving strata and probabilities (prels, sample)")
    e.set_defaults(func=run_export)
    from .judgments_sources import register_actions
    register_actions(jsub)   # import, sources, auto (engine.judgments.sources, engine.judging.auto)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _warn(w: Warnings) -> None:
    for item in w:
        print(f"warning: {item}", file=sys.stderr)


def _levels(text: str) -> tuple[int, ...]:
    try:
        lv = tuple(sorted(int(x) for x in text.split(",") if x.strip()))
    except ValueError:
        raise CranfieldError(f"--levels {text!r}: comma-separated integers, e.g. 8,16,32,64,128") from None
    if not lv:
        raise CranfieldError("--levels needs at least one level")
    return lv


def run_summary(args) -> int:
    from engine.judging.workflow import judgment_summary, read_judgment_file
    from engine.pooling import derive_targets

    w = Warnings()
    src = Path(args.source)
    categories = targets = prog = None
    rel_level = args.rel_level
    if src.is_dir():
        from engine.campaign.campaign import load_campaign
        from engine.judging.progress import judging_progress
        camp = load_campaign(src, warnings=w)
        judged = camp.qrels()
        prog = judging_progress(camp, args.pool)
        prog = prog if prog.pool is not None else None
        categories = {str(k): v for k, v in camp.categories().items()} or None
        if categories is None:
            try:
                t = camp.topics()
                if t is not None and "category" in t:
                    categories = dict(zip(t["topic"].astype(str), t["category"]))
            except Exception:
                categories = None
        if args.targets in ("auto", "campaign") and camp.targets():
            targets = {str(k): int(v) for k, v in camp.targets().items()}
        if rel_level is None:
            rel_level = camp.binary_threshold()
        is_prels = False
    else:
        judged = read_judgment_file(src, w)
        is_prels = "prob" in judged.columns and "stratum" not in judged.columns
    if rel_level is None:                     # a judgment file alone: the schema's default threshold
        from engine.campaign.config import section_defaults
        rel_level = int(section_defaults("relevance")["binary_threshold"])
    if args.targets == "derive" or (args.targets == "auto" and targets is None and is_prels):
        counts = judged[judged["grade"] >= 0].groupby(judged["topic"].astype(str)).size()
        targets = derive_targets(counts, _levels(args.levels))
    if args.targets == "none":
        targets = None
    s = judgment_summary(judged, rel_level, categories, targets)
    if prog is not None:                      # progress against the pool (engine.judging.progress)
        import pandas as pd
        s["pool"] = pd.concat([prog.topics, pd.DataFrame([{"topic": "all", "pooled": prog.pooled,
                                                            "judged": prog.judged, "left": prog.left}])],
                              ignore_index=True)
        s["pool_assessors"] = prog.assessors
    _warn(w)
    out = sys.stdout
    if args.format == "json":
        import json
        out.write(json.dumps({k: v.to_dict("records") for k, v in s.items()
                              if not (args.no_topics and k == "topics")}, indent=1, default=str) + "\n")
        return 0
    if args.format == "csv":
        from engine.formats.text_tables import format_table
        for k, v in s.items():
            if args.no_topics and k == "topics":
                continue
            out.write(f"# {k}\n" + format_table(v, "csv"))
        return 0
    o = s["overall"].iloc[0]
    grades = [c for c in s["overall"].columns if c.startswith("grade_")]
    out.write(f"Judgments: {src}\n")
    out.write(f"topics {int(o['topics']):,}   judged {int(o['judged']):,}   relevant (grade >= {rel_level}) "
              f"{int(o['relevant']):,} ({100 * o['frac_relevant']:.1f}%)   per topic {o['judged_per_topic']:.2f}\n")
    out.write("per grade: " + "   ".join(f"{g[6:]}: {int(o[g]):,}" for g in grades) + "\n")
    if "unjudged" in o:
        out.write(f"pooled, not judged: {int(o['unjudged']):,}\n")
    fmt = {"frac_relevant": "{:.4f}".format, "judged_per_topic": "{:.2f}".format}
    for key, title in (("by_category", "By query category"), ("by_target", "By judgment target"
                       + (derived_target_label(targets)
                          if targets is not None and not isinstance(targets, dict) else ""))):
        if key in s:
            out.write(f"\n{title}\n" + s[key].to_string(index=False, formatters=fmt) + "\n")
    if "by_category_target" in s:
        out.write("\nTopics (mean judgments per topic) by category and target\n"
                  + s["by_category_target"].to_string(index=False) + "\n")
    elif "by_target" in s:
        bt = s["by_target"]
        row = "  ".join(f"{int(t)}: {int(n)} ({m:.2f})" for t, n, m in
                        zip(bt["target"], bt["topics"], bt["judged_per_topic"]))
        out.write(f"\nTopics (mean judgments per topic) by target: {row}   total: {int(o['topics'])} "
                  f"({o['judged_per_topic']:.2f})\n")
    if not args.no_topics:
        out.write("\nPer topic\n" + s["topics"].to_string(index=False, formatters=fmt) + "\n")
    if prog is not None:
        who = "   ".join(f"{a or '(imported)'}: {int(n):,}" for a, n in zip(prog.assessors["assessor"],
                                                                         prog.assessors["judged"]))
        out.write(f"\nPool {prog.label()}: {prog.judged:,} of {prog.pooled:,} judged, {prog.left:,} left\n"
                  + (f"judged per assessor: {who}\n" if who else ""))
        if not args.no_topics:
            out.write(prog.topics.to_string(index=False) + "\n")
    return 0


def _campaign(path, w):
    from engine.campaign.campaign import load_campaign
    return load_campaign(path, warnings=w)


def _assessor(args) -> str:
    """--assessor, else $CRANFIELD_ASSESSOR, else $USER (engine.judging.checks.default_assessor)."""
    from engine.judging.checks import default_assessor
    return default_assessor(args.assessor)


def run_add(args) -> int:
    from engine.judging.sessions import LeaseHeld
    from engine.judging.workflow import record_judgment
    root = Path(args.campaign)
    if not root.is_dir():
        raise CranfieldError(f"{root}: not a campaign directory")
    assessor = _assessor(args)
    try:
        rec = record_judgment(root, args.topic, args.doc, args.grade, assessor, args.seconds, args.strategy,
                              new_topic=args.new_topic, override_lease=args.override_lease)
    except LeaseHeld as exc:
        print(f"cranfield: {exc}. Judge another document (`cranfield judgments next`), or record this one "
              f"anyway with --override-lease", file=sys.stderr)
        return EXIT_LEASED
    print(f"judged topic {rec['topic']} doc {rec['doc']} grade {rec['grade']} (saved)")
    return 0


def run_repair(args) -> int:
    from engine.judging.workflow import log_path
    from engine.judgments.repair import apply_repair, plan_repair
    p = log_path(args.campaign)
    if not p.is_file():
        print(f"{p}: no judgment log; nothing to repair")
        return 0
    plan = plan_repair(p)
    if not plan.changes:
        print(f"{p}: {len(plan.keep)} entries, nothing to repair")
        return 0
    for line in plan.describe():
        print(line)
    if not args.apply:
        print("nothing changed yet: run again with --apply to make these changes")
        return 1
    apply_repair(plan)
    print(f"{p}: repaired ({len(plan.keep)} entries kept, {len(plan.moved)} line(s) moved to {p.name}.rejected)")
    return 0


def run_undo(args) -> int:
    from engine.judging.workflow import undo_judgment
    root = Path(args.campaign)
    if not root.is_dir():
        raise CranfieldError(f"{root}: not a campaign directory")
    from engine.judgments.log import standing_judgment
    assessor = _assessor(args)
    if not standing_judgment(root, args.topic, args.doc, assessor):
        raise CranfieldError(f"topic {args.topic} doc {args.doc}: nothing to undo (no judgment by "
                             f"{assessor or 'an unnamed assessor'} in force in the log); nothing recorded")
    undo_judgment(root, args.topic, args.doc, assessor)
    from engine.judging.sessions import leases_path, release
    if leases_path(root).is_file():           # the document may be offered again (its `done` mark released)
        release(root, args.topic, args.doc, assessor)
    print(f"undo recorded for topic {args.topic} doc {args.doc}")
    return 0


def _campaign_judged(camp):
    """Every judgment in force (imported files, then the log, resolved by the campaign's rule), with the
    canaries people judged (done, as in judging progress)."""
    from engine.judgments.canaries import with_people_canaries
    q = with_people_canaries(camp, camp.qrels())
    j = q[["topic", "doc", "grade"]].astype({"topic": str, "doc": str})
    return j[j["grade"] >= 0]


def run_next(args) -> int:
    from engine.judging.progress import offer_next
    from engine.judging.sessions import lease_time
    from engine.pooling import parse_budget
    w = Warnings()
    camp = _campaign(args.campaign, w)
    offer = offer_next(camp, args.topic, _assessor(args), args.k, pool=args.pool, strategy=args.strategy,
                       depth=args.depth, seed=args.seed, budget=parse_budget(args.budget))
    _warn(w)
    t = offer.topic
    if offer.progress is not None:
        pooled, judged, left = offer.progress.topic(t)
        print(f"pool {offer.progress.label()}, topic {t}: {judged} of {pooled} judged, {left} left",
              file=sys.stderr)
    if offer.docs:
        for d in offer.docs:
            print(f"{t}\t{d}")
            if args.text:
                _print_text(camp.root, d)
        return 0
    if offer.leased:
        held = "; ".join(f"{d} to {a or 'an unnamed assessor'} until {lease_time(e)}"
                         for d, (a, e) in list(offer.leased.items())[:5])
        more = f" (and {len(offer.leased) - 5} more)" if len(offer.leased) > 5 else ""
        print(f"cranfield: topic {t}: what is left to judge {offer.limit} is leased to other assessors: "
              f"{held}{more}; try again later", file=sys.stderr)
        return EXIT_LEASED
    print(f"cranfield: topic {t}: nothing left to judge {offer.limit}", file=sys.stderr)
    return EXIT_NOTHING_LEFT


def _print_text(root, doc: str) -> None:
    """A document's title and text, indented, as the judging desk shows them (the docs store's, else a
    planted canary's: engine.campaign.desk_text)."""
    from engine.campaign.desk_text import judging_document
    from engine.util.names import shown
    d = judging_document(root, doc)
    if d is None:
        print(f"  (no text: the campaign has no docs/ store entry for {shown(doc)})")
        return
    body = [str(d.get("title") or ""), ""] + str(d.get("text") or "").splitlines()
    print("\n".join("  " + shown(ln, "\t") for ln in body))


def run_batch(args) -> int:
    from engine.judging.workflow import export_batch
    from engine.pooling import read_pool, pool_path
    w = Warnings()
    camp = _campaign(args.campaign, w)
    pool = read_pool(pool_path(camp.root, args.pool))
    from engine.util.confine import confine_output
    n = export_batch(pool, _campaign_judged(camp), confine_output(camp.root, args.out), topics=args.topics,
                     limit=args.limit)
    _warn(w)
    print(f"wrote {n} document(s) to judge to {args.out}")
    return 0


def run_export(args) -> int:
    import json
    import os

    from engine.formats.about import ABOUT, ExportAbout, free_stem, refuse_existing, sidecar_path
    from engine.formats.files import write_text
    from engine.formats.sampled import write_prels, write_sample
    from engine.formats.qrels import write_qrels
    from engine.judging.workflow import sample_qrels
    from engine.pooling import read_pool, pool_path
    w = Warnings()
    camp = _campaign(args.campaign, w)
    from engine.util.confine import confine_output
    q = camp.qrels()
    about = ExportAbout("official", int((q["grade"] >= 0).sum()), campaign=str(camp.name))
    out = Path(args.out)
    if out.is_dir() or str(args.out).endswith(("/", os.sep)):    # a folder: a free name saying what it holds
        fmt = args.format
        out = out / f"{free_stem(out, f'judgments{about.suffix()}', [fmt, f'{fmt}.{ABOUT}'])}.{fmt}"
    out = confine_output(camp.root, out)
    refuse_existing(out, args.force)
    q = q[q["grade"] >= 0] if args.format != "sample" else q
    if args.format == "qrels":
        table = q
        write_qrels(out, q)
    else:
        if args.pool:
            from engine.judgments.canaries import drop_canaries
            pool = drop_canaries(camp.root, read_pool(pool_path(camp.root, args.pool)))
            table = sample_qrels(pool, q, w)
            if args.format == "prels":
                table = table[table["grade"] >= 0]
        elif args.format == "sample":
            if "stratum" not in q:
                raise CranfieldError("sample_eval export needs strata: give --pool NAME")
            table = q
        else:
            table = q
        (write_prels if args.format == "prels" else write_sample)(out, table)
    side = sidecar_path(out)
    write_text(side, json.dumps(about.record(f"judgments ({args.format})", [out.name], format=args.format,
                                             pool=args.pool, lines=len(table)), indent=2) + "\n")
    _warn(w)
    print(f"wrote {args.format} to {out}: judgments {about.source}, {about.count:,} in force, exported "
          f"{about.utc:%Y-%m-%d %H:%M:%S} UTC (described in {side.name})")
    return 0


def derived_target_label(targets) -> str:
    """The by-target table's title note for derived targets: the rule, including topics above the top level."""
    above = int(getattr(targets, "attrs", {}).get("above_largest", 0))
    top = int(max(targets)) if len(targets) else 0
    extra = (f"; {above} topic(s) with more than {top} judgments are filed under {top}" if above
             else f"; a count above {top} would be filed under {top}")
    return f" (derived: smallest level >= the topic's judgment count{extra})"
