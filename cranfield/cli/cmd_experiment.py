"""`cranfield experiment pools`: pool strategies at equal budgets against complete truth."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings


def register(sub) -> None:
    from engine.util.names import DEFAULT_DESIGNS, DESIGNS
    p = sub.add_parser("experiment", help="experiments on simulated campaigns (pool strategies vs truth)")
    esub = p.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    e = esub.add_parser("pools", help="pool strategies at equal judging budgets: RMSE, Kendall tau, "
                                      "Pearson rho of estimated MAP against the truth",
                        description="Build each design's pool at the same per-topic budget, reveal only the "
                                    "selected judgments from the truth, estimate every run's MAP with the "
                                    "matching estimator and compare with the true MAP (depth-d pool of the "
                                    "contributing runs, judged from the truth). Designs: "
                                    + ", ".join(DESIGNS))
    e.add_argument("--campaign", help="a simulated campaign directory (needs truth/); default: simulate one")
    e.add_argument("--runs", type=int, default=30, help="simulated runs (default 30)")
    e.add_argument("--topics", type=int, default=50, help="simulated topics (default 50)")
    e.add_argument("--sim-seed", type=int, default=7)
    e.add_argument("--budget", default="5%", help="per-topic budget: N, fraction or percentage of the pool")
    e.add_argument("--depth", type=int, default=100)
    e.add_argument("--designs", default=",".join(DEFAULT_DESIGNS), help="comma-separated designs")
    e.add_argument("--trials", type=int, default=5)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--truth", choices=["pool", "complete"], default="pool",
                   help="true scores against the depth-d pool judged from the truth (thesis) or all truth")
    e.add_argument("--format", choices=["text", "markdown", "csv"], default="text")
    e.set_defaults(func=run_pools)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_pools(args) -> int:
    from engine.planning.pool_experiments import pool_experiment, simulated_pool_experiment
    from engine.pooling import parse_budget

    designs = tuple(d.strip() for d in args.designs.split(",") if d.strip())
    budget = parse_budget(args.budget)
    kw = dict(budget=budget, depth=args.depth, designs=designs, trials=args.trials, seed=args.seed,
              truth_scope=args.truth)
    if args.campaign:
        from engine.campaign.campaign import load_campaign
        w = Warnings()
        camp = load_campaign(args.campaign, warnings=w)
        truth = camp.truth_qrels()
        if truth is None:
            raise CranfieldError(f"{args.campaign}: no truth/qrels.txt; the pool experiment needs complete "
                                 f"truth (create one with `cranfield simulate`)")
        meta = camp.run_meta()
        pooled = meta.loc[meta["pooled"].astype(bool), "run"].astype(str).tolist() if meta is not None else []
        res = pool_experiment(camp.runs(), truth, pooled, **kw)
        for item in w:
            print(f"warning: {item}", file=sys.stderr)
    else:
        res = simulated_pool_experiment(n_runs=args.runs, n_topics=args.topics, sim_seed=args.sim_seed, **kw)
    t = res.summary[["design", "systems", "judged", "judged_share", "rmse", "tau", "rho"]].copy()
    pr = res.params
    head = (f"pool experiment: {pr['runs']} runs ({pr['contributing']} contributing), {pr['topics']} topics, "
            f"depth-{pr['depth']} pool {pr['pool_size']} documents, budget {args.budget} per topic, "
            f"{pr['trials']} trials (mean), seed {pr['seed']}, truth = {pr['truth_scope']}")
    out = sys.stdout
    from engine.formats.text_tables import format_table
    if args.format == "csv":
        out.write(format_table(t, "csv"))
        return 0
    if args.format == "markdown":
        out.write(head + "\n\n" + format_table(t, "markdown", ".4f"))
        return 0
    fmt = {c: "{:.4f}".format for c in ("rmse", "tau", "rho", "judged_share")}
    fmt["judged"] = "{:.0f}".format
    out.write(head + "\n" + t.to_string(index=False, formatters=fmt) + "\n")
    return 0
