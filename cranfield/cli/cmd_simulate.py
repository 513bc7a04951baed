"""`cranfield simulate`: write a simulated campaign with complete ground truth."""
from __future__ import annotations

import time
from pathlib import Path

from engine.errors import CranfieldError


_WRITTEN = ("campaign.yaml", "runs", "topics", "judgments", "truth", "docs", "pools", ".cranfield-cache", "answers",
            "nuggets", "audit")


def register(sub) -> None:
    p = sub.add_parser("simulate", help="write a simulated campaign with complete ground-truth judgments",
                       description="Simulate runs from groups of systems of varying quality (manual and "
                                   "automatic, with score ties) over topics with recall bases of varying "
                                   "size, and write a campaign directory: runs/, topics/, judgments/ (the "
                                   "depth-k pool of the pooled runs), truth/ (complete judgments, "
                                   "parameters, per-run quality) and campaign.yaml.")
    p.add_argument("--out", required=True, help="campaign directory to write")
    p.add_argument("--runs", type=int, default=40, help="number of runs (default 40)")
    p.add_argument("--topics", type=int, default=50, help="number of topics (default 50)")
    p.add_argument("--depth", type=int, default=1000, help="documents per topic per run (default 1000)")
    p.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    p.add_argument("--groups", type=int, default=None, help="number of groups (default about runs/3)")
    p.add_argument("--manual-fraction", type=float, default=0.15, help="share of manual runs (default 0.15)")
    p.add_argument("--no-manual-bias", action="store_true",
                   help="manual runs find no relevant documents that automatic runs miss")
    p.add_argument("--ties", type=float, default=0.05, help="mean share of tied scores (default 0.05)")
    p.add_argument("--grades", default="0,1,2", help="relevance grades, comma separated (default 0,1,2)")
    p.add_argument("--categories", default="short,long",
                   help="query categories, comma separated (default short,long; empty for none)")
    p.add_argument("--pool-depth", default="100",
                   help="depth of the pool judged in judgments/qrels.txt (default 100; 'all' = every "
                        "document the pooled runs retrieved)")
    p.add_argument("--docs", nargs="?", const="pool", default=None, metavar="DEPTH",
                   help="also write docs/docs.jsonl with synthetic text for the pooled documents "
                        "(or for the pool of depth DEPTH)")
    p.add_argument("--judge", action="append", choices=["lenient", "strict", "noisy"], default=None,
                   help="also write a second judgment source judged by a simulated judge with a known "
                        "confusion matrix (judgments/sources/judge-KIND.qrels; repeatable)")
    p.add_argument("--judge-error", type=float, default=0.2,
                   help="the judge's error rate: the probability it moves a grade (default 0.2)")
    p.add_argument("--judge-depth", type=int, default=None,
                   help="the judge labels the depth-K pool (default: the judged pool's depth)")
    p.add_argument("--model-judge", choices=["noisy", "lenient", "strict"], default=None, metavar="KIND",
                   help="also write the source judge-model (--model-judge-name): a simulated model judge whose "
                        "base error is KIND (noisy = uniform noise, lenient / strict = grade bias up / down) "
                        "with rate --judge-error, plus the structures below; implied (noisy) by any of them")
    p.add_argument("--model-judge-name", default="judge-model", metavar="NAME",
                   help="the model judge's source name (default judge-model)")
    p.add_argument("--judge-favour", default=None, metavar="RUN,RUN",
                   help="the model judge is biased toward these runs' documents: one grade up with probability "
                        "--judge-favour-rate ('weakest:K': the K runs of lowest quality)")
    p.add_argument("--judge-favour-rate", type=float, default=0.5, metavar="R",
                   help="with --judge-favour: the chance a favoured run's document is moved up (default 0.5)")
    p.add_argument("--crafted-run", default=None, metavar="TAG",
                   help="a run crafted to inflate itself under the model judge: each of its documents the judge "
                        "would call non-relevant is judged relevant with probability --crafted-rate ('auto': the "
                        "run of lowest quality, which the model then ranks high); `cranfield judgments audit` should flag it")
    p.add_argument("--crafted-rate", type=float, default=0.8, metavar="R",
                   help="with --crafted-run: the chance one of its non-relevant documents is judged relevant "
                        "(default 0.8)")
    p.add_argument("--canaries", type=int, default=None, metavar="N",
                   help="plant N canary documents per topic (audit/canaries.jsonl, kinds in turn) and have the "
                        "model judge fall for each kind at its --canary-rate")
    p.add_argument("--canary-rate", action="append", default=None, metavar="KIND=R",
                   help="with --canaries: the model judge's false-positive rate on a kind (stuffing, "
                        "instruction, foreign; repeatable; defaults stuffing=0.3 instruction=0.5 foreign=0.05)")
    p.add_argument("--text-signal", type=float, default=None, metavar="S",
                   help="with --docs: document text depends on relevance with strength S in [0, 1] (a topic's "
                        "own vocabulary mixed into its relevant documents; 0 = text says nothing about relevance)")
    p.add_argument("--rag", action="store_true",
                   help="a RAG campaign instead: topics with true nuggets, passages carrying them (docs/), answer "
                        "runs of known quality (answers/) and the true assignments (truth/); see docs/rag.md")
    p.add_argument("--nuggets", default="6,12", metavar="MIN,MAX", help="with --rag: nuggets per topic (default 6,12)")
    p.add_argument("--paraphrase", type=float, default=0.2,
                   help="with --rag: mean share of included nuggets stated by paraphrase (partial support; default 0.2)")
    p.add_argument("--wrong-citation", type=float, default=0.1,
                   help="with --rag: mean share of citations to a passage that does not carry the nugget (default 0.1)")
    p.add_argument("--no-nuggets", action="store_true",
                   help="with --rag: leave the nugget store empty (the truth stays in truth/nuggets.tsv)")
    p.add_argument("--name", default=None, help="campaign name (campaign.yaml)")
    p.add_argument("--force", action="store_true", help="overwrite a non-empty output directory")
    p.set_defaults(func=run)


