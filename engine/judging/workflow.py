"""The judging workflow: the next document to judge, recording a checked judgment, assessor batches,
exports and judgment summaries. The append-only judgment log, its safety and its conflict rules live in
engine.judgments.log (re-exported here).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings
from ..util import fs
from ..util.names import natural_key
from ..judgments.log import (CONFLICT_RULES, LOG_NAME, append_records, apply_undo, judgment_record, log_path,  # noqa: F401
    merged_log, now_ts, read_log, resolve_judgments, undo_judgment)  # (the log's names, re-exported for the workflow's users)

# ---------------------------------------------------------------------------- next document

def next_documents(runs: pd.DataFrame, judged: pd.DataFrame, topic, strategy: str, *, k: int = 1,
                   pool: pd.DataFrame | None = None, depth: int = 100, pooled: list[str] | None = None,
                   rel_level: int = 1, seed: int = 0, budget=None, **params) -> list[str]:
    """The next document(s) to judge for `topic` under `strategy`, given the judgments so far.

    Static strategies follow the pool's order (the given pool table, or one built now with the
    same seed); online strategies replay the topic's judgments in log order, then choose (k = 1)."""
    from ..pooling import ONLINE, build_pool
    from ..pooling.candidates import ranked_runs
    from ..pooling.online import SELECTORS

    topic = str(topic)
    jt = judged[judged["topic"].astype(str) == topic] if len(judged) else judged
    done = set(jt["doc"].astype(str)) if len(jt) else set()
    if strategy in ONLINE:
        rows = ranked_runs(runs, depth, pooled, topics=[topic])
        if len(rows) == 0:
            raise CranfieldError(f"topic {topic}: no pooled run retrieved anything")
        sel = SELECTORS[strategy](rows, depth, **params)
        for d, g in zip(jt["doc"].astype(str), jt["grade"].astype(int)):
            sel.observe(d, g >= rel_level)
        i = sel.next()
        return [] if i is None else [str(sel.docs[i])]
    if pool is None:
        pool = build_pool(runs, strategy, budget, depth=depth, seed=seed, pooled=pooled,
                          topics=[topic], **params).table
    pt = pool[(pool["topic"].astype(str) == topic) & (pool["order"] > 0)].sort_values("order", kind="mergesort")
    todo = [d for d in pt["doc"].astype(str) if d not in done]
    return todo[:k]


def topic_pools(runs: pd.DataFrame, strategy: str, budget=None, *, depth: int = 100, seed: int = 0,
                pooled: list[str] | None = None, topics: list[str] | None = None,
                **params) -> dict[str, pd.DataFrame]:
    """Per topic, the pool table `next_documents` judges from under a static `strategy` when it is given
    no pool: the pool built for that topic alone (`seed` for each topic), from one candidate table over
    every topic (`topics`: only those). Topics no pooled run retrieved are absent."""
    from ..pooling import STATIC, build_pool
    from ..pooling.candidates import pool_candidates, ranked_runs
    from ..pooling.static import SAMPLING
    if strategy not in STATIC:
        raise CranfieldError(f"strategy {strategy!r}: per-topic pools are built for static strategies only "
                             f"({', '.join(STATIC)})")
    cand = pool_candidates(ranked_runs(runs, depth, pooled, topics), depth)
    if strategy not in SAMPLING:        # no random draw: each topic's selection is its own, built in one pass
        whole = build_pool(None, strategy, budget, depth=depth, seed=seed, pooled=pooled, candidates=cand,
                           **params).table
        at = whole.groupby("topic", sort=False).indices
        none = np.zeros(0, np.int64)                        # a topic none of whose candidates is selected
        return {str(t): whole.iloc[at.get(t, none)].reset_index(drop=True) for t in pd.unique(cand["topic"])}
    out = {}
    for t, rows in cand.groupby("topic", sort=False).indices.items():
        one = cand.iloc[rows].reset_index(drop=True)        # the candidates of the topic alone, same order
        out[str(t)] = build_pool(None, strategy, budget, depth=depth, seed=seed, pooled=pooled, candidates=one,
                                 **params).table            # a generator seeded alike for every topic
    return out


