"""The judging desk of the TUI model: every engine call the judge screen makes (judgment log, leases,
pools, automatic labels, guidelines), bound to one campaign. Reached as `CampaignModel.judging`."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.errors import CranfieldError


class JudgingDesk:
    """Judging operations on one opened campaign (`model` is its tui.model.CampaignModel)."""

    def __init__(self, model):
        self.model = model

    @property
    def root(self):
        return self.model.root

    # ------------------------------------------------------------------ configuration and pools
    def config(self, fallback: bool = False) -> dict:
        """campaign.yaml's judging section with the schema's defaults (`Campaign.judging`; `fallback`: the
        defaults alone)."""
        from engine.judging import sessions as assess
        camp = None if fallback else self.model.o.engine_campaign
        if camp is not None:
            return assess.judging_config({"judging": camp.judging()})
        return assess.judging_config({} if fallback else self.model.config)

    def conflict_rule(self) -> str:
        """How repeated judgments resolve (`Campaign.conflict_rule`; the schema's default without one)."""
        camp = self.model.o.engine_campaign
        if camp is not None:
            return camp.conflict_rule()
        from engine.campaign.config import section_defaults
        return str((self.model.config.get("judgments") or {}).get("conflict_rule")
                   or section_defaults("judgments")["conflict_rule"])

    def active_pool(self) -> tuple[str | None, pd.DataFrame | None]:
        """The pool being judged (newest written pool): (name, table), or (None, None)."""
        from engine.judging import sessions as assess
        return assess.active_pool(self.root)

    def pool_double_fraction(self, name: str) -> float | None:
        """The pool builder's double-judging share of pool `name`, if it set one."""
        from engine.judging import sessions as assess
        return assess.pool_double_fraction(self.root, name)

    def progress(self, by: dict | None = None):
        """Pooled / judged / left per topic of the newest pool and per assessor (the engine's one count,
        engine.judging.progress.judging_progress, as `cranfield status` and `judgments next` give it)."""
        from engine.judging.progress import judging_progress
        return judging_progress(self.model._engine_campaign(), by=by)

    def offer(self, topic: str, assessor: str, k: int = 1, **kw):
        """The next `k` documents of `topic` for `assessor`, leased to them (the engine's one rule,
        engine.judging.progress.offer_next; `kw` as there)."""
        from engine.judging.progress import offer_next
        return offer_next(self.model._engine_campaign(), topic, assessor, k, **kw)

    def guidelines(self) -> str:
        """The assessor guidelines text (campaign.yaml judging.guidelines)."""
        from engine.judging.sessions import guidelines_text
        return guidelines_text(self.root, {"judging": self.config()})

    def auto_labels(self, name: str | None) -> tuple[dict, str | None]:
        """Automatic labels for post-editing from source `name`, else the first automatic source:
        ({(topic, doc): grade}, source name or None)."""
        camp = self.model.o.engine_campaign
        if camp is None:
            return {}, None
        from engine.judgments.sources import list_sources, source_judgments
        if not name:
            autos = [s.name for s in list_sources(camp) if s.kind in ("auto", "simulated")]
            name = autos[0] if autos else None
        if not name:
            return {}, None
        q = source_judgments(camp, str(name), canaries=True)     # a planted canary shows its label as any document
        return {(t, d): int(g) for t, d, g in zip(q["topic"], q["doc"], q["grade"])}, str(name)

    def document(self, doc: str) -> dict | None:
        """{id, title, text} an assessor reads for `doc`: the docs store's, else a planted canary's
        (engine.campaign.desk_text.judging_document); None when neither holds it."""
        from engine.campaign.desk_text import judging_document
        return judging_document(self.root, doc, self.model.docs())

    # ------------------------------------------------------------------ the judgment log
    def log(self) -> pd.DataFrame | None:
        """Every entry of judgments/log.jsonl, or None when there is no log."""
        from engine.judging import workflow as judging
        lp = judging.log_path(self.root)
        return judging.read_log(lp) if lp.exists() else None

    def judged(self) -> pd.DataFrame:
        """The judgments in force now (imported files and the log, other assessors included; the campaign's
        merged judgments, re-read when a file changed): topic, doc, grade."""
        q = self.model._engine_campaign().qrels()
        return q.loc[q["grade"] >= 0, ["topic", "doc", "grade"]].reset_index(drop=True)

    def judged_by(self) -> dict:
        """(topic, doc) -> assessors whose judgment stands ('' for imported judgments;
        engine.judging.progress.judged_by)."""
        from engine.judging.progress import judged_by
        return judged_by(self.model._engine_campaign())

    def next_documents(self, topic: str, strategy: str, *, k: int, depth: int,
                       judged: pd.DataFrame | None = None) -> list[str]:
        """The next `k` documents of `topic` to judge under `strategy` over the pooled runs (`judged`:
        judged() when the caller has it). A static strategy's per-topic pools are built once for every
        topic (engine.judging.workflow.topic_pools) and kept; an online one replays the topic's judgments;
        a large campaign's pool is built for the topic alone, from its rows in the run store."""
        from engine.judging import workflow as judging
        from engine.pooling import ONLINE
        from engine.pooling.static import STATIC
        m = self.model
        judged = self.judged() if judged is None else judged
        if strategy in STATIC and not m.large:   # a large campaign's runs are read topic by topic, on demand
            pools = self.topic_pools(strategy, depth)
            if str(topic) not in pools:
                raise CranfieldError(f"topic {topic}: no pooled run retrieved anything (check the runs and the "
                                     f"pooled-run selection)")
            return judging.next_documents(None, judged, topic, strategy, k=k, depth=depth, pool=pools[str(topic)])
        runs, pooled = m.topic_runs(topic), self.pooled()
        if strategy in ONLINE and not m.large:    # the topic's rows alone: the same ranking, not every topic's rows
            runs = self.topic_rows(topic)
            if pooled is not None:             # a pooled run with nothing for this topic adds nothing
                here = set(runs["run"].astype(str).unique())
                pooled = [r for r in pooled if r in here]
        return judging.next_documents(runs, judged, topic, strategy, k=k, depth=depth, pooled=pooled,
                                      rel_level=m.options.rel_level)

    def pooled(self) -> list[str] | None:
        """The runs the campaign pools (None: every run)."""
        m = self.model
        return [r for r, p in zip(m.run_meta.index, m.run_meta["pooled"]) if p] or None

    def topic_pools(self, strategy: str, depth: int) -> dict[str, pd.DataFrame]:
        """Per topic, the pool a static `strategy` cut at `depth` judges from (no pool written): built once
        over every topic and kept for this campaign model (its runs do not change); not for a large
        campaign, whose runs stay in the run store."""
        from engine.judging import workflow as judging
        m = self.model
        pooled = self.pooled()
        key = (strategy, int(depth), None if pooled is None else tuple(pooled))
        cache = self.__dict__.setdefault("_topic_pools", {})
        if key not in cache:
            cache.clear()                     # one strategy and depth at a time (and its rows, topics_left)
            cache[key] = judging.topic_pools(m.runs, strategy, depth=int(depth), pooled=pooled)
        return cache[key]

    def topics_left(self, strategy: str, depth: int, judged: pd.DataFrame) -> set[str] | None:
        """The topics whose static-strategy pool (topic_pools) still has a document nobody has judged in
        `judged`; None for a strategy that has no such pools (online: every topic may have one)."""
        from engine.pooling.static import STATIC
        if strategy not in STATIC or self.model.large:
            return None
        pools = self.topic_pools(strategy, depth)
        if not pools:
            return set()
        key = ("rows", strategy, int(depth))
        cache = self.__dict__.setdefault("_topic_pools", {})
        if key not in cache:                  # every topic's documents to judge, in one table
            rows = pd.concat(list(pools.values()), ignore_index=True)
            cache[key] = rows.loc[rows["order"].to_numpy() > 0, ["topic", "doc"]].astype(str)
        done = judged[["topic", "doc"]].astype(str).drop_duplicates()
        left = cache[key].merge(done, on=["topic", "doc"], how="left", indicator=True)
        return set(left.loc[left["_merge"] == "left_only", "topic"])

    def topic_rows(self, topic: str) -> pd.DataFrame:
        """The run rows of one topic, in file order (the run table is split by topic once)."""
        m = self.model
        if m.large:
            return m.topic_runs(topic)
        split = self.__dict__.get("_split")
        if split is None:
            codes, uniq = pd.factorize(m.runs["topic"].astype(object).to_numpy(), sort=False)
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
            split = self._split = {str(t): order[bounds[i]:bounds[i + 1]] for i, t in enumerate(uniq)}
        return m.runs.iloc[split.get(str(topic), np.zeros(0, np.int64))]

    def record(self, topic: str, doc: str, grade: int, assessor: str, seconds: float, strategy: str, **kw) -> None:
        """Append a judgment (checked) to the log; a document another assessor holds the lease of raises
        engine.judging.sessions.LeaseHeld, as `judgments add` refuses it; `kw` as
        engine.judging.sessions.record_action."""
        from engine.judging import sessions as assess
        assess.record_action(self.root, topic, doc, grade, assessor, seconds, strategy, **kw)

    def record_cannot_judge(self, topic: str, doc: str, assessor: str, reason: str, seconds: float) -> None:
        from engine.judging import sessions as assess
        assess.record_cannot_judge(self.root, topic, doc, assessor, reason, seconds)

    def undo(self, topic: str, doc: str, assessor: str) -> None:
        """Undo `assessor`'s judgment of (topic, doc) in the log."""
        from engine.judging import workflow as judging
        judging.undo_judgment(self.root, topic, doc, assessor)

    # ------------------------------------------------------------------ leases
    @staticmethod
    def cannot_judge_reasons() -> tuple:
        from engine.judging import sessions as assess
        return tuple(assess.CANNOT_JUDGE_REASONS)

    def lease_seconds(self, jcfg: dict) -> float:
        from engine.judging import sessions as assess
        return jcfg.get("lease_seconds", assess.DEFAULT_LEASE_SECONDS)

    def acquire(self, topic: str, docs: list[str], assessor: str, **kw) -> str | None:
        """Lease the first of `docs` no other assessor holds; `kw` as engine.judging.sessions.acquire."""
        from engine.judging import sessions as assess
        return assess.acquire(self.root, topic, docs, assessor, **kw)

    def release(self, topic: str, doc: str, assessor: str, judged: bool = False) -> None:
        from engine.judging import sessions as assess
        assess.release(self.root, topic, doc, assessor, judged)

