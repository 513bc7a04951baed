"""`cranfield tui [DIR]`: open the Textual UI on a campaign (the bundled demo by default)."""
from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("tui", help="open the terminal UI (default: the bundled demo campaign)")
    p.add_argument("directory", nargs="?", help="a campaign directory, or a folder of campaigns")
    p.set_defaults(func=run)


def run(args) -> int:
    from . import demo_campaign
    from tui.app import run_app  # the UI lives outside the engine; imported only here

    target = Path(args.directory) if args.directory else demo_campaign()
    return run_app(target)
