"""`cranfield submit`: validate runs against a campaign and accept them into runs/."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("submit", help="validate and accept run submissions into a campaign",
                       description="Check each run (format, topics, depth, ranks and scores, duplicates, collection "
                                   "ids, tag, group limit, deadline). All pass: copied into runs/ and recorded in "
                                   "campaign.yaml. Any fails: every problem as file:line, nothing copied.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("files", nargs="+", help="run file(s)")
    p.add_argument("--group", default=None, help="submitting group (default: the run tag)")
    p.add_argument("--manual", action="store_true", help="manual run (default automatic)")
    p.add_argument("--priority", type=int, default=None, help="pooling priority (1 = pooled first)")
    p.add_argument("--override-deadline", action="store_true", help="accept a run after submission.deadline")
    p.add_argument("--check", action="store_true", help="only check; copy nothing")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.campaign.intake import submit

    res = submit(args.campaign, args.files, group=args.group, manual=args.manual, priority=args.priority,
                 override_deadline=args.override_deadline, dry_run=args.check)
    for s in res:
        verb = "ok" if args.check else "accepted"
        print(f"{verb}: {s.path} -> run {s.tag} ({s.lines} lines, {s.topics} topics, sha256 {s.checksum[:12]})")
        for h in s.header:
            print(f"  header: {h}")
        for n in s.notes:
            print(f"  note: {n}")
    return 0
