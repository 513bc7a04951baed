"""Assessor-time cost model and design costs (kanoulas thesis 3.2.5.2, Table 3.4).

Per query of category c with target j judgments the model charges
    (nr_c - 1) * tl_c + tf_c + tt_c + tj_{c,j} * j   seconds,
where nr_c is the number of query lists viewed, tl_c the seconds per list, tf_c the seconds on the final
list, tt_c the seconds defining the topic, and tj_{c,j} the seconds per judgment at target j.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import CranfieldError

TARGETS = (8, 16, 32, 64, 128)


@dataclass(frozen=True)
class CategoryTimes:
    """Median assessor times (seconds) for one query category."""

    refresh: float                       # nr: query lists viewed (count)
    view: float                          # tl: seconds looking at one list of 10 queries
    lastview: float                      # tf: seconds on the final list
    topic: float                         # tt: seconds defining the topic
    judgment: Mapping[int, float]        # tj: seconds per judgment, by target
    judgment_avg: float                  # tj averaged over targets (Table 3.4 'average' column)

    @property
    def overhead(self) -> float:
        """Seconds per query before any judgment: (nr - 1) tl + tf + tt."""
        return (self.refresh - 1.0) * self.view + self.lastview + self.topic

    def seconds_per_judgment(self, j: float, by_target: bool = True) -> float:
        """tj for target j: the table's value at j, log-interpolated between targets, clamped outside."""
        if not by_target or not self.judgment:
            return self.judgment_avg
        ts = sorted(self.judgment)
        if j in self.judgment:
            return float(self.judgment[j])
        x = math.log2(max(j, 1e-9))
        xs = [math.log2(t) for t in ts]
        return float(np.interp(x, xs, [self.judgment[t] for t in ts]))


# Table 3.4 of the thesis (median seconds; refresh is the mean number of lists viewed).
TABLE_3_4: dict[str, CategoryTimes] = {
    "short": CategoryTimes(2.34, 18.0, 25.5, 67.6, {8: 15.0, 16: 11.5, 32: 13.5, 64: 12.0, 128: 8.5}, 12.5),
    "long": CategoryTimes(2.54, 24.5, 31.0, 86.5, {8: 17.0, 16: 14.0, 32: 16.5, 64: 10.0, 128: 10.5}, 13.0),
    "slant": CategoryTimes(2.22, 22.5, 29.0, 76.0, {8: 13.0, 16: 12.5, 32: 13.0, 64: 9.5, 128: 10.5}, 12.0),
    "heavy": CategoryTimes(2.65, 20.0, 27.5, 78.0, {8: 19.0, 16: 13.0, 32: 17.0, 64: 12.5, 128: 8.5}, 13.5),
    "average": CategoryTimes(2.41, 22.0, 29.0, 76.0, {8: 15.0, 16: 13.0, 32: 15.0, 64: 11.0, 128: 9.0}, 13.0),
}


@dataclass(frozen=True)
class CostModel:
    """Times per query category; `default` names the category used when a query has none."""

    categories: Mapping[str, CategoryTimes] = field(default_factory=lambda: dict(TABLE_3_4))
    default: str = "average"
    by_target: bool = True     # per-target judgment times (False: the 'average' column, as thesis Fig 3.14)
    source: str = "kanoulas thesis Table 3.4"

    def describe(self) -> str:
        """Where the times come from and which times are used (for printed output)."""
        return self.source + ("; median time per judgment by judging target" if self.by_target
                              else "; one time per judgment, averaged over judging targets")

    def times(self, category: str | None) -> CategoryTimes:
        c = category if category is not None else self.default
        if c not in self.categories:
            raise CranfieldError(f"cost model has no times for query category {c!r} "
                                 f"(known: {', '.join(self.categories)}); add it under cost.categories "
                                 f"in campaign.yaml or map the category to a known one")
        return self.categories[c]

    def query_seconds(self, j: float, category: str | None = None, judged: float | None = None) -> float:
        """Seconds for one query of `category` with target j (charging `judged` judgments if given)."""
        t = self.times(category)
        n = j if judged is None else judged
        return t.overhead + t.seconds_per_judgment(j, self.by_target) * n

    def design_seconds(self, n_queries: float, j: float, mix: Mapping[str, float] | None = None) -> float:
        """Seconds for n_queries queries with target j each, split over categories by `mix` shares."""
        if not mix:
            return n_queries * self.query_seconds(j)
        total = sum(mix.values())
        if total <= 0:
            raise CranfieldError("category mix shares must sum to a positive number")
        return sum(n_queries * (share / total) * self.query_seconds(j, c) for c, share in mix.items())

    def design_hours(self, n_queries: float, j: float, mix: Mapping[str, float] | None = None) -> float:
        return self.design_seconds(n_queries, j, mix) / 3600.0


