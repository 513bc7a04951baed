"""`cranfield eval --campaign DIR --judgments MODEL --gold human --ci ppi`: prediction-powered intervals of
run means, pairwise differences and the ranking, and (`--plan-width W`) how many human-judged topics
buy an interval of width W. The arithmetic is engine.stability.ppi; the campaign glue
engine.judgments.ppi; pricing engine.planning.ppi_plan."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings

TABLES = ("runs", "pairs", "ranking", "plan")


def add_arguments(p) -> None:
    """The PPI options of `cranfield eval`."""
    p.add_argument("--ci", choices=["ppi", "ppi-classic"], default=None,
                   help="with --campaign: intervals that combine a model source judging every topic (--judgments) "
                        "with a human sample (--gold): ppi = PPI++ with power tuning, ppi-classic = lambda 1; a "
                        "human-only interval is printed beside (docs/llm-judges.md)")
    p.add_argument("--gold", metavar="SOURCE", default=None,
                   help="with --ci: the source people judged on a random sample of topics (default human)")
    p.add_argument("--ci-alpha", type=float, default=0.05, help="with --ci: error level (default 0.05: 95%% intervals)")
    p.add_argument("--ci-normal", action="store_true",
                   help="with --ci: ppi-python's normal form (ddof 0, z quantile) instead of the small-sample "
                        "form (ddof 1, Student's t; the default)")
    p.add_argument("--strata", choices=["category"], default=None,
                   help="with --ci: stratified PPI over campaign.yaml's topic categories")
    p.add_argument("--plan-width", type=float, action="append", default=None, metavar="W",
                   help="with --ci: how many human-judged topics give intervals at most W wide, and their "
                        "assessor hours (repeatable)")
    p.add_argument("--plan-topics", type=int, default=None, metavar="T",
                   help="with --plan-width: the topics the model judges in the plan (default: the campaign's)")
    p.add_argument("--ci-table", choices=list(TABLES), default=None,
                   help="with --ci and --format csv/tsv/json: which table to write (default runs)")


def run_ppi(args) -> int:
    """Print the PPI tables of a campaign."""
    if not args.campaign:
        raise CranfieldError("--ci needs --campaign DIR (a model source and a human sample of a campaign)")
    if not args.judgments:
        raise CranfieldError("--ci needs --judgments MODEL: the source that judged every topic (e.g. an LLM); "
                             "`cranfield judgments sources DIR` lists them")
    if "+" in args.judgments or args.judgments.startswith("majority:") or args.judgments == "campaign":
        raise CranfieldError(f"--judgments {args.judgments}: with --ci name one source (the model), not a combination")
    from engine.campaign.campaign import load_campaign
    from engine.formats.text_tables import format_table
    from engine.judgments.ppi import campaign_ppi
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    rep = campaign_ppi(camp, args.judgments, args.gold or "human", args.measures, args.ci_alpha,
                       args.ci or "ppi", args.strata, w, small_n=not args.ci_normal)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    for n in rep.notes:
        print(f"note: {n}", file=sys.stderr)
    plan = _plan(camp, rep, args) if args.plan_width else None
    fmt = "text" if args.format == "trec" else args.format
    if fmt in ("csv", "tsv", "json"):
        which = args.ci_table or ("plan" if plan is not None and not args.ci else "runs")
        table = {"runs": rep.runs, "pairs": rep.pairs, "ranking": rep.ranking, "plan": plan}[which]
        if table is None:
            raise CranfieldError("--ci-table plan needs --plan-width W")
        sys.stdout.write(format_table(table, fmt, ".6f"))
        return 0
    out = []
    level = f"{100 * (1 - args.ci_alpha):g}%"
    out.append(f"# {level} intervals of run means: {rep.ranking['method'].iat[0]} from {args.judgments} on every "
               f"topic and {args.gold or 'human'} on {int(rep.ranking['n_human'].iat[0])} of "
               f"{int(rep.ranking['n_topics'].iat[0])} topics; human_* = human-only interval")
    out.append(format_table(rep.runs, fmt, ".4f"))
    adj = _adjacent(rep)
    out.append(f"# adjacent pairs of the PPI ranking (difference run_a - run_b; resolved = the {level} interval "
               f"excludes 0; every pair: --format csv --ci-table pairs)")
    out.append(format_table(adj, fmt, ".4f"))
    out.append("# ranking: pairs resolved at alpha " + f"{args.ci_alpha:g}")
    out.append(format_table(rep.ranking, fmt, ".4f"))
    if plan is not None:
        out.append("# planning: human-judged topics for intervals at most `width` wide (every run / pair; "
                   "median column beside), assessor hours from the cost model")
        out.append(format_table(plan, fmt, ".3f"))
    sys.stdout.write("\n".join(s.rstrip("\n") for s in out) + "\n")
    return 0


def _adjacent(rep):
    """The pairs of runs next to each other in each measure's PPI ranking."""
    from itertools import pairwise

    import pandas as pd
    rows = []
    for m, g in rep.runs.groupby("measure", sort=False):
        names = g["run"].tolist()
        pairs = rep.pairs[rep.pairs["measure"] == m].set_index(["run_a", "run_b"])
        for a, b in pairwise(names):
            if (a, b) in pairs.index:
                r = pairs.loc[(a, b)]
                rows.append({"measure": m, "run_a": a, "run_b": b, "difference": r["difference"],
                             "lower": r["lower"], "upper": r["upper"], "resolved": bool(r["resolved"]),
                             "human_resolved": bool(r["human_resolved"]), "flag": r["flag"]})
            else:
                r = pairs.loc[(b, a)]
                rows.append({"measure": m, "run_a": a, "run_b": b, "difference": -r["difference"],
                             "lower": -r["upper"], "upper": -r["lower"], "resolved": bool(r["resolved"]),
                             "human_resolved": bool(r["human_resolved"]), "flag": r["flag"]})
    return pd.DataFrame(rows)


def _plan(camp, rep, args):
    """The planning table for --plan-width."""
    from engine.judgments.ppi import pilot
    from engine.judgments.sources import source_judgments
    from engine.planning.cost import CostModel, model_from_config
    from engine.planning.ppi_plan import plan_rows
    if any(w <= 0 for w in args.plan_width):
        raise CranfieldError(f"--plan-width {min(args.plan_width)}: a width must be > 0 (e.g. 0.05)")
    cost = model_from_config(camp.config.get("cost"), CostModel())
    q = source_judgments(camp, args.judgments)
    per_topic = float(q.groupby("topic").size().mean()) if len(q) else 0.0
    from dataclasses import replace
    T = args.plan_topics
    if T is not None and T < 3:
        raise CranfieldError(f"--plan-topics {T}: at least 3 topics")
    pilots = {}
    for tv in rep.values:
        pilots[(tv.measure, "run means")] = pilot(tv)
        if len(tv.runs) > 1:
            pilots[(tv.measure, "differences")] = pilot(tv, pairs=True)
    if T is not None:
        pilots = {k: replace(p, topics=T) for k, p in pilots.items()}
    t = plan_rows(pilots, args.plan_width, args.ci_alpha, cost, per_topic, tuned=(args.ci or "ppi") == "ppi",
                  small_n=not args.ci_normal)
    t.insert(4, "judgments_per_topic", round(per_topic, 1))
    return t
