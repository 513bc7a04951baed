"""`cranfield ci`: mean of a sampling estimator over topics with its confidence interval, per run."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings

ESTIMATORS = {"infAP": "infAP_var", "statAP": "statAP_var"}


def register(sub) -> None:
    p = sub.add_parser("ci", help="confidence intervals of mean infAP / statAP over topics",
                       description="Per run: mean estimate over topics, its standard error and the normal "
                                   "confidence interval (variance of the mean = sum of per-topic variances / T^2; "
                                   "thesis 3.1.1 and Appendix A). Judgments may be qrels (grade -1 = pooled, "
                                   "unjudged), prels (with inclusion probabilities) or sample_eval files.")
    p.add_argument("files", nargs="*", help="JUDGMENTS RUN [RUN ...]")
    p.add_argument("--campaign", help="use a campaign directory's runs and judgments")
    p.add_argument("-m", "--measure", default="infAP", choices=sorted(ESTIMATORS),
                   help="estimator (default infAP)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--variance", choices=["appendix", "dependent", "linear", "jackknife", "jackknife_bc"],
                   default=None,
                   help="infAP variance (default jackknife_bc: the interval whose coverage of MAP is 90-97%% "
                        "in benchmarks/estimators.py; Appendix A's reaches 70-79%%): thesis Appendix A with "
                        "independent cut-offs (appendix), with its "
                        "covariances, the linearization estimator, the delete-one jackknife (matches the "
                        "observed spread), or jackknife_bc: the jackknife interval centred at mean infAP minus "
                        "its jackknife bias estimate, an interval for MAP (columns bias and centre; the reported "
                        "mean stays trec_eval's infAP; see docs/incomplete-judgments.md)")
    p.add_argument("--format", choices=["text", "csv", "json"], default="text")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.estimators.infap import mean_ci
    from engine.evaluation.evaluate import compute, to_long
    from . import load_inputs

    if not 0 < args.level < 1:
        raise CranfieldError(f"--level must be between 0 and 1 (got {args.level})")
    w = Warnings()
    _, qrels, runs = load_inputs(args, "ci", w)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    var_name = ESTIMATORS[args.measure]
    measures = [args.measure, var_name]
    c = compute(qrels, runs, measures)
    if c.ranked.n_groups == 0:
        raise CranfieldError("no topics with both results and judgments")
    bias = None
    if args.variance is None:
        args.variance = "jackknife_bc" if args.measure == "infAP" else "appendix"
    if args.measure == "infAP" and args.variance == "jackknife_bc":
        import numpy as np
        from engine.planning.estimator_experiments import infap_jackknife
        var, b = infap_jackknife(c.ranked)
        c.values[var_name] = var
        r = c.ranked
        bias = dict(zip(r.run_names, np.bincount(r.g_run, weights=b, minlength=len(r.run_names))
                        / np.maximum(np.bincount(r.g_run, minlength=len(r.run_names)), 1)))
    elif args.measure == "infAP" and args.variance != "appendix":
        from engine.planning.estimator_experiments import VAR_METHODS
        c.values[var_name] = VAR_METHODS[args.variance](c.ranked)
    elif args.variance != "appendix":
        raise CranfieldError(f"--variance {args.variance} applies to infAP only (statAP has its own variance)")
    table = mean_ci(to_long(c), args.measure, var_name, level=args.level)
    if bias is not None:
        bb = table["run"].astype(str).map(bias).to_numpy(float)
        table = table.assign(bias=bb, centre=table["mean"] - bb, lo=table["lo"] - bb, hi=table["hi"] - bb)
    if args.format == "csv":
        from engine.formats.text_tables import format_table
        sys.stdout.write(format_table(table, "csv"))
    elif args.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=1) + "\n")
    else:
        pct = f"{100 * args.level:g}%"
        extra = "  bias" if bias is not None else ""
        print(f"{'run':<20} {'topics':>6} {args.measure:>8} {'se':>8}  {pct} interval{extra}")
        for r in table.itertuples(index=False):
            tail = f"  {r.bias:+.4f}" if bias is not None else ""
            print(f"{str(r.run):<20} {int(r.n_topics):>6} {r.mean:8.4f} {r.se:8.4f}  [{r.lo:.4f}, {r.hi:.4f}]{tail}")
        print(f"({args.measure} variance: {args.variance if args.measure == 'infAP' else 'its own estimator'})")
        exact = [str(r) for r, se in zip(table["run"], table["se"]) if se == 0]
        if exact:
            print(f"note: {len(exact)} run(s) with an interval of zero width ({', '.join(exact[:5])}"
                  f"{', ...' if len(exact) > 5 else ''}): every document they rank within the pool is judged, so "
                  f"nothing is sampled and the estimate has no sampling error")
    return 0
