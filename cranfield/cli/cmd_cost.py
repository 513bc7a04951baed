"""`cranfield cost`: assessor-time estimates and the cheapest reliable design (kanoulas thesis 3.2.5.2)."""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError, Warnings


def register(sub) -> None:
    p = sub.add_parser(
        "cost", help="assessor hours of judging efforts and designs; cheapest design for a target",
        description="Estimate assessor hours with the cost model of kanoulas thesis 3.2.5.2 (Table 3.4 "
                    "medians by default). Modes: --judgments FILE (hours of an existing judgment set, per "
                    "target class); --queries Q --per-query J (hours of a design); --campaign DIR --plan "
                    "(hours versus stability for Q x j designs, and the cheapest design reaching a target).")
    p.add_argument("--judgments", help="a qrels or prels file: estimate the hours its judging took")
    p.add_argument("--campaign", help="campaign directory (cost overrides, categories, targets, judging log)")
    p.add_argument("--queries", type=int, help="number of queries of a design")
    p.add_argument("--per-query", type=int, dest="per_query", help="judgments per query of a design")
    p.add_argument("--mix", help="category shares, e.g. short=0.25,long=0.75")
    p.add_argument("--average-times", action="store_true",
                   help="use the average per-judgment time for every target (as thesis Figure 3.14)")
    p.add_argument("--fit-log", action="store_true", help="fit judgment times from the campaign's judging log")
    p.add_argument("--plan", action="store_true", help="run the planner on the campaign's runs and judgments")
    p.add_argument("--measure", default="map", help="measure whose ranking must be stable (default map)")
    p.add_argument("--js", default="8,16,32,64,128", help="judgments-per-query values to consider")
    p.add_argument("--target-tau", type=float, default=0.9, dest="target_tau")
    p.add_argument("--target-phi", type=float, default=0.95, dest="target_phi")
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--selection", choices=["depth", "random"], default="depth",
                   help="which judged documents a smaller budget keeps (default: pool depth order)")
    p.add_argument("--method", choices=["bootstrap", "subsample"], default="bootstrap",
                   help="topic draws: with replacement after shrinkage (default) or distinct topics (thesis)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mixes", action="store_true",
                   help="with --plan: tau and hours when each query category is sampled at 25/50/75%% "
                        "(thesis Figure 3.15)")
    p.add_argument("--mix-queries", type=int, default=40, dest="mix_queries",
                   help="queries per design for --mixes (default 40)")
    p.add_argument("--mix-judgments", type=int, default=32, dest="mix_judgments",
                   help="judgments per query for --mixes (default 32)")
    p.add_argument("--plot", action="store_true", help="draw hours versus judgments per query in the terminal")
    p.add_argument("--format", choices=["text", "markdown", "csv", "tsv", "latex", "json"], default="text")
    p.set_defaults(func=run)


