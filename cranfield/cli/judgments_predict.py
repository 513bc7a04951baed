"""`cranfield judgments predict`: complete biased judgments with predicted relevance (Buettcher et al. 2007)."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings


def add_parser(jsub) -> None:
    p = jsub.add_parser("predict", help="predict relevance of unjudged documents within the pool depth "
                                        "(KLD or SVM classifier), as a judgment source",
                        description="Train a classifier per topic on its judged documents and predict the "
                                    "unjudged documents that the runs retrieve within the pool depth. The "
                                    "predictions are the judgment source predicted-CLASSIFIER (--name): "
                                    "judgments/sources/NAME.qrels (the labels), NAME.meta.json (classifier, "
                                    "depth, training sizes and thresholds) and NAME.probs.tsv (each "
                                    "document's probability); official evaluation never uses them unless "
                                    "asked for (eval --judgments official+NAME).")
    p.add_argument("campaign")
    p.add_argument("--classifier", default="kld", help="kld or svm (svm needs scikit-learn; with "
                                                        "--evaluate-fractions a comma list, default kld,svm)")
    p.add_argument("--depth", type=int, default=None,
                   help="pool depth within which to predict (default: campaign.yaml pool.depth)")
    p.add_argument("--deeper", action="store_true",
                   help="allow --depth beyond the campaign's pool depth (the paper warns this biases the "
                        "evaluation the other way)")
    p.add_argument("--runs", default=None, help="only documents these runs retrieve (comma-separated tags)")
    p.add_argument("--name", default=None, help="source name (default predicted-CLASSIFIER)")
    p.add_argument("--dry-run", action="store_true", help="print the per-topic summary; write nothing")
    p.add_argument("--evaluate-fractions", default=None, metavar="F,F,...",
                   help="instead: classifier quality against training fraction (Table 6), e.g. 0.05,0.1,0.2,0.4,0.6,0.8")
    p.add_argument("--seed", type=int, default=0, help="random seed for --evaluate-fractions")
    p.add_argument("--format", choices=["text", "csv", "json"], default="text")
    p.set_defaults(func=run_predict)


def _emit(df, fmt: str) -> None:
    if fmt == "csv":
        from engine.formats.text_tables import format_table
        sys.stdout.write(format_table(df, "csv"))
    elif fmt == "json":
        print(df.to_json(orient="records"))
    else:
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


def run_predict(args) -> int:
    from engine.campaign.campaign import load_campaign
    from engine.documents.store import DocStore

    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    store = DocStore.for_campaign(camp.root)
    if store is None:
        raise CranfieldError(f"{camp.root}: no document text to train on; import it with "
                             f"cranfield docs import {camp.root} FILE")
    rel = camp.binary_threshold()
    if args.evaluate_fractions:
        from engine.completion.experiment import classifier_quality
        try:
            fr = [float(x) for x in args.evaluate_fractions.split(",") if x.strip()]
        except ValueError:
            raise CranfieldError(f"--evaluate-fractions must be comma-separated numbers, found "
                                 f"{args.evaluate_fractions!r}") from None
        if not fr or any(not 0 < f < 1 for f in fr):
            raise CranfieldError("--evaluate-fractions must be fractions strictly between 0 and 1")
        clfs = [c.strip() for c in (args.classifier if "," in args.classifier or args.classifier != "kld"
                                    else "kld,svm").split(",") if c.strip()]
        _emit(classifier_quality(camp.qrels(), store, fr, classifiers=clfs, rel_level=rel, seed=args.seed),
              args.format)
        return 0
    from engine.completion.predict import complete, unjudged_within_depth, write_completion
    pool_depth = (camp.config.get("pool") or {}).get("depth")
    depth = args.depth or pool_depth
    if depth is None:
        raise CranfieldError("no pool depth: give --depth K (the depth the judgments were pooled to)")
    if pool_depth is not None and depth > int(pool_depth) and not args.deeper:
        raise CranfieldError(f"--depth {depth} is beyond the campaign's pool depth {pool_depth}: predicting "
                             f"deeper than the pool biases the evaluation the other way (Buettcher et al. "
                             f"2007); add --deeper to do it anyway")
    among = [r.strip() for r in args.runs.split(",")] if args.runs else None
    qrels = camp.qrels()
    cand = unjudged_within_depth(qrels, camp.runs(), int(depth), among=among)
    comp = complete(qrels, cand, store, classifier=args.classifier, rel_level=rel, depth=int(depth),
                    warnings=w)
    for p in w:
        print(f"cranfield: warning: {p}", file=sys.stderr)
    _emit(comp.topics, args.format)
    n, nr = len(comp.predictions), int((comp.predictions["grade"] >= rel).sum()) if len(comp.predictions) else 0
    if args.dry_run:
        print(f"{n} unjudged documents within depth {depth} would be predicted ({nr} relevant); nothing written",
              file=sys.stderr)
        return 0
    path = write_completion(camp.root, comp, args.name)
    print(f"wrote {n} predicted labels ({nr} relevant) to {path.resolve()}", file=sys.stderr)
    return 0
