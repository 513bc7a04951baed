"""`cranfield stability ...`: G/D-studies, stratified designs, judgment reduction, pool bias,
discriminative power, significance tests and stability-optimal nDCG."""
from __future__ import annotations

import json
import math
import sys

from engine.errors import CranfieldError, FormatError, Problem


def _progress(args, label: str):
    """The progress bar of a long analysis (None when stderr is not a terminal, or with --quiet)."""
    from .progress import progress_bar
    return progress_bar(label, getattr(args, "quiet", False))


def _bar(args, label: str):
    """`_progress` as a context that ends the bar's line (yields None off a terminal)."""
    from .progress import bar_context
    return bar_context(_progress(args, label))


def _add_source(p, multi: bool = False) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", help="score matrix CSV: topics as rows, systems as columns "
                                   "(an optional first column of topic ids)")
    src.add_argument("--campaign", help="campaign directory (scores of --measure for its runs)")
    if multi:
        p.add_argument("-m", "--measure", action="append", dest="measures",
                       help="measure (repeatable); default: the campaign's evaluation.measures")
    else:
        p.add_argument("-m", "--measure", default="map", help="measure for --campaign (default map)")


def _add_out(p) -> None:
    p.add_argument("--json", action="store_true", help="JSON output")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def read_csv_matrix(path: str):
    """Topics x systems matrix from a CSV (first column kept as topic ids when it is not numeric)."""
    import pandas as pd

    from engine.util import fs
    try:
        with fs.open(path, "rb") as fh:
            df = pd.read_csv(fh)
    except FileNotFoundError:
        raise CranfieldError(f"{path}: no such file") from None
    except Exception as exc:  # pandas parser errors
        raise FormatError(Problem(path, None, f"not a readable CSV ({exc})")) from None
    if df.shape[1] < 2 or len(df) < 2:
        raise FormatError(Problem(path, None, "a score matrix needs at least 2 topics (rows) and 2 systems (columns)"))
    first = df.columns[0]
    if not pd.api.types.is_numeric_dtype(df[first]) or str(first).lower() in ("topic", "query", "qid", ""):
        df = df.set_index(first)
        df.index = df.index.astype(str)
    for c in df.columns:
        bad = pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise FormatError(Problem(path, i + 2, f"column {c!r}: {df[c].iloc[i]!r} is not a number"))
        if df[c].isna().any():
            i = int(df[c].isna().to_numpy().argmax())
            raise FormatError(Problem(path, i + 2, f"column {c!r}: missing score"),
                              hint="every topic needs a score for every system")
    df.columns = [str(c) for c in df.columns]
    return df.astype(float)


def _campaign(path: str):
    from engine.campaign.campaign import load_campaign
    from engine.errors import Warnings
    w = Warnings()
    camp = load_campaign(path, warnings=w)
    return camp, w


def matrix_from_args(args, measure: str | None = None, progress=None):
    """Score matrix (topics x runs) from --csv or --campaign/--measure."""
    if args.csv:
        return read_csv_matrix(args.csv)
    from engine.stability import score_matrix
    camp, w = _campaign(args.campaign)
    measure = measure or args.measure
    if progress:
        progress(0.0, f"evaluating {measure} for the campaign's runs")
    df = camp.evaluate([measure], complete=True)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    name = str(df["measure"].iloc[0]) if len(df) else measure
    return score_matrix(df, name)


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if hasattr(v, "item"):
        return _clean(v.item())
    return v


def _emit_table(df, args, title: str | None = None) -> None:
    if args.json:
        print(json.dumps(_clean(df.to_dict(orient="records")), indent=1))
        return
    if title:
        print(title)
    print(fit_columns(df))


