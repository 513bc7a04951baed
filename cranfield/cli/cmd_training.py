"""`cranfield training`: training collections for learning to rank (kanoulas thesis chapter 4) and
the training-measure sensitivity under incomplete judgments (He, Macdonald and Ounis 2008)."""
from __future__ import annotations

import sys
from pathlib import Path

FORMATS = ["text", "markdown", "csv", "tsv", "latex", "json"]


def _data_args(p, family: bool = False) -> None:
    p.add_argument("--campaign", help="campaign directory (runs, judgments; truth/qrels.txt when simulated)")
    p.add_argument("--simulate", action="store_true", help="use a simulated campaign (known ground truth)")
    p.add_argument("--topics", type=int, default=50 if family else 30, help="simulated topics")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--plot", action="store_true", help="draw the curves in the terminal (plotext)")
    p.add_argument("--out", help="folder for the result table (default <campaign>/training when --campaign)")
    if not family:
        p.add_argument("--runs", type=int, default=20, help="simulated runs")
        p.add_argument("--features", help="feature file (LETOR text, .gz or .parquet); default "
                                          "<campaign>/features/features.parquet, else simulated from the runs")
        p.add_argument("--depth", type=int, default=100, help="pool depth of the complete collection (default 100)")


def register(sub) -> None:
    p = sub.add_parser("training", help="training collections: document selection, learning to rank, "
                                        "training-measure sensitivity",
                       description="Training collections (kanoulas thesis ch. 4; He et al. 2008). "
                                   "Subcommands: features, select, learn, sensitivity.")
    tsub = p.add_subparsers(dest="training_cmd", metavar="{features,select,learn,sensitivity}")
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])

    f = tsub.add_parser("features", help="write or check query-document feature files",
                        description="Write the simulated features of a campaign's depth pool (known "
                                    "informativeness) or check/convert a LETOR/SVMlight or Parquet feature file.")
    _data_args(f)
    f.add_argument("--check", help="read a feature file, report problems (file:line) and a summary")
    f.add_argument("--write", help="output file (.txt, .gz or .parquet); default <campaign>/features/features.parquet")
    f.add_argument("--strong", type=int, default=2)
    f.add_argument("--weak", type=int, default=3)
    f.add_argument("--noise", type=int, default=3)
    f.set_defaults(func=run_features)

    s = tsub.add_parser("select", help="precision, recall and discrepancy of selected training sets "
                                       "(thesis Figures 4.1, 4.2)")
    _data_args(s)
    s.add_argument("--methods", default="depth,infap,statap,mtc,hedge,letor")
    s.add_argument("--percents", default="0.6,1,2,5,10,20,40,60", help="selection percentages of the pool")
    s.add_argument("--write-selection", dest="write_selection",
                   help="with one method and percentage: write the selected topic/doc pairs (TSV)")
    s.set_defaults(func=run_select)

    lp = tsub.add_parser("learn", help="train rankers on selected sets, test on held-out queries "
                                       "(thesis Figures 4.3, 4.4)")
    _data_args(lp)
    lp.add_argument("--methods", default="depth,infap,statap,mtc,hedge,letor")
    lp.add_argument("--percents", default="1,2,5,10,20,60")
    lp.add_argument("--rankers", default="ranksvm,ranknet",
                    help="ranksvm, ranknet, ranknet_hidden, regression, lambdamart (needs cranfield[ltr])")
    lp.add_argument("--folds", type=int, default=5, help="cross-validation folds over queries")
    lp.set_defaults(func=run_learn)

    se = tsub.add_parser("sensitivity", help="which measure to train a run family's parameters with, "
                                             "under incomplete judgments",
                         description="Choose the parameter setting of a run family maximizing each training "
                                     "measure on reduced training judgments; report its test MAP with full "
                                     "judgments and a Wilcoxon test against MAP-trained.")
    _data_args(se, family=True)
    se.add_argument("--meta", help="TSV with columns run and one column per parameter (default: campaign.yaml "
                                   "runs.<tag>.params)")
    se.add_argument("--param", action="append", help="parameter column(s) (default: all in the metadata)")
    se.add_argument("--measures", default="map,bpref,infAP,ndcg", help="training measures (any registered)")
    se.add_argument("--levels", default="1,2,3,4,5,10,15,20,25,30,40,50,60,70,80,90,100",
                    help="percent of training judgments kept (the paper's 16 levels plus 100)")
    se.add_argument("--repeats", type=int, default=10, help="random reductions per level")
    se.add_argument("--folds", type=int, default=2, help="topic folds (2 = train on one half, test on the other)")
    se.set_defaults(func=run_sensitivity)


