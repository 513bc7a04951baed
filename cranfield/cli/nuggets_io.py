"""`cranfield nuggets import|export`: nuggetizer's and TREC's nugget and assignment files in and out of a
campaign's nugget store (docs/rag.md, "Nugget interchange"). Added to `cranfield nuggets` by cmd_nuggets;
not a cmd_ module (the parser registers every cmd_ module as a top-level command)."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError

FORMATS = ("nuggetizer-nuggets", "nuggetizer-assignments", "trec-nuggets", "trec-assignments", "autoargue-nuggets",
           "nist-rag24")      # engine.nuggets.interchange.FORMATS (not imported at start-up)


def register_io(ns) -> None:
    """Add `import` and `export` to the `cranfield nuggets` actions."""
    im = ns.add_parser("import", help="import nugget or assignment files (nuggetizer's, TREC's); provenance kept, "
                                      "importing again adds nothing")
    im.add_argument("campaign")
    im.add_argument("files", nargs="+")
    im.add_argument("--format", choices=FORMATS, default=None,
                    help="the files' format (default: detected; an ambiguous file asks for it)")
    im.add_argument("--source", default=None,
                    help="assignment source to import into (default nuggetizer or nist by format)")
    im.add_argument("--by", default=None, help="who imports (default $CRANFIELD_ASSESSOR, else $USER)")
    im.set_defaults(func=run_import)

    ex = ns.add_parser("export", help="write the nuggets in force, or a source's assignments, in nuggetizer's or "
                                      "TREC's format")
    ex.add_argument("campaign")
    ex.add_argument("--format", choices=FORMATS, required=True)
    ex.add_argument("--source", default=None, help="the assignment source (assignment formats)")
    ex.add_argument("-o", "--output", default=None, help="file to write (atomically; default standard output)")
    ex.set_defaults(func=run_export)


def _root(path):
    from pathlib import Path
    root = Path(path)
    if not root.is_dir():
        raise CranfieldError(f"{root}: not a campaign directory")
    return root


def run_import(args) -> int:
    from engine.judgments.sources import check_name
    from engine.nuggets.exchange import import_file

    from engine.judging.checks import default_assessor
    root = _root(args.campaign)
    if args.source is not None:
        check_name(args.source)
    for f in args.files:
        res = import_file(root, f, args.format, args.source, by=default_assessor(args.by))
        print(res.summary())
        for n in res.notes:
            print(f"warning: {n}", file=sys.stderr)
    return 0


def run_export(args) -> int:
    from engine.nuggets.exchange import export_text
    root = _root(args.campaign)
    answers, titles = None, None
    if args.format in ("nuggetizer-assignments", "nist-rag24"):
        from engine.nuggets.campaign import campaign_answers
        answers = campaign_answers(root)
    if args.format.startswith("nuggetizer") or args.format == "nist-rag24":
        titles = _titles(root)
    text = export_text(root, args.format, args.source, answers, titles)
    if args.output:
        from engine.util.atomic import atomic_write
        atomic_write(args.output, text.encode("utf-8"))
        print(f"{args.output}: {text.count(chr(10))} lines ({args.format})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _titles(root) -> dict:
    from engine.campaign.campaign import load_campaign
    try:
        tt = load_campaign(root).topics()
    except CranfieldError:
        return {}
    return dict(zip(tt["topic"].astype(str), tt["title"].astype(str))) if len(tt) else {}
