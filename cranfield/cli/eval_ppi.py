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
    p.add_argument("--design", choices=["topics", "documents"], default=None,
                   help="with --ci: what people's sample is: topics (every document of a random sample of topics; "
                        "the default) or documents (a sample within every topic drawn with inclusion "
                        "probabilities, as a statAP / uniform / ppi-next pool records them; P.k, dcg, rbp, and "
                        "map, ndcg, Rprec by ratio estimators)")
    p.add_argument("--design-pool", metavar="NAME", default=None,
                   help="with --design documents: the pool whose rows are the frame and whose order > 0 rows "
                        "with their prob are the sample (default: the newest sampled pool)")
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
    design = getattr(args, "design", None) or "topics"
    if design == "documents":
        if args.strata or args.plan_width:
            raise CranfieldError("--design documents: --strata and --plan-width are for the topic design; the "
                                 "next human batch of a document design is `cranfield pool DIR --strategy ppi-next`")
        from engine.judgments.ppi_docs import campaign_design_ppi
        from engine.pooling.ppi_batch import design_pool
        rep = campaign_design_ppi(camp, args.judgments, args.gold or "human", args.measures,
                                  design_pool(camp, args.design_pool), args.ci_alpha, args.ci or "ppi", w,
                                  small_n=not args.ci_normal)
    else:
        if args.design_pool:
            raise CranfieldError("--design-pool goes with --design documents")
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
    from engine.util.names import shown
    n_h, n_t = int(rep.ranking['n_human'].iat[0]), int(rep.ranking['n_topics'].iat[0])
    if design == "documents":
        out.append(f"# {level} intervals of run means: {rep.ranking['method'].iat[0]} from {shown(args.judgments)} "
                   f"on every document of the design's frame and {shown(args.gold or 'human')} on a sample of "
                   f"{n_h} documents in {n_t} topics (Horvitz-Thompson weighted); human_* = human-only HT "
                   f"interval; n_human counts documents")
    else:
        out.append(f"# {level} intervals of run means: {rep.ranking['method'].iat[0]} from {args.judgments} on "
                   f"every topic and {args.gold or 'human'} on {n_h} of {n_t} topics; human_* = human-only interval")
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


# ---------------------------------------------------------------------------- cranfield pool --strategy ppi-next

def add_batch_arguments(p) -> None:
    """The options of `cranfield pool --strategy ppi-next`."""
    p.add_argument("--judgments", metavar="MODEL", default=None,
                   help="with --strategy ppi-next: the model source that labelled the frame")
    p.add_argument("--gold", metavar="SOURCE", default=None,
                   help="with --strategy ppi-next: the people's source (default human)")
    p.add_argument("-m", "--measure", dest="measures", action="append", default=None, metavar="MEASURE",
                   help="with --strategy ppi-next: the measures whose intervals the batch should shrink "
                        "(P.k, dcg, rbp; default the campaign's linear ones)")
    p.add_argument("--design-pool", metavar="NAME", default=None,
                   help="with --strategy ppi-next: the current design (default the newest sampled pool; "
                        "none: the frame is every document the model judged)")


def run_batch(args) -> int:
    """`cranfield pool DIR --strategy ppi-next --budget N --judgments MODEL`: draw and write the batch."""
    from engine.campaign.campaign import load_campaign
    from engine.judgments.sources import source_judgments
    from engine.planning.cost import CostModel, model_from_config
    from engine.planning.ppi_plan import batch_hours
    from engine.pooling import write_pool
    from engine.pooling.ppi_batch import next_batch
    from engine.util.names import shown
    if not args.judgments:
        raise CranfieldError("--strategy ppi-next needs --judgments MODEL: the source that labelled every frame "
                             "document (`cranfield judgments sources DIR` lists them)")
    try:
        budget = int(args.budget) if args.budget is not None else None
    except ValueError:
        raise CranfieldError(f"--strategy ppi-next: --budget {args.budget}: give the number of documents of the "
                             f"batch in all (an integer, e.g. 200)") from None
    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    notes: list[str] = []
    gold = args.gold or "human"
    pool = next_batch(camp, args.judgments, budget, gold, args.measures, args.design_pool, args.seed,
                      warnings=w, notes=notes)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    cost = model_from_config(camp.config.get("cost") if isinstance(camp.config, dict) else None, CostModel())
    seen = source_judgments(camp, gold)["topic"].astype(str)
    new, hours = batch_hours(pool.table, seen, cost)
    t = pool.table
    todo = t["stratum"] == 2
    name = args.name or "ppi-next"
    print(f"pool {shown(name)}: strategy ppi-next, {new} new documents for people in "
          f"{t.loc[todo & (t['order'] > 0), 'topic'].nunique()} topics (inclusion probabilities "
          f"{t.loc[todo, 'prob'].min():.4g}-{t.loc[todo, 'prob'].max():.4g}), {int((~todo).sum())} judged already "
          f"(probability 1); {hours:.2f} assessor hours ({cost.describe()})")
    if args.dry_run:
        return 0
    path = write_pool(camp.root, name, pool)
    print(f"wrote {path}")
    return 0
