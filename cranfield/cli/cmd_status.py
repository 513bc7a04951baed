"""`cranfield status DIR`: runs, topics, judged counts and how much of each run's top 10/100 is judged."""
from __future__ import annotations

import sys

from engine.errors import Warnings
from engine.util.names import natural_key


def register(sub) -> None:
    p = sub.add_parser("status", help="show a campaign's runs, topics and judging progress",
                       description="Print the campaign's runs (with the fraction of each run's top 10 and "
                                   "top 100 documents that is judged), its topics with judged and relevant "
                                   "counts, and totals. Rich tables on a terminal, plain text otherwise.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    p.set_defaults(func=run)


def status_tables(camp) -> dict:
    """The tables `cranfield status` prints: summary (list of (label, value)), runs, topics, totals."""
    from engine.campaign.status import judged_at_depth, judgment_counts

    runs = camp.runs()
    qrels = camp.qrels()
    topics = camp.topics()
    meta = camp.run_meta()
    thr = camp.binary_threshold()
    rt = judged_at_depth(runs, qrels, (10, 100))
    run_table = meta[["run", "group", "type", "pooled"]].merge(rt, on="run", how="left")
    topic_ids = sorted(set(topics["topic"].astype(str)) | set(runs["topic"].astype(str).unique())
                       | set(qrels["topic"].astype(str).unique()), key=natural_key)
    per = judgment_counts(qrels, thr, topic_ids, sorted(camp.scale()))
    titles = dict(zip(topics["topic"].astype(str), topics["title"].astype(str)))
    cats, targets = camp.categories(), camp.targets()
    per.insert(1, "title", [titles.get(t, "") for t in per["topic"]])
    if cats:
        per.insert(2, "category", [cats.get(t, "") for t in per["topic"]])
    if targets:
        per["target"] = [targets.get(t, "") for t in per["topic"]]
    per["runs"] = (per["topic"].map(runs.groupby("topic")["run"].nunique()).fillna(0).astype(int)
                   if len(runs) else 0)
    if "unjudged" in per and not per["unjudged"].any():
        per = per.drop(columns="unjudged")     # no pooled-but-unjudged marks (grade -1) in the judgments: say nothing
    num = [c for c in per.columns if c == "judged" or c == "relevant" or c.startswith("grade ") or c == "unjudged"]
    totals = {c: int(per[c].sum()) for c in num}
    log = camp.log()
    summary = [
        ("campaign", f"{camp.name} ({camp.root})"),
        ("runs", f"{len(meta)} ({meta['group'].nunique()} groups, {int((meta['type'] == 'manual').sum())} manual, "
                 f"{int(meta['pooled'].sum())} pooled)" if len(meta) else "0"),
        ("topics", f"{len(topics)} in topics/" + (f", {len(topic_ids)} in runs or judgments"
                                                  if len(topic_ids) != len(topics) else "")),
        ("judgments", f"{totals.get('judged', 0)} judged, {totals.get('relevant', 0)} relevant (grade >= {thr})"
                      + (f", {totals['unjudged']} pooled but not judged" if totals.get("unjudged") else "")),
        ("topics judged", f"{int((per['judged'] > 0).sum())} of {len(per)}"),
        ("assessor log", "none" if log is None else f"{len(log)} entries"),
    ]
    from engine.errors import CranfieldError
    from engine.nuggets.campaign import answer_runs
    try:
        answers = answer_runs(camp.root, camp.warnings)
    except CranfieldError as exc:               # a broken answer file: said, the rest of the status still shown
        answers = None
        summary.insert(2, ("answer runs", f"unreadable: {exc}"))
    if answers is not None and len(answers):
        summary.insert(2, ("answer runs", f"{len(answers)} in answers/ (nugget scores: cranfield nuggets scores)"))
    pool = None
    from engine.judging.progress import judging_progress
    prog = judging_progress(camp)             # the one count of progress against the newest pool
    if prog.pool is not None:                 # progress against the pool being judged, not against all runs
        pool = prog.topics
        summary.append(("active pool", f"{prog.pool}: {prog.judged} of {prog.pooled} judged, {prog.left} left"))
        left = dict(zip(pool["topic"], pool["left"]))
        per["pool left"] = [int(left.get(t, 0)) for t in per["topic"]]
        totals["pool left"] = prog.left
    return {"summary": summary, "runs": run_table, "topics": per, "totals": totals, "pool": pool,
            "answers": answers if answers is not None and len(answers) else None}


def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.3f}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _plain(title: str, headers: list[str], rows: list[list[str]], out) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    out.write(f"{title}\n")
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip() + "\n")
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    out.write("\n")