def _parse_mix(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    out = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        try:
            out[k.strip()] = float(v)
        except ValueError:
            raise CranfieldError(f"--mix: {part!r} is not category=share (e.g. short=0.25,long=0.75)") from None
        if not sep or out[k.strip()] < 0:
            raise CranfieldError(f"--mix: {part!r} is not category=share with a share >= 0")
    return out


def run(args) -> int:
    from engine.planning.cost import CostModel, effort_by_target, judging_effort, model_from_config
    from engine.formats.text_tables import format_table

    w = Warnings()
    camp = None
    model = CostModel(by_target=not args.average_times)
    categories = targets = None
    if args.campaign:
        from engine.campaign.campaign import load_campaign
        camp = load_campaign(args.campaign, warnings=w)
        model = model_from_config(camp.config.get("cost"), model)
        categories = camp.categories() if hasattr(camp, "categories") else None
        targets = camp.targets() if hasattr(camp, "targets") else None
        if args.fit_log:
            from engine.planning.cost import fit_from_log
            log_path = Path(args.campaign) / "judgments" / "log.jsonl"
            if not log_path.exists():
                raise CranfieldError(f"{log_path}: no judging log to fit times from (judge some documents first)")
            from engine.campaign.campaign import read_judgment_log
            log = read_judgment_log(log_path, w)
            model, fitted = fit_from_log(log, categories, targets, base=model)
            print("Fitted judgment times (median seconds):")
            print(format_table(fitted, args.format, ".1f"))
    out = sys.stdout
    did = False
    if args.judgments:
        from engine.formats.detect import read_judgments
        j = read_judgments(args.judgments, w)
        eff = judging_effort(j, model, categories, targets)
        table = effort_by_target(eff)
        out.write(f"Estimated assessor time for {args.judgments} ({model.describe()}; category "
                  f"{model.default!r} where unknown)\n")
        out.write(format_table(table, args.format, ".2f"))
        did = True
    if args.queries is not None or args.per_query is not None:
        if args.queries is None or args.per_query is None:
            raise CranfieldError("a design needs both --queries and --per-query")
        for opt, v in (("--queries", args.queries), ("--per-query", args.per_query)):
            if v < 1:
                raise CranfieldError(f"{opt} {v}: give a count of 1 or more")
        mix = _parse_mix(args.mix)
        h = model.design_hours(args.queries, args.per_query, mix)
        per = model.design_seconds(1, args.per_query, mix)
        out.write(f"{args.queries} queries x {args.per_query} judgments: {h:.2f} assessor hours "
                  f"({per:.1f} s per query; {model.describe()})\n")
        did = True
    if args.plan:
        if camp is None:
            raise CranfieldError("--plan needs --campaign DIR (runs and judgments to subsample)")
        from engine.planning.planner import plan
        js = [int(x) for x in args.js.split(",") if x.strip()]

        from .progress import bar_context, progress_bar
        with bar_context(progress_bar("cost --plan")) as progress:
            res = plan(camp.qrels(), camp.runs(), measure=args.measure, js=js, trials=args.trials,
                       selection=args.selection, seed=args.seed, model=model, target_tau=args.target_tau,
                       target_phi=args.target_phi, method=args.method, progress=progress)
        out.write(f"Designs reaching tau >= {args.target_tau} (expected, and with 95% probability) and "
                  f"Phi >= {args.target_phi}, measure {args.measure}, {res.n_topics} topics available:\n")
        out.write(format_table(res.designs, args.format, ".2f"))
        qmax = max(int(c.qs.max()) for c in res.curves)
        out.write(f"(blank: the target is not reached with up to {qmax} queries at that j)\n")
        for line in res.availability_lines():
            out.write(line + "\n")
        for crit, label in (("tau_mean", "expected tau"), ("tau_p95", "tau with 95% probability"), ("phi", "Phi")):
            try:
                best = res.cheapest(crit)
                hcol = {"tau_mean": "hours_tau_mean", "tau_p95": "hours_tau_p95", "phi": "hours_phi"}[crit]
                qcol = {"tau_mean": "queries_tau_mean", "tau_p95": "queries_tau_p95", "phi": "queries_phi"}[crit]
                out.write(f"cheapest for {label}: {best[qcol]:.0f} queries x {int(best['j'])} judgments = "
                          f"{best[hcol]:.1f} hours\n")
            except CranfieldError as exc:
                out.write(f"cheapest for {label}: {exc}\n")
        if args.plot:
            out.write(_plot(res.designs) + "\n")
        if args.mixes:
            from engine.planning.planner import category_mixes
            if not categories:
                raise CranfieldError("--mixes needs query categories (topics.categories in campaign.yaml)")
            mixes = category_mixes(camp.qrels(), camp.runs(), categories, measure=args.measure,
                                   j=args.mix_judgments, q=args.mix_queries, trials=args.trials,
                                   model=model, seed=args.seed, selection=args.selection)
            out.write(f"Category mixes ({args.mix_queries} queries x {args.mix_judgments} judgments; share = "
                      f"fraction of queries drawn from the category):\n")
            out.write(format_table(mixes, args.format, ".3f"))
            ok = mixes.dropna(subset=["tau_mean"])
            if not ok.empty:
                b = ok.loc[ok["tau_mean"].idxmax()]
                out.write(f"most stable mix: {b['share']:.0%} {b['category']} (tau {b['tau_mean']:.3f}, "
                          f"{b['hours']:.1f} hours)\n")
        did = True
    if not did:
        raise CranfieldError("say what to estimate: --judgments FILE, --queries Q --per-query J, "
                             "or --campaign DIR --plan")
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    return 0


def _plot(designs) -> str:
    import plotext as plt
    plt.clear_figure()
    plt.plot_size(70, 18)
    d = designs.dropna(subset=["hours_tau_mean"])
    if not d.empty:
        plt.plot(d["j"].astype(float).tolist(), d["hours_tau_mean"].tolist(), label="expected tau", marker="dot")
    d2 = designs.dropna(subset=["hours_tau_p95"])
    if not d2.empty:
        plt.plot(d2["j"].astype(float).tolist(), d2["hours_tau_p95"].tolist(), label="tau, 95% prob.", marker="dot")
    plt.xscale("log")
    plt.xlabel("judgments per query")
    plt.ylabel("assessor hours")
    plt.theme("clear")
    text = plt.build()
    import os
    if os.environ.get("NO_COLOR") or not sys.stdout.isatty():
        text = plt.uncolorize(text)
    return text
