"""One count of judging progress and one rule for the next document, for every path (CLI, TUI screens).

`judging_progress(camp, pool)`: per topic of a pool, pooled / judged / left, and per assessor the pooled
documents whose judgment stands in their name. A pool is one of pools/ (`pool`), else the newest one (the
pool the judging screen follows, engine.judging.sessions.active_pool). Judged means a judgment in force
(grade >= 0) in the campaign's merged judgments (imported files and the log).

`offer_next(camp, topic, assessor, ...)`: the documents of a topic an assessor may judge now, leased to
them (engine.judging.sessions.acquire_many, lease length judging.lease_seconds): documents leased to
others are skipped, double-judged ones go to one more assessor, the assessor's own "cannot judge" are
passed over; when none is offered, whether nothing is left or what is left is leased to others.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..errors import CranfieldError


@dataclass(frozen=True)
class JudgingProgress:
    """Progress against one pool: `topics` (topic, pooled, judged, left; pool order), `assessors`
    (assessor, judged; '' = imported judgments), `topic_assessors` (topic, assessor, judged)."""
    pool: str | None
    newest: bool
    topics: pd.DataFrame
    assessors: pd.DataFrame
    topic_assessors: pd.DataFrame

    @property
    def pooled(self) -> int:
        return int(self.topics["pooled"].sum())

    @property
    def judged(self) -> int:
        return int(self.topics["judged"].sum())

    @property
    def left(self) -> int:
        return int(self.topics["left"].sum())

    def topic(self, topic) -> tuple[int, int, int]:
        """(pooled, judged, left) of one topic; zeros for a topic the pool does not hold."""
        r = self.topics[self.topics["topic"] == str(topic)]
        return (0, 0, 0) if not len(r) else tuple(int(r[c].iat[0]) for c in ("pooled", "judged", "left"))

    def label(self) -> str:
        """The pool's name as messages give it: `day1 (the newest in pools/)` when it was not named."""
        return f"{self.pool} (the newest in pools/)" if self.newest else str(self.pool)


def _campaign(camp):
    if hasattr(camp, "qrels"):
        return camp
    from ..campaign.campaign import load_campaign
    return load_campaign(camp)


def pool_table(root, name: str | None) -> tuple[str | None, pd.DataFrame | None, bool]:
    """(name, rows with order > 0, newest): pools/pool-NAME.tsv, or the newest pool when `name` is None;
    (None, None, True) when pools/ holds none."""
    from .sessions import active_pool
    if name is None:
        n, t = active_pool(root)
        return n, t, True
    from ..pooling import pool_path, read_pool
    t = read_pool(pool_path(root, name))
    t = t[t["order"] > 0].astype({"topic": str, "doc": str}).reset_index(drop=True)
    return str(name), t, False


def judged_by(camp) -> dict[tuple[str, str], set[str]]:
    """(topic, doc) -> the assessors whose judgment stands in the log; '' for a judgment only imported."""
    from .sessions import _strings
    q = camp.qrels()
    q = q[q["grade"] >= 0]
    out: dict[tuple[str, str], set[str]] = {k: {""} for k in zip(_strings(q["topic"]), _strings(q["doc"]))}
    log = camp.log()
    if log is not None and len(log):
        from ..judgments.log import apply_undo
        j = apply_undo(log)
        for t, d, a in zip(_strings(j["topic"]), _strings(j["doc"]), _strings(j["assessor"])):
            out[(t, d)] = (out.get((t, d), set()) - {""}) | {a}
    return out


def judging_progress(camp, pool: str | None = None, *, by: dict | None = None,
                     table: tuple | None = None) -> JudgingProgress:
    """Pooled / judged / left per topic of pool `pool` (default: the newest in pools/) and judged per
    assessor; `camp` a Campaign or its directory; `by`: judged_by(camp) and `table`: pool_table(root, pool)
    when the caller has them. With no pool, empty tables (pool None)."""
    from .sessions import _strings, pool_progress
    camp = _campaign(camp)
    name, pt, newest = pool_table(camp.root, pool) if table is None else table
    if pt is None:
        empty = pd.DataFrame({"topic": pd.Series([], dtype=object), "pooled": [], "judged": [], "left": []})
        return JudgingProgress(None, True, empty.astype({c: "int64" for c in ("pooled", "judged", "left")}),
                               pd.DataFrame({"assessor": [], "judged": []}),
                               pd.DataFrame({"topic": [], "assessor": [], "judged": []}))
    from ..judgments.canaries import with_people_canaries
    per = pool_progress(pt, with_people_canaries(camp, camp.qrels()))     # a judged canary is done, as any document
    per = per[per["topic"] != "all"].reset_index(drop=True)
    by = judged_by(camp) if by is None else by
    keys = pt[["topic", "doc"]].drop_duplicates()
    rows = [(t, a) for t, d in zip(_strings(keys["topic"]), _strings(keys["doc"])) for a in by.get((t, d), ())]
    ta = pd.DataFrame(rows, columns=["topic", "assessor"], dtype=object)
    ta = ta.groupby(["topic", "assessor"], sort=False).size().rename("judged").reset_index()
    tot = ta.groupby("assessor", sort=True)["judged"].sum().reset_index()
    return JudgingProgress(name, newest, per, tot, ta)