def render(tables: dict, out=None, rich: bool | None = None) -> None:
    """Print the status tables: rich on a terminal, plain aligned text otherwise."""
    out = out or sys.stdout
    rich = out.isatty() if rich is None else rich
    runs, per, totals = tables["runs"], tables["topics"], tables["totals"]
    run_rows = [[_fmt(v) for v in r] for r in runs.itertuples(index=False, name=None)]
    topic_rows = [[_fmt(v) for v in r] for r in per.itertuples(index=False, name=None)]
    total_row = ["total"] + ["" for _ in per.columns[1:]]
    for i, c in enumerate(per.columns):
        if c in totals:
            total_row[i] = str(totals[c])
    if not rich:
        for k, v in tables["summary"]:
            out.write(f"{k + ':':<15}{v}\n")
        out.write("\n")
        _plain("Runs (judged@k: fraction of the run's top k documents that is judged)", list(runs.columns),
               run_rows, out)
        if tables.get("answers") is not None:
            a = tables["answers"]
            _plain("Answer runs (answers/)", list(a.columns), [[_fmt(v) for v in r] for r in a.itertuples(
                index=False, name=None)], out)
        _plain("Topics", list(per.columns), topic_rows + [total_row], out)
        return
    from rich.console import Console
    from rich.table import Table

    con = Console(file=out)
    for k, v in tables["summary"]:
        con.print(f"[bold]{k}:[/bold] {v}", highlight=False)
    short = {"judged@10": "@10", "judged@100": "@100", "retrieved": "docs", "unjudged": "unj.", "relevant": "rel.",
             "category": "cat."}
    rt = Table(title="Runs — @k: fraction of the run's top k documents that is judged", title_justify="left")
    for c in runs.columns:
        num = c.startswith("judged") or c in ("topics", "retrieved")
        rt.add_column(short.get(c, str(c)), justify="right" if num else "left", no_wrap=True,
                      max_width=None if num else 18, overflow="ellipsis")
    for r in run_rows:
        rt.add_row(*r)
    con.print(rt)
    if tables.get("answers") is not None:
        at = Table(title="Answer runs (answers/)", title_justify="left")
        for c in tables["answers"].columns:
            at.add_column(str(c), justify="right" if c == "topics" else "left", no_wrap=True, max_width=30,
                          overflow="ellipsis")
        for r in tables["answers"].itertuples(index=False, name=None):
            at.add_row(*[_fmt(v) for v in r])
        con.print(at)
    tt = Table(title="Topics", title_justify="left", show_footer=True)
    heads = [short.get(c, c.replace("grade ", "g")) for c in per.columns]
    widths = [max([len(h), len(total_row[i])] + [len(r[i]) for r in topic_rows]) for i, h in enumerate(heads)]
    squeeze = [i for i, c in enumerate(per.columns) if c in ("title", "category")]
    fixed = sum(w for i, w in enumerate(widths) if i not in squeeze) + 3 * len(widths) + 1
    room = max(8 * len(squeeze), con.width - fixed)
    for i in squeeze:  # the text columns share what is left of the terminal width
        widths[i] = max(5, min(widths[i], room // max(1, len(squeeze))))
    for i, c in enumerate(per.columns):
        num = c in totals or c in ("runs", "target")
        tt.add_column(heads[i], footer=total_row[i], justify="right" if num else "left", no_wrap=True,
                      width=widths[i], overflow="ellipsis")
    for r in topic_rows:
        tt.add_row(*r)
    con.print(tt)


def run(args) -> int:
    from engine.campaign.campaign import load_campaign

    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    tables = status_tables(camp)
    render(tables, sys.stdout, rich=False if args.plain else None)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    return 0
