"""`cranfield init DIR`: create a campaign skeleton (campaign.yaml with the schema's commented defaults,
engine.campaign.template; runs/, topics/, judgments/). Never overwrites an existing campaign.yaml."""
from __future__ import annotations

from pathlib import Path

from engine.errors import CranfieldError

FOLDERS = ("runs", "topics", "judgments")


def register(sub) -> None:
    p = sub.add_parser("init", help="create a new campaign directory",
                       description="Create DIR with a commented campaign.yaml and empty runs/, topics/ and "
                                   "judgments/ folders. Refuses to overwrite an existing campaign.yaml.")
    p.add_argument("directory", help="the campaign directory to create (may exist if it has no campaign.yaml)")
    p.add_argument("--name", help="campaign name (default: the directory name)")
    p.set_defaults(func=run)


def init_campaign(directory, name: str | None = None) -> Path:
    """Create the skeleton; returns the path of the new campaign.yaml."""
    root = Path(directory)
    cfg = root / "campaign.yaml"
    if cfg.exists():
        raise CranfieldError(f"{cfg} already exists; refusing to overwrite it "
                             f"(edit it, or choose a new directory)")
    if root.exists() and not root.is_dir():
        raise CranfieldError(f"{root}: exists and is not a directory")
    if name is not None:
        from engine.util.names import check_name
        check_name(name, "campaign name")       # the one rule of names shown on terminals and pages
    title = name or root.resolve().name or "My campaign"
    from engine.util import fs
    from engine.util.confine import campaign_roots
    fs.makedirs(root)
    campaign_roots(root)                           # anchored from here on
    for f in FOLDERS:
        fs.makedirs(root / f)
    gi = root / ".gitignore"
    if not fs.exists(gi):
        fs.atomic_write(gi, ".cranfield-cache/\n")

    from engine.campaign.template import campaign_template
    from engine.util.atomic import campaign_lock
    with campaign_lock(root):
        try:
            with fs.atomic_file(cfg, "w", encoding="utf-8", exclusive=True) as fh:   # never clobbers one
                fh.write(campaign_template(title))                                   # created meanwhile
        except FileExistsError:
            raise CranfieldError(f"{cfg} already exists; refusing to overwrite it "
                                 f"(edit it, or choose a new directory)") from None
    return cfg


def run(args) -> int:
    cfg = init_campaign(args.directory, args.name)
    root = cfg.parent
    print(f"created {cfg}")
    print(f"next: copy run files into {root / 'runs'}/, topics into {root / 'topics'}/, judgments (qrels) into "
          f"{root / 'judgments'}/, then `cranfield status {root}`")
    return 0