def _int_list(text: str, what: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise CranfieldError(f"--{what} must be comma-separated integers, found {text!r}") from None
    if len(set(vals)) < 2:
        raise CranfieldError(f"--{what} needs at least two distinct grades (e.g. 0,1,2), found {text!r}")
    return vals


def run(args) -> int:
    from engine.simulation.campaigns import simulate, write_campaign

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CranfieldError(f"{out}: exists and is not a directory; choose another --out")
    from engine.util import fs
    if out.is_dir() and fs.listdir(out):
        if not args.force:
            raise CranfieldError(f"{out}: directory is not empty; choose another --out or add --force "
                                 f"to replace its contents")
        if not ((out / "campaign.yaml").exists() or (out / "truth").exists()):
            raise CranfieldError(f"{out}: not empty and not a campaign directory; refusing to delete it "
                                 f"even with --force")
    if args.rag:
        return _run_rag(args, out)
    for name in ("runs", "topics", "depth"):
        if getattr(args, name) < 1:
            raise CranfieldError(f"--{name} must be at least 1")
    if args.groups is not None and args.groups < 1:
        raise CranfieldError("--groups must be at least 1")
    if not 0 <= args.ties < 1:
        raise CranfieldError("--ties must be in [0, 1)")
    if not 0 <= args.manual_fraction <= 1:
        raise CranfieldError("--manual-fraction must be in [0, 1]")
    pd_text = str(args.pool_depth).strip().lower()
    if pd_text in ("all", "none", "0"):
        pool_depth = None
    else:
        try:
            pool_depth = int(pd_text)
        except ValueError:
            raise CranfieldError(f"--pool-depth must be a positive integer or 'all', found {args.pool_depth!r}") from None
        if pool_depth < 1:
            raise CranfieldError("--pool-depth must be a positive integer or 'all'")
    docs: bool | int = False
    if args.docs is not None:
        if args.docs == "pool":
            docs = True
        else:
            try:
                docs = int(args.docs)
            except ValueError:
                raise CranfieldError(f"--docs DEPTH must be an integer, found {args.docs!r}") from None
    if args.text_signal is not None:
        if args.docs is None:
            raise CranfieldError("--text-signal needs --docs (it shapes the documents' text)")
        if not 0.0 <= args.text_signal <= 1.0:
            raise CranfieldError(f"--text-signal must be in [0, 1], found {args.text_signal}")
    grades = _int_list(args.grades, "grades")
    cats = tuple(c.strip() for c in args.categories.split(",") if c.strip())
    _clear(out)
    t0 = time.perf_counter()
    sim = simulate(args.runs, args.topics, args.depth, args.seed, grades=grades, n_groups=args.groups,
                   manual_fraction=args.manual_fraction, manual_bias=not args.no_manual_bias,
                   ties=args.ties, categories=cats)
    t1 = time.perf_counter()
    write_campaign(sim, out, name=args.name, pool_depth=pool_depth, docs=docs, text_signal=args.text_signal)
    t2 = time.perf_counter()
    for i, kind in enumerate(args.judge or []):
        from engine.judgments.simulated import write_judge_source
        from engine.simulation.campaigns import depth_pool
        jd = depth_pool(sim, args.judge_depth or pool_depth)
        name = write_judge_source(out, jd, list(grades), kind, args.judge_error, args.seed + 1000 + i)
        print(f"judge source {name}: {len(jd)} documents, error {args.judge_error}")
    if args.model_judge or args.judge_favour or args.crafted_run or args.canaries is not None:
        _model_judge(args, sim, out, list(grades), pool_depth)
    meta = sim.run_meta
    g0 = min(grades)
    pool = sim.pool(pool_depth)
    n_t = len(sim.topics)
    print(f"wrote {out}: {len(meta)} runs from {meta['group'].nunique()} groups "
          f"({int((meta['type'] == 'manual').sum())} manual, {int(meta['pooled'].sum())} pooled), "
          f"{n_t} topics, depth {args.depth}")
    print(f"judgments: depth-{pool_depth or 'all'} pool, {len(pool)} judged "
          f"({len(pool) / n_t:.0f}/topic), {int((pool['grade'] > g0).sum())} relevant; "
          f"truth: {int((sim.truth['grade'] > g0).sum())} relevant")
    print(f"simulated in {t1 - t0:.2f} s, written in {t2 - t1:.2f} s")
    return 0


CANARY_RATES = {"stuffing": 0.3, "instruction": 0.5, "foreign": 0.05}


def _canary_rates(items) -> dict:
    from engine.judgments.canaries import KINDS
    rates = dict(CANARY_RATES)
    for it in items or []:
        k, sep, v = it.partition("=")
        try:
            r = float(v)
        except ValueError:
            r = -1.0
        if not sep or k not in KINDS or not 0 <= r <= 1:
            raise CranfieldError(f"--canary-rate {it!r}: use KIND=R with KIND one of {', '.join(KINDS)} and R in "
                                 f"[0, 1], e.g. instruction=0.5")
        rates[k] = r
    return rates


def _model_judge(args, sim, out: Path, grades: list[int], pool_depth) -> None:
    """Write the simulated model judge's source (base error, run bias, crafted run, canaries)."""
    from engine.judgments.simulated import (apply_crafted_run, apply_judge, apply_run_bias, judge_canaries,
                                            judge_matrix, write_labels_source)
    from engine.simulation.campaigns import depth_pool
    kind = args.model_judge or "noisy"
    depth = args.judge_depth or pool_depth
    jd = depth_pool(sim, depth)
    k = len(grades)
    rel = sorted(grades)[1]
    base = judge_matrix(kind, k, args.judge_error)
    by_quality = sim.run_meta.sort_values("quality", kind="mergesort")["run"].astype(str).tolist()
    favour = []
    if args.judge_favour:
        if args.judge_favour.startswith("weakest:"):
            try:
                favour = by_quality[: int(args.judge_favour.split(":", 1)[1])]
            except ValueError:
                raise CranfieldError(f"--judge-favour {args.judge_favour!r}: weakest:K with K a number") from None
        else:
            favour = [r.strip() for r in args.judge_favour.split(",") if r.strip()]
        unknown = sorted(set(favour) - set(by_quality))
        if unknown:
            raise CranfieldError(f"--judge-favour: no run named {', '.join(unknown)}")
        if not 0 <= args.judge_favour_rate <= 1:
            raise CranfieldError(f"--judge-favour-rate {args.judge_favour_rate}: must be in [0, 1]")
        labels = apply_run_bias(jd, sim.runs, favour, grades, args.judge_favour_rate, depth=depth, base=base,
                                seed=args.seed + 2000)
    else:
        labels = apply_judge(jd, base, grades, args.seed + 2000)
    crafted = None
    if args.crafted_run:
        crafted = by_quality[0] if args.crafted_run == "auto" else args.crafted_run
        labels = apply_crafted_run(labels, sim.runs, crafted, grades, rel, args.crafted_rate, depth,
                                   seed=args.seed + 2001)
    meta = {"model": f"{kind} judge, error {args.judge_error}", "grades": list(map(int, grades)),
            "confusion_matrix": base.round(6).tolist(), "seed": int(args.seed), "favoured": favour,
            "favour_rate": args.judge_favour_rate if favour else None, "crafted_run": crafted,
            "crafted_rate": args.crafted_rate if crafted else None}
    if args.canaries is not None:
        from engine.judgments.canaries import make_canaries, write_canaries
        rates = _canary_rates(args.canary_rate)
        c = make_canaries(sim.topics, args.canaries, args.seed, taken=set(sim.truth["doc"].astype(str)))
        write_canaries(out, c)
        import pandas as pd
        labels = pd.concat([labels, judge_canaries(c, rates, grades, rel, args.seed + 2002)], ignore_index=True)
        meta["canary_rates"] = rates
        print(f"canaries: {len(c)} planted ({args.canaries} per topic) in audit/canaries.jsonl; the model judge "
              f"falls for them at " + ", ".join(f"{k} {v:g}" for k, v in rates.items()))
    name = write_labels_source(out, labels, args.model_judge_name, meta)
    print(f"judge source {name}: {len(labels)} documents, base {kind} error {args.judge_error}"
          + (f", favouring {', '.join(favour)} at {args.judge_favour_rate:g}" if favour else "")
          + (f", crafted run {crafted} at {args.crafted_rate:g}" if crafted else ""))


def _clear(out: Path) -> None:
    """Replace what a simulated campaign consists of; leave other files (e.g. a README) alone."""
    from engine.util import fs
    if fs.is_dir(out):
        for name in _WRITTEN:
            p = out / name
            if fs.is_dir(p) and not fs.is_link(p):
                fs.rmtree(p)
            elif fs.exists(p) or fs.is_link(p):
                fs.unlink(p)


def _run_rag(args, out: Path) -> int:
    from engine.nuggets.simulate import simulate_rag, write_rag_campaign
    try:
        lo, hi = (int(x) for x in args.nuggets.split(","))
    except ValueError:
        raise CranfieldError(f"--nuggets must be MIN,MAX (e.g. 6,12), found {args.nuggets!r}") from None
    for name in ("runs", "topics"):
        if getattr(args, name) < 1:
            raise CranfieldError(f"--{name} must be at least 1")
    t0 = time.perf_counter()
    sim = simulate_rag(args.runs, args.topics, (lo, hi), paraphrase=args.paraphrase,
                       wrong_citation=args.wrong_citation, seed=args.seed)
    _clear(out)
    write_rag_campaign(sim, out, name=args.name, with_nuggets=not args.no_nuggets)
    n_c = len(sim.support)
    print(f"wrote {out}: {args.runs} answer runs x {args.topics} topics, {len(sim.nuggets)} nuggets "
          f"({int((sim.nuggets['importance'] == 'vital').sum())} vital), {len(sim.passages)} passages, "
          f"{n_c} citations ({int((sim.support['label'] == 'not_support').sum())} wrong); "
          f"{time.perf_counter() - t0:.1f} s")
    return 0
