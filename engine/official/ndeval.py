"""NIST's ndeval (TREC Web track diversity): intent-aware measures over subtopic judgments.

Judgments (`-R diversity`): `topic subtopic doc grade`; a grade >= 1 makes the document relevant to that
subtopic (ndeval is binary). A topic's subtopics are those with at least one relevant document (N).
With alpha (default 0.5), a document's gain at rank r is sum over its subtopics s of (1 - alpha)^c_s,
c_s = documents relevant to s ranked above r. As ndeval prints them:

- alpha-DCG@k = sum_{r<=k} gain(r) / log2(r + 1), divided by N and by sum_{r<=k} (1-alpha)^(r-1) / log2(r + 1)
  (the best a single subtopic could score), so a perfect single-subtopic ranking scores 1;
- ERR-IA@k   = the same with discount 1/r;
- alpha-nDCG@k, nERR-IA@k = the raw sums divided by those of the ideal ranking, built greedily (at each
  rank the relevant document of largest gain; ties: the larger document id), over all relevant documents;
- NRBP = (1 - (1 - alpha) beta) / N * sum_r beta^(r-1) gain(r) (beta default 0.5), nNRBP its ideal ratio;
  (a topic without relevant subtopics scores 0 everywhere and nNRBP = 0/0 = nan, as ndeval);
- MAP-IA = mean over subtopics of AP; P-IA@k = mean over subtopics of P@k; strec@k = fraction of
  subtopics with a relevant document in the top k.

Order: by default the run's rank field (ndeval 4.5 refuses a rank repeated within a topic; we break such
ties by score descending, then document id descending); `traditional` ranks by score descending, ties by
document id descending (ndeval 4.5's resultCompareByScore; ndeval 1.3 of 2009 and pyndeval, which ranks
by score itself, break ties by ascending document id).
`complete` (-c): topics of the judgments a run did not retrieve for score 0 and count in the mean.
"""
from __future__ import annotations

import pandas as pd

from ..errors import Warnings
from ..util.names import natural_key
from ..measures.diversity import (CUT_MEASURES, DEFAULT_CUTOFFS, NOCUT_MEASURES, TAIL_CUT_MEASURES,  # noqa: F401
                                  TopicJudgments, measure_names, read_diversity_qrels, topic_measures)


def ranked_docs(run: pd.DataFrame, order: str = "default") -> dict[str, list[str]]:
    """Per topic, the run's documents in ndeval's order (`default`: rank field; `traditional`: score)."""
    out = {}
    for t, g in run.groupby("topic", sort=False):
        g = g.sort_values("doc", ascending=False, kind="stable")
        g = g.sort_values("score", ascending=False, kind="stable")
        if order != "traditional" and "rank" in g.columns:
            g = g.sort_values("rank", kind="stable")
        out[str(t)] = list(dict.fromkeys(g["doc"].astype(str)))
    return out


def evaluate_diversity(qrels: pd.DataFrame, run: pd.DataFrame, cutoffs=DEFAULT_CUTOFFS, alpha: float = 0.5,
                       beta: float = 0.5, order: str = "default", complete: bool = False,
                       rel_level: int = 1, warnings: Warnings | None = None, source: str = "qrels") -> pd.DataFrame:
    """One row per (run, topic) with every ndeval measure; topics in the judgments' order. A (topic,
    subtopic, doc) judged with different grades is resolved as ndeval does, with a warning."""
    judg = {str(t): TopicJudgments(g, rel_level) for t, g in qrels.groupby("topic", sort=False)}
    n_conf = sum(tj.conflicts for tj in judg.values())
    if n_conf and warnings is not None:
        warnings.add(source, None, f"{n_conf} (topic, subtopic, document) judged more than once with different "
                                   f"grades; as ndeval, the last line counts, and every relevant line counts in "
                                   f"its subtopic's number of relevant documents")
    rows = []
    for rn, rg in run.groupby("run", sort=False):
        ranked = ranked_docs(rg, order)
        for t in sorted(judg, key=natural_key):
            if t not in ranked:
                if complete:
                    rows.append({"runid": rn, "topic": t, **{m: 0.0 for m in measure_names(cutoffs)}})
                continue
            rows.append({"runid": rn, "topic": t, **topic_measures(judg[t], ranked[t], cutoffs, alpha, beta)})
    return pd.DataFrame(rows, columns=["runid", "topic", *measure_names(cutoffs)])


def ndeval_lines(table: pd.DataFrame, cutoffs=DEFAULT_CUTOFFS) -> list[str]:
    """ndeval's CSV output: header, one line per topic, then the run's `amean` line."""
    names = measure_names(cutoffs)
    lines = ["runid,topic," + ",".join(names)]
    for rn, g in table.groupby("runid", sort=False):
        for _, row in g.iterrows():
            lines.append(f"{rn},{row['topic']}," + ",".join(f"{row[m]:.6f}" for m in names))
        lines.append(f"{rn},amean," + ",".join(f"{g[m].mean():.6f}" for m in names))
    return lines


def run_cli(args, out) -> int:
    """`cranfield eval -R diversity QRELS RUN...`: ndeval's CSV for each run."""
    from ..errors import CranfieldError
    from ..formats.runs import read_runs
    if len(args.files) < 2:
        raise CranfieldError("eval -R diversity needs a subtopic judgments file and at least one run file")
    w = Warnings()
    q = read_diversity_qrels(args.files[0], w)
    runs = read_runs(args.files[1:], w)
    table = evaluate_diversity(q, runs, alpha=args.alpha, beta=args.beta,
                               order="traditional" if args.traditional else "default", complete=args.complete,
                               rel_level=args.rel_level if args.rel_level is not None else 1, warnings=w,
                               source=str(args.files[0]))
    for p in w:
        print(f"warning: {p}", file=__import__("sys").stderr)
    if table.empty:
        raise CranfieldError("no topics with both results and subtopic judgments")
    out.write("\n".join(ndeval_lines(table)) + "\n")
    return 0
