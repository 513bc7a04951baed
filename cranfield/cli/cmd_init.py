"""`cranfield init DIR`: create a campaign skeleton (campaign.yaml with commented defaults, runs/,
topics/, judgments/). Never overwrites an existing campaign.yaml."""
from __future__ import annotations

from pathlib import Path

from engine.errors import CranfieldError

TEMPLATE = """\
# Cranfield campaign configuration (format: docs/campaign-format.md).
# Put run files in runs/, topics in topics/ and imported judgments in judgments/;
# assessors' judgments are appended to judgments/log.jsonl.

name: {name}                      # required
description: ""

relevance:
  scale:                          # grade -> label and gain (the gain is used by nDCG)
    0: {{label: not relevant, gain: 0}}
    1: {{label: relevant, gain: 1}}
    2: {{label: highly relevant, gain: 2}}
  binary_threshold: 1             # grade >= threshold counts as relevant (trec_eval -l)

evaluation:
  depth: 1000                     # documents per topic evaluated (trec_eval -M)
  measures: [map, P.10, ndcg_cut.10, bpref]   # shown by default

judgments:
  conflict_rule: last             # last | max | majority: how repeated judgments of a document resolve

runs: {{}}                          # metadata per run tag; runs in runs/ without an entry are allowed
#  MYRUN1:
#    group: mygroup
#    type: automatic               # automatic | manual
#    pooled: true                  # contributed to the pool
#    file: runs/MYRUN1.txt         # optional; default: the file whose lines carry this tag

topics:
  categories: {{}}                  # optional: topic id -> query category, e.g. {{801: short}}
  targets: {{}}                     # optional: topic id -> number of judgments planned, e.g. {{801: 32}}
"""

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
    title = name or root.resolve().name or "My campaign"
    root.mkdir(parents=True, exist_ok=True)
    for f in FOLDERS:
        (root / f).mkdir(exist_ok=True)
    gi = root / ".gitignore"
    if not gi.exists():
        gi.write_text(".cranfield-cache/\n")
    import json
    with open(cfg, "x", encoding="utf-8") as fh:   # "x": never clobber a file created meanwhile
        fh.write(TEMPLATE.format(name=json.dumps(title, ensure_ascii=False)))
    return cfg


def run(args) -> int:
    cfg = init_campaign(args.directory, args.name)
    root = cfg.parent
    print(f"created {cfg}")
    print(f"next: copy run files into {root / 'runs'}/, topics into {root / 'topics'}/, judgments (qrels) into "
          f"{root / 'judgments'}/, then `cranfield status {root}`")
    return 0
