"""The pool, judge-progress and cost screens' view model: pool building and previews, judging progress and
effort, the cost-benefit planner (engine.pooling, engine.planning)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from engine.util.names import natural_key

from .core import ModelCore


class PoolsView:
    """The pool (p), home progress and cost (c) screens' engine calls and tables."""

    def pool_progress(self) -> pd.DataFrame:
        """Per topic: judged (every judgment in force, as `cranfield status`), left (documents of the newest
        pool nobody has judged: engine.judging.progress.judging_progress, status's "pool left"; without a
        pool, the pooled-but-unjudged marks), target (the campaign's target, else judged + left), relevant,
        share done (1 only when the target is reached and nothing is left)."""
        q = self.qrels
        now = self.judging.judged()            # the judgments as they are now (the log read again)
        prog = self.judging.progress()
        topics = sorted(set(self.topics["topic"].astype(str)) | set(q["topic"].astype(str))
                        | set(prog.topics["topic"].astype(str)), key=natural_key)
        judged = now.groupby(now["topic"].astype(str)).size().reindex(topics).fillna(0).astype(np.int64)
        if prog.pool is not None:              # the active (newest) pool, the one being judged
            left = pd.Series(prog.topics["left"].to_numpy(), index=prog.topics["topic"].astype(str))
        else:
            marks = q[q["grade"] < 0][["topic", "doc"]].astype(str)
            marks = marks.merge(now[["topic", "doc"]].astype(str), how="left", indicator=True)
            left = marks[marks["_merge"] == "left_only"].groupby("topic").size()
        left = left.reindex(topics).fillna(0).astype(np.int64)
        tg = self.o.targets()
        target = pd.Series([tg.get(t, 0) for t in topics], index=topics, dtype=np.int64)
        target = target.where(target > 0, judged + left)
        rel = now[now["grade"] >= self.options.rel_level].groupby(now["topic"].astype(str)).size()
        rel = rel.reindex(topics).fillna(0)
        j, lt = judged.to_numpy(float), left.to_numpy(float)
        done = np.minimum(np.divide(j, target.to_numpy(float), out=np.zeros(len(topics)), where=target.to_numpy() > 0),
                          np.divide(j, j + lt, out=np.ones(len(topics)), where=j + lt > 0))   # < 1 while any is left
        return pd.DataFrame({"topic": topics, "judged": judged.to_numpy(), "left": left.to_numpy(),
                             "target": target.to_numpy(), "relevant": rel.astype(np.int64).to_numpy(),
                             "done": np.minimum(done, 1.0)})

    @staticmethod
    def pool_strategies() -> tuple:
        """Names of the static pooling strategies."""
        from engine.pooling import STATIC
        return tuple(STATIC)

    @staticmethod
    def pool_choices() -> list[str]:
        """The pooling strategies the pool builder offers (every strategy but the online ones)."""
        from engine.pooling import ONLINE, STRATEGIES
        return [s for s in STRATEGIES if s not in ONLINE]

    @staticmethod
    def parse_budget(text: str | None):
        """A per-topic pool budget from its text form (engine.pooling.parse_budget)."""
        from engine.pooling import parse_budget
        return parse_budget(text)

    def build_pool(self, strategy: str, budget, *, depth: int, seed: int, pooled: list[str] | None):
        """A pool over this campaign's runs through the campaign seam (engine.evaluation.pool_campaign)."""
        from engine.campaign.experiments import pool_campaign
        return pool_campaign(self.o.engine_campaign, strategy, budget, depth=depth, seed=seed, pooled=pooled,
                             rel_level=self.options.rel_level)

    def write_pool(self, name: str, pool) -> Path:
        """Write a built pool under pools/ and forget the cached pool table; the path written."""
        from engine.pooling import write_pool
        path = write_pool(self.root, name, pool)
        self._pools = None
        return path

    def judging_effort(self) -> tuple[int, pd.DataFrame, float, str] | None:
        """The judgments made so far: (count, effort by target, hours, cost-model source), None if none."""
        from engine.planning.cost import effort_by_target, judging_effort
        judged = self.qrels[self.qrels["grade"] >= 0]
        if len(judged) == 0:
            return None
        cm = cost_model(self.config)
        eff = judging_effort(judged, cm, self.o.categories() or None, self.o.targets() or None)
        return len(judged), effort_by_target(eff), float(eff["seconds"].sum()) / 3600, cm.source

    def plan(self, measure: str, *, trials: int, target_tau: float, target_phi: float, sample_topics: int,
             sample_rows: int = 2_000_000, progress=None, notify=None):
        """engine.planning.planner.plan of one measure (an output name, P_10, as the screens list them) on the
        judged topics; on a large campaign on a seeded random sample of `sample_topics` judged topics read
        from the run store; when those rows of every run are more than `sample_rows`, on a seeded random
        sample of runs holding about that many (the planner evaluates its designs on them many times: its
        memory and time stay bounded; `notify` is told of each sample)."""
        from engine.measures.registry import request_for_output
        from engine.planning.planner import plan
        req = request_for_output(measure)           # the planner evaluates a spec (P.10), not an output name
        spec = req.measure.name + (f".{req.param_text}" if req.param_text else "")
        q, runs = self.qrels[self.qrels["grade"] >= 0], self.runs
        if self.large:
            topics = sorted(set(q["topic"].astype(str)))
            if len(topics) > sample_topics:
                rng = np.random.default_rng(0)
                topics = sorted(rng.choice(topics, sample_topics, replace=False).tolist())
                if notify is not None:
                    notify(f"planning on a random sample of {sample_topics} of the {len(set(q['topic']))} "
                           f"judged topics (large campaign)")
            q = q[q["topic"].astype(str).isin(set(topics))]
            runs = self.run_rows(self._plan_runs(topics, sample_rows, notify), topics=topics)
        elif len(runs) > sample_rows:
            keep = self._plan_runs(None, sample_rows, notify)
            runs = runs[runs["run"].isin(set(keep))]
        return plan(q, runs, measure=spec, trials=trials, model=cost_model(self.config), target_tau=target_tau,
                    target_phi=target_phi, progress=progress)

    def _plan_runs(self, topics: list[str] | None, sample_rows: int, notify=None) -> list[str]:
        """The runs (campaign names, in campaign order) the planner works on: all, or a seeded random sample
        of them whose rows of `topics` (all when None) come to about `sample_rows`."""
        if self.large:
            rename = self.run_renames()
            ix = self.store.index
            if topics is not None:
                ix = ix[ix["topic"].astype(str).isin(set(topics))]
            per = ix.groupby("run", sort=False)["rows"].sum()
            names = [rename.get(t, t) for t in self.store.runs]
            rows = per.reindex(self.store.runs).fillna(0).to_numpy(np.int64)
        else:
            counts = self.runs["run"].value_counts(sort=False)     # (categorical: per category, no strings)
            counts = counts[counts > 0]
            names, rows = [str(x) for x in counts.index], counts.to_numpy(np.int64)
        total = int(rows.sum())
        if total <= sample_rows or len(names) <= 2:
            return names
        k = max(2, min(len(names), int(len(names) * sample_rows / total)))
        pick = np.sort(np.random.default_rng(0).choice(len(names), k, replace=False))
        if notify is not None:
            notify(f"planning on a random sample of {k} of the {len(names)} runs ({total:,} rows over the "
                   f"topics planned on; at most about {sample_rows:,} are evaluated per design)")
        return [names[i] for i in pick]