def model_from_config(cfg: Mapping | None, base: CostModel | None = None) -> CostModel:
    """Apply campaign.yaml `cost:` overrides to the defaults.

    Accepted keys: default (category name), by_target (bool), categories: {name: {refresh, view,
    lastview, topic, judgment: {target: seconds}, judgment_avg}} — any subset; unspecified values keep
    the base category's (or the 'average' row's) values.
    """
    model = base or CostModel()
    if not cfg:
        return model
    allowed = {"default", "by_target", "categories"}
    for k in cfg:
        if k not in allowed:
            raise CranfieldError(f"campaign.yaml: cost.{k}: unknown key (allowed: {', '.join(sorted(allowed))})")
    cats = dict(model.categories)
    for name, spec in (cfg.get("categories") or {}).items():
        if not isinstance(spec, Mapping):
            raise CranfieldError(f"campaign.yaml: cost.categories.{name}: must be a mapping of times")
        base_t = cats.get(str(name), cats.get("average", TABLE_3_4["average"]))
        kw = {}
        for key in ("refresh", "view", "lastview", "topic", "judgment_avg"):
            if key in spec:
                v = spec[key]
                if not isinstance(v, (int, float)) or v < 0:
                    raise CranfieldError(f"campaign.yaml: cost.categories.{name}.{key}: must be a "
                                         f"non-negative number of seconds, got {v!r}")
                kw[key] = float(v)
        if "judgment" in spec:
            jt = spec["judgment"]
            if not isinstance(jt, Mapping):
                raise CranfieldError(f"campaign.yaml: cost.categories.{name}.judgment: must map target -> seconds")
            try:
                kw["judgment"] = {int(t): float(s) for t, s in jt.items()}
            except (TypeError, ValueError):
                raise CranfieldError(f"campaign.yaml: cost.categories.{name}.judgment: targets must be "
                                     f"integers and times numbers") from None
        for key in spec:
            if key not in {"refresh", "view", "lastview", "topic", "judgment", "judgment_avg"}:
                raise CranfieldError(f"campaign.yaml: cost.categories.{name}.{key}: unknown key")
        cats[str(name)] = replace(base_t, **kw)
    default = str(cfg.get("default", model.default))
    if default not in cats:
        raise CranfieldError(f"campaign.yaml: cost.default: category {default!r} has no times")
    return CostModel(cats, default, bool(cfg.get("by_target", model.by_target)),
                     source="campaign.yaml overrides of " + model.source)


