"""`cranfield gdeval`: NIST's gdeval (TREC Web 2010-2014) nDCG@k / ERR@k, with risk-sensitive evaluation."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("gdeval", help="gdeval's nDCG@k and ERR@k (TREC Web track), optionally risk-sensitive",
                       description="Evaluate one run as NIST's gdeval.pl: CSV 'runid,topic,ndcg@K,err@K' per topic "
                                   "and an 'amean' line. With --baseline, risk-sensitive differences against the "
                                   "baseline run (losses weighted by 1 + alpha).")
    p.add_argument("qrels", help="qrels file (topic iter doc grade)")
    p.add_argument("run", help="run file")
    p.add_argument("-k", type=int, default=20, help="cut-off (default 20)")
    p.add_argument("-c", action="store_true", dest="complete",
                   help="average over every judged topic; a topic the run misses scores 0")
    p.add_argument("--baseline", help="baseline run for risk-sensitive evaluation")
    p.add_argument("--risk-alpha", default="0", dest="risk_alpha",
                   help="risk aversion alpha: losses against the baseline count 1 + alpha times (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.errors import CranfieldError, Warnings
    from engine.formats.detect import read_judgments
    from engine.formats.runs import read_runs
    from engine.official.gdeval import gdeval_lines, gdeval_table, risk_runid, risk_values

    if args.k < 1:
        raise CranfieldError("-k must be a positive cut-off")
    try:
        alpha = float(args.risk_alpha)
    except ValueError:
        alpha = -1.0
    if not alpha >= 0.0:
        raise CranfieldError(f"--risk-alpha {args.risk_alpha}: not a number >= 0 (give e.g. --risk-alpha 1)")
    w = Warnings()
    qrels = read_judgments(args.qrels, w)
    runs = read_runs([args.run], w)
    table = gdeval_table(qrels, runs, args.k, args.complete)
    runid = None
    if args.baseline:
        base = gdeval_table(qrels, read_runs([args.baseline], w), args.k, args.complete)
        rt, bt = table.set_index("topic"), base.set_index("topic")
        table = table.assign(ndcg=risk_values(rt["ndcg"], bt["ndcg"], alpha).to_numpy(),
                             err=risk_values(rt["err"], bt["err"], alpha).to_numpy())
        runid = risk_runid(table["runid"].iat[0], base["runid"].iat[0], args.risk_alpha)
    for p in w:
        print(f"warning: {p}", file=sys.stderr)
    if table.empty:
        raise CranfieldError("no topics with both results and judgments")
    sys.stdout.write("\n".join(gdeval_lines(table, args.k, runid, risk=bool(args.baseline))) + "\n")
    return 0
