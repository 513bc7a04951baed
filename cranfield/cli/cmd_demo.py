"""`cranfield demo [--reset]`: the user's own copy of the bundled demo campaign (what `cranfield` with no
argument opens), made on first use in $XDG_DATA_HOME/cranfield/demo (else ~/.local/share/cranfield/demo).
The bundled demo itself is never opened, so judging, pooling or submitting never edit it."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from engine.campaign.demo import bundled_demo  # noqa: F401  (the resolver; re-exported for the CLI)

CACHES = (".cranfield-cache", ".cranfield-store")


def register(sub) -> None:
    p = sub.add_parser("demo", help="the path of your copy of the demo campaign (--reset renews it)",
                       description="Print the path of your copy of the bundled demo campaign, making it on first "
                                   "use ($XDG_DATA_HOME/cranfield/demo, else ~/.local/share/cranfield/demo). "
                                   "`cranfield` with no argument opens it. --reset replaces it with a fresh copy "
                                   "(your judgments, pools and runs in it are removed).")
    p.add_argument("--reset", action="store_true", help="replace the copy with a fresh one from the bundle")
    p.set_defaults(func=run)


def data_home() -> Path:
    """$XDG_DATA_HOME when it is an absolute path, else ~/.local/share (the XDG base directory rule)."""
    x = os.environ.get("XDG_DATA_HOME", "")
    return Path(x) if x and os.path.isabs(x) else Path.home() / ".local" / "share"


def user_demo(reset: bool = False) -> Path:
    """The user's demo campaign folder, copied from the bundled demo when missing (or when `reset`).
    The copy is made beside it and renamed into place (one commit point: never half a demo)."""
    dst = data_home() / "cranfield" / "demo"
    if (dst / "campaign.yaml").is_file() and not reset:
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".demo-new-", dir=dst.parent))
    try:
        shutil.copytree(bundled_demo(), tmp / "demo", ignore=shutil.ignore_patterns(*CACHES))
        old = None
        if dst.exists():
            old = Path(tempfile.mkdtemp(prefix=".demo-old-", dir=dst.parent)) / "demo"
            os.replace(dst, old)
        os.replace(tmp / "demo", dst)
        if old is not None:
            shutil.rmtree(old.parent, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dst


def run(args) -> int:
    path = user_demo(reset=args.reset)
    print(f"renewed your copy of the demo campaign: {path}" if args.reset else str(path))
    return 0
