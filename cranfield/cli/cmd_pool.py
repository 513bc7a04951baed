"""`cranfield pool`: build a pool (which documents to judge) for a campaign."""
from __future__ import annotations

import sys

from engine.errors import CranfieldError, Warnings


def register(sub) -> None:
    from engine.util.names import POOL_STRATEGIES as STRATEGIES
    p = sub.add_parser("pool", help="build a pool of documents to judge (depth, sampling, MTC, ...)",
                       description="Build a pool for a campaign and write pools/pool-NAME.tsv (topic doc "
                                   "stratum prob method order; order 0 = sampling frame, not selected). The "
                                   "strategy, budget, depth, parameters and seed are appended to "
                                   "pools/pools.log.jsonl so the pool can be rebuilt exactly.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (--campaign DIR is the same)")
    p.add_argument("--strategy", required=True, choices=[*STRATEGIES, "ppi-next"],
                   help="ppi-next: the next human batch of a document-level PPI design (--judgments MODEL, "
                        "--budget N documents in all; docs/llm-judges.md)")
    p.add_argument("--budget", default=None,
                   help="per-topic documents: N, a fraction (0.05) or percentage (5%%) of each topic's depth "
                        "pool, or 'targets' (campaign.yaml topics.targets; 'targets:mq' assigns the Million "
                        "Query 8/16/32/64/128 targets)")
    p.add_argument("--depth", type=int, default=None,
                   help="pool depth over the pooled runs (default 100, or the deepest stratified bound)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name", default=None, help="pool name (default: the strategy)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="strategy parameter, e.g. k=10 (depth), rates=1,0.5,0.2 bounds=10,40,100 "
                        "weights=3,1.5,1 (stratified), beta=0.5 (hedge); repeatable")
    p.add_argument("--all-runs", action="store_true", help="pool every run, not only those marked pooled")
    p.add_argument("--runs-per-group", type=int, default=None, metavar="K",
                   help="pool only each group's K runs of best submission priority (runs.<tag>.priority)")
    p.add_argument("--oracle", choices=["truth", "judgments"], default=None,
                   help="online strategies: replay judgments from the simulator truth or the existing judgments")
    p.add_argument("--dry-run", action="store_true", help="print the pool summary, write nothing")
    p.add_argument("--double", type=float, default=None, metavar="FRACTION",
                   help="assign this share of the pooled documents to a second assessor (double judging; "
                        "the judging screen offers them to two assessors)")
    p.add_argument("--canaries", type=int, default=None, metavar="N",
                   help="plant N canary documents per topic among the pooled ones (kinds in turn: query-term "
                        "stuffing, an instruction to mark it relevant, an off-topic document in another "
                        "language), made from --seed; recorded in audit/canaries.jsonl, never counted nor "
                        "exported; `cranfield judgments audit` gives each judge's false-positive rate per kind")
    from .eval_ppi import add_batch_arguments
    add_batch_arguments(p)
    p.set_defaults(func=run)


def _parse_params(items: list[str]) -> dict:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise CranfieldError(f"--param {it!r}: use KEY=VALUE")
        if "," in v:
            out[k] = [float(x) if "." in x else int(x) for x in v.split(",") if x]
        else:
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    out[k] = v
    return out