def record_judgment(root, topic, doc, grade, assessor="", seconds=None, strategy=None,
                    new_topic: bool = False, override_lease: bool = False) -> dict:
    """Check one judgment against the campaign (engine.judging.checks) and the judging leases (a document
    another assessor holds raises sessions.LeaseHeld unless `override_lease`), then append it to the log;
    returns the record once it is durable. The assessor's lease, if any, becomes a `done` mark."""
    from . import sessions
    from .checks import check_new_judgment
    check_new_judgment(root, str(topic), grade, seconds, assessor, strategy, new_topic)
    rec = judgment_record(topic, doc, grade, assessor, seconds, strategy)
    if not override_lease:
        sessions.check_lease(root, rec["topic"], rec["doc"], rec["assessor"])
    rec["action"] = "judge"             # the same form as the TUI's and the browser desk's lines (record_action)
    leases = fs.is_file(sessions.leases_path(root))
    append_records(log_path(root), [rec])
    if leases:
        sessions.release(root, rec["topic"], rec["doc"], rec["assessor"], judged=True)
    return rec


def export_batch(pool: pd.DataFrame, judged: pd.DataFrame, path, fmt: str | None = None,
                 topics=None, limit: int | None = None, docs: dict | None = None) -> int:
    """Write the pool's not-yet-judged documents, in judging order, as an assessor batch
    (TSV with header topic, doc, order, stratum[, title]; or JSONL). Returns the rows written."""
    from ..formats.files import write_text

    p = Path(path)
    fmt = fmt or ("jsonl" if p.suffix == ".jsonl" else "tsv")
    if fmt not in ("tsv", "jsonl"):
        raise CranfieldError(f"batch format {fmt!r}: tsv or jsonl")
    t = pool[pool["order"] > 0]
    if topics is not None:
        t = t[t["topic"].astype(str).isin(set(map(str, topics)))]
    if len(judged):
        key = set(zip(judged["topic"].astype(str), judged["doc"].astype(str)))
        t = t[[(a, b) not in key for a, b in zip(t["topic"].astype(str), t["doc"].astype(str))]]
    t = t.sort_values(["topic", "order"], kind="mergesort")
    if limit is not None:
        t = t.groupby("topic", sort=False).head(int(limit))
    out = t[["topic", "doc", "order", "stratum"]].copy()
    if docs:
        out["title"] = out["doc"].map(lambda d: (docs.get(d) or {}).get("title", ""))
    if fmt == "tsv":
        from ..formats.text_tables import format_table
        write_text(p, format_table(out, "tsv"))
    else:
        write_text(p, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out.to_dict("records")))
    return len(out)


# ---------------------------------------------------------------------------- exports
# Files are written by engine.formats (write_qrels, write_prels, write_sample).

def sample_qrels(pool: pd.DataFrame, judged: pd.DataFrame, warnings: Warnings | None = None) -> pd.DataFrame:
    """sample_eval-style judgments reproducing the sampling design: every pool row with the stratum and
    inclusion probability it was drawn under, the grade where the document was drawn (pool `order` > 0)
    and judged, and -1 where it was in the frame but not drawn, even when it was judged for another
    reason (another pool, a manual judgment): counting those as sampled would bias the estimates.
    Judged documents outside the pool, or in it but not drawn, are left out (reported)."""
    j = judged[judged["grade"] >= 0][["topic", "doc", "grade"]].astype({"topic": str, "doc": str})
    p = pool.astype({"topic": str, "doc": str})
    m = p.merge(j, on=["topic", "doc"], how="left")
    drawn = m["order"].to_numpy() > 0 if "order" in m.columns else np.ones(len(m), bool)
    judged_here = m["grade"].notna().to_numpy()
    m["grade"] = np.where(drawn & judged_here, m["grade"].fillna(-1), -1).astype(np.int64)
    outside = len(j) - int(judged_here.sum())
    if outside and warnings is not None:
        warnings.add("judgments", None, f"{outside} judged document(s) are not in the pool and are left "
                                        f"out of the sample qrels (no inclusion probability)")
    not_drawn = int((judged_here & ~drawn).sum())
    if not_drawn and warnings is not None:
        warnings.add("judgments", None, f"{not_drawn} judged document(s) are in the pool's sampling frame but "
                                        f"were not drawn by it: written with grade -1 (pooled, not sampled)")
    pending = int((drawn & ~judged_here).sum())
    if pending and warnings is not None:
        warnings.add("judgments", None, f"{pending} drawn document(s) are not judged yet: written with grade -1")
    return m[["topic", "doc", "grade", "stratum", "prob", "method"]].reset_index(drop=True)