def _floats(text: str, what: str) -> list[float]:
    from engine.errors import CranfieldError
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CranfieldError(f"--{what}: {text!r} is not a comma-separated list of numbers") from None


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _load(args):
    """(runs, complete qrels, features, out folder) from --campaign or --simulate."""
    from engine.errors import CranfieldError, Warnings
    from engine.training.features import read_features, simulate_features
    out = Path(args.out) if args.out else None
    if args.simulate:
        from engine.simulation.campaigns import simulate
        sim = simulate(n_runs=args.runs, n_topics=args.topics, depth=args.depth, seed=args.seed)
        runs, qrels = sim.runs, sim.truth
    elif args.campaign:
        from engine.campaign.campaign import load_campaign
        camp = load_campaign(args.campaign, warnings=Warnings())
        runs = camp.runs()
        qrels = camp.truth_qrels()
        if qrels is None:
            qrels = camp.qrels()
        out = out or Path(args.campaign) / "training"
    else:
        raise CranfieldError("say where the data comes from: --campaign DIR or --simulate")
    fpath = Path(args.features) if args.features else (
        Path(args.campaign) / "features" / "features.parquet" if args.campaign else None)
    if fpath is not None and fpath.exists():
        feats = read_features(fpath)
    elif args.features:
        raise CranfieldError(f"{args.features}: no such feature file")
    else:
        counts = {k: getattr(args, n) for k, n in (("n_strong", "strong"), ("n_weak", "weak"), ("n_noise", "noise"))
                  if hasattr(args, n)}
        feats, _ = simulate_features(runs, qrels, args.depth, seed=args.seed, **counts)
    return runs, qrels, feats, out


def _emit(df, args, floatfmt=".4f") -> None:
    from engine.formats.text_tables import format_table
    print(format_table(df, args.format, floatfmt=floatfmt))


def run_features(args) -> int:
    from engine.errors import CranfieldError
    from engine.training.features import feature_columns, read_features, write_features
    if args.check:
        df = read_features(args.check)
        cols = feature_columns(df)
        print(f"{args.check}: {len(df)} documents, {df['topic'].nunique()} queries, {len(cols)} features, "
              f"grades {sorted(df['grade'].unique().tolist())}")
        if args.write:
            write_features(args.write, df)
            print(f"wrote {args.write}")
        return 0
    if not (args.simulate or args.campaign):
        raise CranfieldError("give --check FILE, or --campaign DIR / --simulate to write simulated features")
    runs, qrels, feats, _ = _load(args)
    target = args.write or (Path(args.campaign) / "features" / "features.parquet" if args.campaign else None)
    if target is None:
        raise CranfieldError("with --simulate give --write FILE (.txt, .gz or .parquet)")
    write_features(target, feats)
    rel = feats["grade"] > 0
    print(f"wrote {target}: {len(feats)} documents, {feats['topic'].nunique()} queries, "
          f"{len(feature_columns(feats))} features ({rel.mean():.1%} relevant)")
    return 0


def run_select(args) -> int:
    import pandas as pd

    from engine.training.report import curves, plot_text, save_result
    from engine.training.select import characterize, select
    from engine.training.learn import complete_qrels
    runs, qrels, feats, out = _load(args)
    pool_qrels = complete_qrels(feats)          # recall is over the complete collection: the depth pool
    methods, pcts = _names(args.methods), _floats(args.percents, "percents")
    rows = []
    for m in methods:
        for pct in pcts:
            sel = select(m, runs, qrels, pct, depth=args.depth, seed=args.seed, features=feats)
            rows.append({"method": m, "percent": pct, **characterize(sel, feats, pool_qrels, seed=args.seed)})
            if args.write_selection and len(methods) == 1 and len(pcts) == 1:
                from engine.util import fs
                with fs.atomic_file(args.write_selection, "w", encoding="utf-8", newline="") as fh:
                    sel.to_csv(fh, sep="\t", index=False)
    df = pd.DataFrame(rows)
    _emit(df, args)
    if out:
        print(f"saved {save_result(out, 'select', df)}", file=sys.stderr)
    if args.plot:
        for y in ("precision", "recall", "disc_rel", "disc_rel_nonrel"):
            print(plot_text(curves(df, "percent", y, "method"), "% of the depth pool", y, title=y))
    return 0