def fit_from_log(log: pd.DataFrame, categories: Mapping[str, str] | None = None,
                 targets: Mapping[str, int] | None = None, base: CostModel | None = None,
                 min_obs: int = 5) -> tuple[CostModel, pd.DataFrame]:
    """Fit per-judgment times (robust medians) from a judging log.

    `log` has columns topic, seconds (and optionally op: 'judge' rows are judgments, 'topic' rows carry
    topic-definition seconds). Medians, not means: breaks skew the distribution (thesis 3.2.5.2).
    Cells with fewer than `min_obs` observations keep the base value. Returns the model and a table of
    what was fitted (category, target, n, median seconds, used).
    """
    model = base or CostModel()
    if log is None or len(log) == 0 or "seconds" not in log:
        return model, pd.DataFrame(columns=["category", "target", "n", "median_seconds", "used"])
    df = log.copy()
    if "op" in df:
        topic_rows = df[df["op"] == "topic"]
        df = df[df["op"].fillna("judge") == "judge"]
    else:
        topic_rows = df.iloc[0:0]
    df = df[pd.to_numeric(df["seconds"], errors="coerce").notna()]
    df["seconds"] = df["seconds"].astype(float)
    df = df[df["seconds"] >= 0]
    cat_of = (lambda t: (categories or {}).get(str(t), model.default))
    tgt_of = (lambda t: (targets or {}).get(str(t)))
    df["category"] = df["topic"].astype(str).map(cat_of)
    df["target"] = df["topic"].astype(str).map(tgt_of)
    rows = []
    cats = dict(model.categories)
    for cat, grp in df.groupby("category"):
        base_t = cats.get(cat, cats[model.default])
        jt = dict(base_t.judgment)
        for tgt, g2 in grp.dropna(subset=["target"]).groupby("target"):
            med = float(np.median(g2["seconds"]))
            used = len(g2) >= min_obs
            rows.append((cat, int(tgt), len(g2), med, used))
            if used:
                jt[int(tgt)] = med
        med_all = float(np.median(grp["seconds"]))
        used_all = len(grp) >= min_obs
        rows.append((cat, "all", len(grp), med_all, used_all))
        kw = {"judgment": jt}
        if used_all:
            kw["judgment_avg"] = med_all
        tr = topic_rows[topic_rows["topic"].astype(str).map(cat_of) == cat] if len(topic_rows) else topic_rows
        if len(tr) >= min_obs:
            kw["topic"] = float(np.median(tr["seconds"].astype(float)))
            rows.append((cat, "topic", len(tr), kw["topic"], True))
        cats[cat] = replace(base_t, **kw)
    fitted = pd.DataFrame(rows, columns=["category", "target", "n", "median_seconds", "used"])
    return CostModel(cats, model.default, model.by_target, source="fitted from the judging log"), fitted


def infer_targets(counts: pd.Series, targets: Iterable[int] = TARGETS) -> pd.Series:
    """Judgment target of each topic: the smallest target >= its judgment count.

    Collisions between selection methods can only lower a topic's count below its target (thesis 3.2.4),
    so this recovers the Million Query 2008 assignment exactly (Table 3.2: 403/204/102/50/25 topics).
    Counts above the largest target map to the largest.
    """
    ts = np.array(sorted(targets))
    idx = np.searchsorted(ts, counts.to_numpy(), side="left")
    idx = np.minimum(idx, len(ts) - 1)
    return pd.Series(ts[idx], index=counts.index, name="target")


def judging_effort(judgments: pd.DataFrame, model: CostModel | None = None,
                   categories: Mapping[str, str] | None = None,
                   targets: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Estimated assessor seconds per topic of an existing judgment set.

    Each topic is charged the query overhead of its category plus, per judgment made, the seconds per
    judgment at its target. Columns: topic, category, target, judged, overhead_s, judging_s, seconds.
    """
    model = model or CostModel()
    counts = judgments.groupby("topic").size()
    tg = pd.Series({t: (targets or {}).get(str(t)) for t in counts.index}, dtype="float64")
    inferred = infer_targets(counts)
    tg = tg.fillna(inferred).astype(int)
    cats = pd.Series({t: (categories or {}).get(str(t), model.default) for t in counts.index})
    over = np.array([model.times(c).overhead for c in cats])
    per = np.array([model.times(c).seconds_per_judgment(j, model.by_target) for c, j in zip(cats, tg)])
    out = pd.DataFrame({"topic": counts.index.astype(str), "category": cats.to_numpy(), "target": tg.to_numpy(),
                        "judged": counts.to_numpy(), "overhead_s": over, "judging_s": per * counts.to_numpy()})
    out["seconds"] = out["overhead_s"] + out["judging_s"]
    return out.reset_index(drop=True)


def effort_by_target(effort: pd.DataFrame) -> pd.DataFrame:
    """Per target class: topics, judgments, mean judgments per topic, hours (plus a total row)."""
    g = effort.groupby("target").agg(topics=("topic", "size"), judgments=("judged", "sum"),
                                      seconds=("seconds", "sum"))
    g["judged_per_topic"] = g["judgments"] / g["topics"]
    g["hours"] = g["seconds"] / 3600.0
    g = g.reset_index()
    g["target"] = g["target"].astype(str)
    total = pd.DataFrame({"target": ["total"], "topics": [g["topics"].sum()], "judgments": [g["judgments"].sum()],
                          "seconds": [g["seconds"].sum()],
                          "judged_per_topic": [g["judgments"].sum() / max(g["topics"].sum(), 1)],
                          "hours": [g["seconds"].sum() / 3600.0]})
    return pd.concat([g, total], ignore_index=True)[["target", "topics", "judgments", "judged_per_topic", "hours"]]
