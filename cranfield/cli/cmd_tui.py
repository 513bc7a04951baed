"""`cranfield tui [DIR]`: open the Textual UI on a campaign (by default the user's copy of the bundled demo,
`cranfield demo`)."""
from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("tui", help="open the terminal UI (default: your copy of the demo campaign, see `cranfield demo`)",
                       description="Open the terminal UI on a campaign directory, or on a folder of "
                                   "campaigns (a picker opens first). `cranfield DIR` is the same.")
    p.add_argument("campaign", nargs="?", metavar="DIR", help="a campaign directory, or a folder of campaigns "
                                                              "(--campaign DIR is the same)")
    p.add_argument("--measures", help="leaderboard measures, comma separated (default: campaign.yaml "
                                      "evaluation.measures), e.g. map,P.10,ndcg_cut.10")
    p.add_argument("--assessor", help="name written with each judgment (default: $CRANFIELD_ASSESSOR or $USER)")
    p.add_argument("--export-dir", help="folder for exported tables (default: the campaign's exports/ folder)")
    p.set_defaults(func=run)


def run(args) -> int:
    from .cmd_demo import user_demo
    from tui.app import run_app  # the UI lives outside the engine; imported only here

    target = Path(args.campaign) if args.campaign else user_demo()   # a copy: the bundled demo is never edited
    kw = {}
    if getattr(args, "measures", None):
        kw["measures"] = [m.strip() for m in args.measures.split(",") if m.strip()]
    if getattr(args, "assessor", None):
        kw["assessor"] = args.assessor
    if getattr(args, "export_dir", None):
        kw["export_dir"] = Path(args.export_dir)
    return run_app(target, **kw)