# ---------------------------------------------------------------------- pools and cost (engine parts)

def cost_model(config: dict):
    """The campaign's assessor-time model (engine.planning.cost defaults with campaign.yaml overrides)."""
    from engine.planning.cost import model_from_config
    return model_from_config(config.get("cost") or None)


def pool_preview(model: ModelCore, table: pd.DataFrame) -> pd.DataFrame:
    """Per topic of a built pool: frame size, documents to judge, already judged, new, expected hours."""
    cm = cost_model(model.config)
    cats = model.o.categories()
    from engine.pooling import judged_in_pool
    sel = table[table["order"] > 0]
    sel = sel.assign(known=judged_in_pool(table, model.qrels).to_numpy())
    topics = sorted(table["topic"].astype(str).unique(), key=natural_key)
    frame = table.groupby("topic").size().reindex(topics).fillna(0).astype(np.int64)
    g = sel.groupby("topic")
    n_sel = g.size().reindex(topics).fillna(0).astype(np.int64)
    n_known = g["known"].sum().reindex(topics).fillna(0).astype(np.int64)
    new = n_sel - n_known
    hours = []
    for t, n, k in zip(topics, n_sel.to_numpy(), new.to_numpy()):
        c = cats.get(t)
        if c is not None and c not in cm.categories:
            c = None
        hours.append(cm.query_seconds(max(int(n), 1), c, judged=int(k)) / 3600.0 if k > 0 else 0.0)
    return pd.DataFrame({"topic": topics, "frame": frame.to_numpy(), "to_judge": n_sel.to_numpy(),
                         "judged": n_known.to_numpy(), "new": new.to_numpy(), "hours": np.asarray(hours)})