def run_learn(args) -> int:
    from engine.errors import CranfieldError
    from engine.training.learn import experiment
    from engine.training.rankers import LIGHTGBM_HINT, RANKERS, lightgbm_available
    from engine.training.report import best_selection, curves, plot_text, save_result
    rankers = _names(args.rankers)
    bad = [r for r in rankers if r not in RANKERS]
    if bad:
        raise CranfieldError(f"unknown ranker(s) {', '.join(bad)}; choose from {', '.join(RANKERS)}")
    if "lambdamart" in rankers and not lightgbm_available():
        raise CranfieldError(LIGHTGBM_HINT)
    runs, qrels, feats, out = _load(args)
    from .progress import bar_context, progress_bar
    with bar_context(progress_bar("training learn")) as bar:
        df, _ = experiment(feats, runs, methods=_names(args.methods),
                           percentages=_floats(args.percents, "percents"), rankers=rankers, folds=args.folds,
                           depth=args.depth, seed=args.seed, progress=bar)
    _emit(df, args)
    print("\nbest selection method per budget (test MAP):")
    _emit(best_selection(df), args)
    if out:
        print(f"saved {save_result(out, 'learn', df)}", file=sys.stderr)
    if args.plot:
        for r in rankers:
            d = df[(df["ranker"] == r) & (df["method"] != "full")]
            print(plot_text(curves(d, "percent", "map", "method"), "% of the depth pool", "test MAP", title=r))
    return 0


def _family_meta(args, runs):
    import pandas as pd

    from engine.errors import CranfieldError
    if args.meta:
        try:
            from engine.util import fs
            with fs.open(args.meta, "rb") as fh:
                return pd.read_csv(fh, sep="\t", dtype={"run": str})
        except (OSError, ValueError) as exc:
            raise CranfieldError(f"{args.meta}: cannot read run metadata ({exc}); give a TSV with a run column "
                                 "and one column per parameter") from None
    from engine.campaign.campaign import load_campaign
    from engine.errors import Warnings
    camp = load_campaign(args.campaign, warnings=Warnings())
    rows = [{"run": tag, **(m.get("params") or {})} for tag, m in camp.config["runs"].items()
            if isinstance(m, dict) and m.get("params")]
    if not rows:
        raise CranfieldError(f"{args.campaign}: no run has parameters; add runs.<tag>.params to campaign.yaml "
                             "or give --meta FILE")
    return pd.DataFrame(rows)


def run_sensitivity(args) -> int:
    from engine.errors import CranfieldError
    from engine.training.report import best_measure, curves, plot_text, save_result
    from engine.training.sensitivity import sensitivity, simulate_family
    out = Path(args.out) if args.out else None
    if args.simulate:
        runs, qrels, meta = simulate_family(n_topics=args.topics, seed=args.seed)
        print(f"simulated run family: {runs['run'].nunique()} settings of b, known best b=0.6", file=sys.stderr)
    elif args.campaign:
        from engine.campaign.campaign import load_campaign
        from engine.errors import Warnings
        camp = load_campaign(args.campaign, warnings=Warnings())
        runs = camp.runs()
        qrels = camp.truth_qrels()
        qrels = camp.qrels() if qrels is None else qrels
        meta = _family_meta(args, runs)
        out = out or Path(args.campaign) / "training"
    else:
        raise CranfieldError("say where the run family comes from: --campaign DIR (with run parameters) or --simulate")
    from .progress import bar_context, progress_bar
    with bar_context(progress_bar("training sensitivity")) as bar:
        res = sensitivity(runs, qrels, meta, args.param, measures=_names(args.measures),
                          levels=[int(x) for x in _floats(args.levels, "levels")], repeats=args.repeats,
                          folds=args.folds, seed=args.seed, progress=bar)
    print(f"best setting with complete judgments on all topics: {res['best']}")
    _emit(res["summary"], args)
    print("\nbest training measure per level (test MAP, full judgments):")
    _emit(best_measure(res["summary"]), args)
    if out:
        print(f"saved {save_result(out, 'sensitivity', res['summary'])}", file=sys.stderr)
    if args.plot:
        print(plot_text(curves(res["summary"], "level", "test_map", "measure"), "% of training judgments kept",
                        "test MAP", title="test MAP of the setting chosen by each training measure"))
    return 0