def run(args) -> int:
    from engine.campaign.campaign import load_campaign
    if args.strategy == "ppi-next":
        from .eval_ppi import run_batch
        return run_batch(args)
    from engine.pooling import assign_targets, parse_budget, write_pool

    w = Warnings()
    camp = load_campaign(args.campaign, warnings=w)
    st = camp.store()
    runs = camp.runs() if st is None else None
    pooled = None
    if not args.all_runs:
        meta = camp.run_meta()
        if meta is not None and len(meta) and "pooled" in meta:
            sel = meta.loc[meta["pooled"].astype(bool), "run"].astype(str).tolist()
            pooled = sel or None
    if args.runs_per_group is not None:
        from engine.campaign.intake import select_by_priority
        pooled = select_by_priority(camp, pooled, args.runs_per_group)
        print(f"pooling {len(pooled)} runs by priority: {', '.join(pooled)}")
    cfg = camp.config if isinstance(camp.config, dict) else {}
    if args.budget and args.budget.startswith("targets"):
        if args.budget == "targets:mq":
            all_topics = st.topics() if st is not None else runs["topic"].astype(str).unique()
            budget = assign_targets(sorted(all_topics), seed=args.seed).to_dict()
        else:
            budget = ((cfg.get("topics") or {}).get("targets")) or None
            if not budget:
                raise CranfieldError("--budget targets: campaign.yaml has no topics.targets "
                                     "(use --budget targets:mq to assign Million Query targets)")
    else:
        budget = parse_budget(args.budget)
    oracle = None
    if args.oracle == "truth":
        oracle = camp.truth_qrels()
        if oracle is None:
            raise CranfieldError("--oracle truth: this campaign has no truth/ (only simulated campaigns do)")
    elif args.oracle == "judgments":
        oracle = camp.qrels()
    if args.depth is not None and args.depth < 1:
        raise CranfieldError(f"--depth {args.depth}: give a pool depth of 1 or more")
    params = _parse_params(args.param)
    from engine.pooling.bounds import depth_for_bounds
    args.depth, note = depth_for_bounds(args.strategy, params, args.depth)
    if note:
        print(f"note: {note}", file=sys.stderr)
    from engine.campaign.experiments import pool_campaign
    pool = pool_campaign(camp, args.strategy, budget, depth=args.depth, seed=args.seed, pooled=pooled,
                         oracle=oracle, **params)
    for item in w:
        print(f"warning: {item}", file=sys.stderr)
    canaries = _canaries(camp, pool, args) if args.canaries is not None else None
    sizes = pool.sizes()
    name = args.name or args.strategy
    from engine.pooling import judged_in_pool
    new = int((~judged_in_pool(pool.table, camp.qrels())).sum())
    print(f"pool {name}: strategy {args.strategy}, depth {args.depth}, seed {args.seed}, "
          f"{len(sizes)} topics, {int(sizes.sum())} documents to judge, {new} of them new (not judged yet) "
          f"(per topic min {int(sizes.min()) if len(sizes) else 0}, max {int(sizes.max()) if len(sizes) else 0})")
    if args.dry_run:
        return 0
    if args.double is not None:
        if not 0 <= args.double <= 1:
            raise CranfieldError(f"--double {args.double}: a fraction in [0, 1]")
        pool.spec["double_fraction"] = float(args.double)   # read back by engine.judging.sessions.pool_double_fraction
    if canaries is not None:
        from engine.judgments.canaries import write_canaries
        total = write_canaries(camp.root, canaries)
        print(f"planted {len(canaries)} canaries ({args.canaries} per topic); audit/canaries.jsonl holds {total}")
    path = write_pool(camp.root, name, pool)
    print(f"wrote {path}")
    return 0


def _canaries(camp, pool, args):
    """Make the pool's canaries (engine.judgments.audit) and put them among its documents; the canaries."""
    from engine.judging.auto import read_docs
    from engine.judgments.canaries import insert_canaries, make_canaries, read_canaries
    if args.canaries < 1:
        raise CranfieldError(f"--canaries {args.canaries}: give 1 or more canaries per topic")
    topics = camp.topics()
    pooled = set(pool.table.loc[pool.table["order"] > 0, "topic"].astype(str))
    topics = topics[topics["topic"].astype(str).isin(pooled)] if len(topics) else topics
    if not len(topics):
        raise CranfieldError("--canaries: the pool's topics have no text in topics/ to make canaries from")
    docs = read_docs(camp.root)
    q = camp.qrels()
    rel = q[q["grade"] >= camp.binary_threshold()]
    texts = {}
    for t, g in rel.groupby("topic", sort=False):
        texts[str(t)] = [(str(docs[d].get("title") or ""), str(docs[d].get("text") or ""))
                         for d in g["doc"].astype(str) if d in docs]
    taken = set(docs) | set(pool.table["doc"].astype(str)) | set(read_canaries(camp.root)["doc"])
    c = make_canaries(topics, args.canaries, args.seed, texts, taken)
    pool.table = insert_canaries(pool.table, c, args.seed)
    pool.spec["canaries"] = int(args.canaries)
    return c