def fit_columns(df, width: int | None = None) -> str:
    """The table as text within the terminal's width ($COLUMNS, else 100): wider tables come in blocks of
    columns, each led by the first column (the row's name), one block under the other."""
    import shutil
    fmt = dict(index=False, float_format=lambda x: f"{x:.4f}")
    width = width or shutil.get_terminal_size((100, 24)).columns
    text = df.to_string(**fmt)
    if len(df.columns) < 3 or max((len(ln) for ln in text.splitlines()), default=0) <= width:
        return text
    cols = list(df.columns)
    need = {c: max(len(ln) for ln in df[[c]].to_string(**fmt).splitlines()) + 2 for c in cols}
    blocks, cur, used = [], [], need[cols[0]]
    for c in cols[1:]:
        if cur and used + need[c] > width:
            blocks.append(cur)
            cur, used = [], need[cols[0]]
        cur.append(c)
        used += need[c]
    blocks.append(cur)
    return "\n\n".join(df[[cols[0], *b]].to_string(**fmt) for b in blocks)


def register(sub) -> None:
    p = sub.add_parser("stability", help="stability analyses: G-study, reduction, pool bias, significance",
                       description="Variance components and generalizability theory, judgment-reduction and "
                                   "pool-bias experiments, discriminative power and significance tests.")
    ss = p.add_subparsers(dest="stability_command", metavar="ANALYSIS")

    g = ss.add_parser("gstudy", help="G-study and D-study (E rho^2, Phi, topics needed)",
                      description="Two-way ANOVA variance components of a topics x systems score matrix, "
                                  "E rho^2 and Phi with confidence intervals and the topics needed for a target.")
    _add_source(g)
    g.add_argument("--alpha", type=float, default=0.05,
                   help="two-sided error level of the intervals (0.05 = 95%%; 0.2 = 80%%, 0.1 per side)")
    g.add_argument("--drop-lowest", type=float, default=0.0, metavar="FRACTION",
                   help="drop this fraction of the lowest-scoring systems first")
    g.add_argument("--topics", type=int, help="topics for the D-study (default: as many as the data)")
    g.add_argument("--target", type=float, default=0.95, help="target stability for the topics needed (0.95)")
    _add_out(g)
    g.set_defaults(func=run_gstudy)

    st = ss.add_parser("stratified", help="wMAP over query categories and the multivariate G-study",
                       description="Weighted means over the campaign's topic categories and the stability "
                                   "of the composite as the share of one category varies (thesis Fig. 3.13).")
    st.add_argument("--campaign", required=True)
    st.add_argument("-m", "--measure", default="map")
    st.add_argument("--category", help="category whose share varies (default: the first)")
    st.add_argument("--total", type=int, default=64, help="topics in the sample (64)")
    _add_out(st)
    st.set_defaults(func=run_stratified)

    r = ss.add_parser("reduction", help="judgment reduction experiment (Buckley-Voorhees / uniform removal)",
                      description="Remove judgments at random at several levels and compare each measure's "
                                  "system ranking and scores with the full judgments.")
    r.add_argument("--campaign", required=True)
    r.add_argument("-m", "--measure", action="append", dest="measures")
    r.add_argument("--method", choices=["uniform", "bv"], default="uniform")
    r.add_argument("--levels", help="comma-separated percentages (default: the method's)")
    r.add_argument("--trials", type=int, default=10)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--truth", action="store_true", help="reduce the complete truth/ judgments instead of the pool")
    r.add_argument("--value", default="tau", choices=["tau", "tau_ap", "rms", "drift", "mean_score"])
    _add_out(r)
    r.set_defaults(func=run_reduction)

    b = ss.add_parser("poolbias", help="leave-one-group-out / leave-manual-out pool bias experiment",
                      description="Remove the documents only one group's (or only the manual) pooled runs "
                                  "contributed and measure how the left-out runs move (buttcher 2007).")
    b.add_argument("--campaign", required=True)
    b.add_argument("-m", "--measure", action="append", dest="measures")
    b.add_argument("--mode", choices=["group", "manual"], default="group")
    b.add_argument("--depth", type=int, help="pool depth (default: the campaign's pool depth, else 50)")
    b.add_argument("--detail", action="store_true", help="one row per left-out run")
    b.add_argument("--complete", default=None, metavar="none,kld,svm",
                   help="also evaluate on the reduced judgments completed by predicted relevance "
                        "(comma list of none, kld, svm: one table comparing them; Tables 7-8 of buttcher 2007)")
    _add_out(b)
    b.set_defaults(func=run_poolbias)

    d = ss.add_parser("discrim", help="discriminative power (Sakai's paired bootstrap test)",
                      description="Paired bootstrap test for every system pair: ASLs, share of pairs "
                                  "significant at alpha and the difference required.")
    _add_source(d, multi=True)
    d.add_argument("--bootstrap", type=int, default=1000, help="bootstrap samples B (1000)")
    d.add_argument("--alpha", type=float, default=0.05)
    d.add_argument("--top", type=int, help="only the top N systems by mean score")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--pairs", action="store_true", help="print every pair's ASL")
    _add_out(d)
    d.set_defaults(func=run_discrim)

    s = ss.add_parser("significance", help="pairwise significance tests with Holm / Tukey HSD",
                      description="Paired t-test, Wilcoxon signed-rank and randomization tests for every pair "
                                  "of systems, Holm-adjusted, with Tukey HSD and effect sizes.")
    _add_source(s)
    s.add_argument("--tests", default="t,wilcoxon,randomization", help="comma-separated: t, wilcoxon, randomization")
    s.add_argument("--permutations", type=int, default=10000)
    s.add_argument("--alpha", type=float, default=0.05)
    s.add_argument("--seed", type=int, default=0)
    _add_ppi(s)
    _add_out(s)
    s.set_defaults(func=run_significance)

    o = ss.add_parser("optimal-ndcg", help="stability-optimal nDCG gains and discounts (thesis 5.1)",
                      description="Gains per grade and discounts per rank maximizing Phi of nDCG@N (SLSQP), "
                                  "compared with standard functions by the topics needed for Phi >= target.")
    o.add_argument("--campaign", required=True)
    o.add_argument("--cutoff", type=int, default=20)
    o.add_argument("--target", type=float, default=0.95)
    o.add_argument("--truth", action="store_true", help="use the complete truth/ judgments")
    _add_out(o)
    o.set_defaults(func=run_optimal)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def run_gstudy(args) -> int:
    from engine.stability.gtheory import components_table, g_study, gstudy_report
    if not 0 < args.alpha < 1:
        raise CranfieldError(f"--alpha must be in (0, 1), got {args.alpha}")
    if not 0 < args.target < 1:
        raise CranfieldError(f"--target must be in (0, 1), got {args.target}")
    with _bar(args, "stability gstudy") as prog:
        x = matrix_from_args(args, progress=prog)
        if prog:
            prog(0.9, f"G-study of {x.shape[1]} runs x {x.shape[0]} topics")
        g = g_study(x, drop_lowest=args.drop_lowest)
    rep = gstudy_report(g, args.topics, args.alpha, args.target)
    for p in g.warnings:
        print(f"warning: {p.message}", file=sys.stderr)
    if args.json:
        print(json.dumps(_clean(rep), indent=1))
        return 0
    conf = f"{(1 - args.alpha) * 100:g}%"
    print(f"G-study: {g.n_systems} systems x {g.n_topics} topics"
          + (f" ({len(g.dropped)} lowest systems dropped)" if g.dropped else ""))
    print(components_table(g).to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    n = rep["d_study_topics"]

    def c(k):
        return "n/a" if rep[k] is None else f"{rep[k]:.4f}"

    def t(k):
        return "unreachable" if rep[k] is None else f"{int(rep[k])}"
    print(f"\nD-study for {n:g} topics ({conf} intervals):")
    print(f"  E rho^2 = {c('erho2')}  [{c('erho2_lower')}, {c('erho2_upper')}]")
    print(f"  Phi     = {c('phi')}  [{c('phi_lower')}, {c('phi_upper')}]")
    print(f"Topics needed for {args.target:g}:")
    print(f"  E rho^2: {t('topics_for_erho2')}  [{t('topics_for_erho2_lower')}, {t('topics_for_erho2_upper')}]")
    print(f"  Phi:     {t('topics_for_phi')}  [{t('topics_for_phi_lower')}, {t('topics_for_phi_upper')}]")
    return 0


def run_stratified(args) -> int:
    from engine.stability import score_matrix
    from engine.stability.stratified import multivariate_g_study, stability_by_share, weighted_mean
    camp, _ = _campaign(args.campaign)
    cats = camp.categories()
    if not cats:
        raise CranfieldError(f"{args.campaign}: campaign.yaml has no topics: categories: to stratify by")
    df = camp.evaluate([args.measure], complete=True)
    x = score_matrix(df, str(df["measure"].iloc[0]))
    x = x[[t in cats for t in x.index]]
    m = multivariate_g_study(x, cats)
    cls = args.category or m.classes[0]
    curve = stability_by_share(m, cls, args.total)
    wm = weighted_mean(x, cats).rename("weighted_mean").reset_index().rename(columns={"index": "run"})
    if args.json:
        print(json.dumps(_clean({"classes": m.classes, "topics_per_class": m.n_topics.tolist(),
                                 "weighted_means": wm.to_dict(orient="records"),
                                 "share_curve": curve.to_dict(orient="records"), "category": cls}), indent=1))
        return 0
    _emit_table(wm, args, f"Weighted mean of {args.measure} over {len(m.classes)} categories:")
    _emit_table(curve, args, f"\nStability of a {args.total}-topic sample by the share of {cls!r}:")
    return 0


def run_reduction(args) -> int:
    from engine.campaign.experiments import reduction_campaign
    from engine.stability.reduction import summarize_reduction
    camp, w = _campaign(args.campaign)
    q = camp.truth_qrels() if args.truth else camp.qrels()
    if q is None:
        raise CranfieldError(f"{args.campaign}: no truth/qrels.txt (only simulated campaigns have complete truth)")
    levels = None
    if args.levels:
        try:
            levels = [float(v) for v in args.levels.split(",")]
        except ValueError:
            raise CranfieldError(f"--levels {args.levels!r}: give comma-separated percentages") from None
    if args.trials < 1:
        raise CranfieldError("--trials must be >= 1")
    with _bar(args, "stability reduction") as prog:
        df = reduction_campaign(camp, q, args.measures, method=args.method, levels=levels, trials=args.trials,
                                seed=args.seed, progress=prog)
    t = summarize_reduction(df, args.value).reset_index()
    _emit_table(t, args, f"{args.method} reduction: mean {args.value} vs full judgments ({args.trials} trials)")
    return 0


def run_poolbias(args) -> int:
    from engine.campaign.experiments import pool_bias_campaign
    camp, w = _campaign(args.campaign)
    depth = args.depth or int((camp.config.get("pool") or {}).get("depth") or 50)
    modes = [c.strip() for c in args.complete.split(",") if c.strip()] if args.complete else None
    with _bar(args, "stability poolbias") as prog:
        summ, det = pool_bias_campaign(camp, args.measures, mode=args.mode, depth=depth, complete=modes,
                                       progress=prog)
    if modes:
        _emit_table(det if args.detail else summ, args,
                    f"leave-{args.mode}-out at pool depth {depth}, judgments completed by {', '.join(modes)}")
        return 0
    _emit_table(det if args.detail else summ, args,
                f"leave-{args.mode}-out at pool depth {depth} (rank change > 0: moved down)")
    return 0


def run_discrim(args) -> int:
    import pandas as pd
    from engine.stability.discrim import discriminative_power
    mats = {}
    if args.csv:
        mats["csv"] = read_csv_matrix(args.csv)
    else:
        camp, _ = _campaign(args.campaign)
        from engine.stability import score_matrix
        ms = args.measures or camp.measures()
        df = camp.evaluate(ms, complete=True)
        for name in dict.fromkeys(df["measure"].astype(str)):
            mats[name] = score_matrix(df, name)
    rows, pairs = [], []
    for name, x in mats.items():
        with _bar(args, f"stability discrim {name}") as prog:
            d = discriminative_power(x, n_bootstrap=args.bootstrap, alpha=args.alpha, seed=args.seed,
                                     top=args.top, progress=prog)
        rows.append({"measure": name, **d.summary()})
        if args.pairs:
            pairs.append(d.pairs.assign(measure=name))
    out = pd.concat(pairs) if args.pairs else pd.DataFrame(rows).sort_values("power", ascending=False)
    _emit_table(out, args, f"discriminative power at alpha = {args.alpha} (B = {args.bootstrap})")
    return 0


def _add_ppi(p, correction: str = "holm") -> None:
    """--ci ppi and its options (a significance table in the prediction-powered form)."""
    p.add_argument("--ci", choices=["ppi", "ppi-classic"], default=None,
                   help="the prediction-powered form (needs --campaign with a model judgment source on every topic "
                        "and people on a sample): each pair's PPI interval and p-value beside the human-only "
                        "result (docs/llm-judges.md)")
    p.add_argument("--judgments", default=None, metavar="SOURCE",
                   help="with --ci: the model source (default: the one the leaderboard's PPI column uses)")
    p.add_argument("--gold", default="human", help="with --ci: the people's source (default human)")
    p.add_argument("--correction", choices=["holm", "bonferroni", "bh", "none"], default=correction,
                   help=f"with --ci: the family-wise correction over all pairs of a measure (default {correction})")


def ppi_significance_from_args(args, camp, measures):
    """The PPI significance table (engine.campaign.ppisig) of --ci/--judgments/--gold/--correction/--alpha."""
    from engine.campaign.ppisig import ppi_significance
    return ppi_significance(camp, measures, model=args.judgments, gold=args.gold, alpha=args.alpha,
                            correction=args.correction, method=args.ci)


def run_significance(args) -> int:
    from engine.stability.significance import pairwise
    if args.ci:
        if not args.campaign:
            raise CranfieldError("--ci ppi needs --campaign DIR (model and human judgments), not --csv")
        camp, w = _campaign(args.campaign)
        res = ppi_significance_from_args(args, camp, [args.measure])
        for p in w:
            print(f"warning: {p}", file=sys.stderr)
        if args.json:
            print(json.dumps(_clean({"heading": res.heading(), "caution": res.caution(), "notes": res.notes,
                                     "pairs": res.pairs.to_dict(orient="records")}), indent=1))
            return 0
        from engine.util.names import shown
        t = res.pairs.drop(columns="measure").assign(run_a=res.pairs["run_a"].map(shown),
                                                     run_b=res.pairs["run_b"].map(shown))
        _emit_table(t, args, shown(f"{res.pairs['measure'].iat[0]}: {res.heading()}"))
        for line in ([res.caution()] if res.caution() else []) + res.notes:
            print(shown(line))
        return 0
    tests = tuple(t.strip() for t in args.tests.split(",") if t.strip())
    with _bar(args, "stability significance") as prog:
        x = matrix_from_args(args, progress=prog)
        if prog:
            prog(0.1, f"pairwise tests of {x.shape[1]} runs")
        df = pairwise(x, tests, n_perm=args.permutations, alpha=args.alpha, seed=args.seed, progress=prog)
    _emit_table(df, args, f"pairwise tests ({', '.join(tests)}; Holm-adjusted; Tukey HSD) at alpha = {args.alpha}")
    return 0


def run_optimal(args) -> int:
    from engine.stability import optimal_ndcg as on
    camp, _ = _campaign(args.campaign)
    q = camp.truth_qrels() if args.truth else camp.qrels()
    if q is None:
        raise CranfieldError(f"{args.campaign}: no truth/qrels.txt (only simulated campaigns have complete truth)")
    gr = on.grade_ranks(q, camp.runs(), args.cutoff, camp.binary_threshold())
    with _bar(args, "stability optimal-ndcg") as prog:
        res = on.compare(gr, args.target, progress=prog)
    if args.json:
        print(json.dumps(_clean({"discount_table": res["discount_table"].to_dict(orient="records"),
                                 "gain_table": res["gain_table"].to_dict(orient="records"),
                                 "optimal_discount": res["optimal_discount"].tolist(),
                                 "optimal_gain": res["optimal_gain"].tolist(),
                                 "gain_ratios": res["gain_ratios"]}), indent=1))
        return 0
    _emit_table(res["discount_table"], args, f"nDCG@{args.cutoff} discounts (linear gains): topics for Phi >= {args.target}")
    _emit_table(res["gain_table"], args, f"\nnDCG@{args.cutoff} gains (log discount): topics for Phi >= {args.target}")
    print("\noptimal discount per rank:", " ".join(f"{v:.3f}" for v in res["optimal_discount"]))
    print("optimal gain per grade:   ", " ".join(f"{v:.3f}" for v in res["optimal_gain"]))
    return 0