def read_judgment_file(path, warnings: Warnings | None = None, rule: str = "last") -> pd.DataFrame:
    """Any judgment file: a judgment log (.jsonl, resolved by `rule`) or qrels / prels / sample_eval
    qrels (read by engine.formats). Columns topic, doc, grade[, method, prob, stratum]."""
    from ..formats.detect import read_judgments
    w = warnings if warnings is not None else Warnings()
    p = Path(path)
    if p.name.endswith(".jsonl"):
        return merged_log(p, rule, w)
    return read_judgments(p, w, rule=rule)


# ---------------------------------------------------------------------------- summaries

def judgment_summary(judged: pd.DataFrame, rel_level: int = 1, categories: pd.Series | dict | None = None,
                     targets: pd.Series | dict | None = None) -> dict:
    """Per topic and overall: judged, count per grade, relevant (grade >= rel_level), fraction
    relevant; by query category and by judgment target when given. Negative grades (pooled, not
    judged) are counted as `unjudged`. Returns a dict of DataFrames: topics, overall, by_category,
    by_target, by_category_target."""
    d = judged[["topic", "doc", "grade"]].astype({"topic": str})
    j = d[d["grade"] >= 0]
    grades = sorted(j["grade"].unique().tolist()) or [0]
    per = j.pivot_table(index="topic", columns="grade", values="doc", aggfunc="size", fill_value=0)
    per = per.reindex(columns=grades, fill_value=0)
    per.columns = [f"grade_{g}" for g in per.columns]
    all_topics = pd.Index(sorted(d["topic"].unique(), key=natural_key), name="topic")
    per = per.reindex(all_topics, fill_value=0)
    per.insert(0, "judged", per.sum(axis=1).astype(np.int64))
    rel_cols = [f"grade_{g}" for g in grades if g >= rel_level]
    per["relevant"] = per[rel_cols].sum(axis=1).astype(np.int64) if rel_cols else 0
    per["frac_relevant"] = np.divide(per["relevant"], per["judged"], out=np.zeros(len(per)),
                                     where=per["judged"] > 0)
    unj = d[d["grade"] < 0].groupby("topic").size()
    if len(unj):
        per["unjudged"] = unj.reindex(per.index, fill_value=0).astype(np.int64)
    if categories is not None:
        per["category"] = pd.Series(categories, dtype=object).rename(index=str).reindex(per.index).fillna("-")
    if targets is not None:
        per["target"] = pd.Series(targets).rename(index=str).reindex(per.index).fillna(0).astype(np.int64)
    per = per.reset_index()
    out = {"topics": per, "overall": _group_table(per, None, grades)}
    if "category" in per:
        out["by_category"] = _group_table(per, "category", grades)
    if "target" in per:
        out["by_target"] = _group_table(per, "target", grades)
    if "category" in per and "target" in per:
        out["by_category_target"] = _category_target(per)
    return out


def _group_table(per: pd.DataFrame, by: str | None, grades) -> pd.DataFrame:
    cols = ["judged"] + [f"grade_{g}" for g in grades] + ["relevant"] + (["unjudged"] if "unjudged" in per else [])
    if by is None:
        s = per[cols].sum().to_frame().T
        s.insert(0, "topics", len(per))
    else:
        g = per.groupby(by, sort=True)
        s = g[cols].sum()
        s.insert(0, "topics", g.size())
        s = s.reset_index()
    s["frac_relevant"] = np.divide(s["relevant"].astype(float), s["judged"].astype(float),
                                   out=np.zeros(len(s)), where=s["judged"].to_numpy() > 0)
    s["judged_per_topic"] = s["judged"] / s["topics"]
    return s.reset_index(drop=True)


def _category_target(per: pd.DataFrame) -> pd.DataFrame:
    """Thesis Table 3.2 layout: topics (mean judgments per topic) per category x target, with totals."""
    def cell(x):
        return f"{len(x)} ({x.mean():.2f})"
    tab = per.pivot_table(index="category", columns="target", values="judged", aggfunc=cell)
    tab["total"] = per.groupby("category")["judged"].agg(cell)
    tot = per.groupby("target")["judged"].agg(cell)
    tot["total"] = cell(per["judged"])
    tab.loc["total"] = tot
    tab.columns = [str(c) for c in tab.columns]
    return tab.fillna("-").reset_index()