@dataclass
class Offer:
    """What `offer_next` gives: `docs` leased to the assessor (judging order); when empty, `leased`
    maps the documents left that others hold to (holder, expiry). `limit` names what was searched."""
    topic: str
    docs: list[str]
    limit: str
    pool: str | None = None
    progress: JudgingProgress | None = None
    leased: dict[str, tuple[str, float]] = field(default_factory=dict)


def offer_next(camp, topic, assessor: str, k: int = 1, *, pool: str | None = None, strategy: str | None = None,
               depth: int | None = None, seed: int = 0, budget=None, skip=(), now: float | None = None,
               candidates: list[str] | None = None, random_order: bool | None = None,
               lease: bool = True) -> Offer:
    """Lease the next `k` documents of `topic` to `assessor`: from pool `pool`, else the newest in pools/,
    else the campaign's strategy to `depth` over the pooled runs (none written); `skip`: (topic, doc)
    pairs passed over this session (a screen's skipped documents). `candidates`: with no pool, the
    strategy's documents of the topic in judging order when the caller has them (a screen's kept per-topic
    pools); `random_order`: instead of judging.random_order; `lease=False`: the documents that would be
    offered, none leased (a read-only campaign, a preview)."""
    from . import sessions as assess
    from .workflow import next_documents
    camp = _campaign(camp)
    topic = str(topic)
    jcfg = assess.judging_config({"judging": camp.judging()})
    by = judged_by(camp)
    name, pt, newest = pool_table(camp.root, pool)
    prog = None
    if pt is not None:
        prog = judging_progress(camp, pool, by=by, table=(name, pt, newest))
        rows = pt[pt["topic"] == topic].sort_values("order", kind="mergesort")
        cands = list(dict.fromkeys(rows["doc"].astype(str)))
        limit = f"in pool {prog.label()}" + ("" if cands else ", which holds no document of this topic")
        frac = assess.pool_double_fraction(camp.root, name)
    elif candidates is not None:
        cands = [str(d) for d in candidates]
        pcfg = camp.pool()
        limit = f"under strategy {strategy or pcfg['strategy']} at depth {int(depth or pcfg['depth'])} (no pool in pools/)"
        frac = None
    else:
        pcfg = camp.pool()
        strategy = strategy or str(pcfg["strategy"])
        depth = int(depth or pcfg["depth"])
        meta = camp.run_meta()
        pooled = None
        if meta is not None and len(meta) and "pooled" in meta:
            pooled = meta.loc[meta["pooled"].astype(bool), "run"].astype(str).tolist() or None
        q = camp.qrels()
        cands = next_documents(camp.runs(), q[q["grade"] >= 0], topic, strategy, k=1 << 30, depth=depth,
                               pooled=pooled, seed=seed, budget=budget)
        limit = f"under strategy {strategy} at depth {depth} (no pool in pools/)"
        frac = None
    frac = float(jcfg["double_fraction"]) if frac is None else frac
    cannot = set(skip)
    log = camp.log()
    if log is not None and len(log) and "op" in log:
        c = log[(log["op"] == "cannot_judge") & (log["assessor"].astype(str) == assessor)]
        cannot |= set(zip(c["topic"].astype(str), c["doc"].astype(str)))
    open_docs = []
    for d in cands:
        who = by.get((topic, d), set())
        if (topic, d) in cannot or assessor in who:
            continue
        second = assess.is_double(topic, d, frac) and "" not in who and len(who) < 2
        if who and not second:
            continue
        open_docs.append(d)
    rand = bool(jcfg["random_order"]) if random_order is None else bool(random_order)
    open_docs = assess.order_documents(open_docs, topic, assessor, rand)
    double = {(topic, d) for d in open_docs if assess.is_double(topic, d, frac)}
    if k < 1:
        raise CranfieldError(f"-k {k}: ask for at least one document")
    if not lease:
        return Offer(topic, open_docs[:k], limit, name, prog)
    docs = assess.acquire_many(camp.root, topic, open_docs, assessor, k, judged_by=by, double=double,
                               seconds=float(jcfg["lease_seconds"]), now=now) if open_docs else []
    offer = Offer(topic, docs, limit, name, prog)
    if not docs and open_docs:
        import time
        held = assess.leases_held_by_others(assess.read_leases(camp.root), assessor,
                                            time.time() if now is None else now)
        offer.leased = {d: held[(topic, d)] for d in open_docs if (topic, d) in held}
    return offer
