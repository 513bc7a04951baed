"""Planning human judgments for prediction-powered intervals: from a pilot (the campaign so far), how many
human-judged topics give a PPI interval of width w on a measure's run means or pairwise differences, and
what they cost in assessor hours (engine.planning.cost). The formula is engine.stability.ppi's
`predicted_se` with the pilot's variances and model-human covariance; see docs/llm-judges.md."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .cost import CostModel


def plan_rows(pilots: dict, widths, alpha: float = 0.05, cost: CostModel | None = None,
              judgments_per_topic: float = 100.0, tuned: bool = True, small_n: bool = True) -> pd.DataFrame:
    """One row per (measure, target, width): the human-judged topics PPI needs so that every column's
    interval (each run's mean, or each pair's difference) is at most `width` wide (`topics_ppi`; the median
    column's need beside it), the human-only interval's need, and the assessor hours of each
    (`judgments_per_topic` documents per topic, the cost model's default category). `pilots`:
    {(measure, target): engine.stability.ppi.Pilot}. NaN: not reachable with the pilot's topics."""
    from ..stability.ppi import human_topics_for_width, topics_for_width
    cost = cost or CostModel()
    per_topic_h = cost.query_seconds(judgments_per_topic) / 3600.0
    rows = []
    for (measure, target), p in pilots.items():
        for w in widths:
            need = topics_for_width(p, float(w), alpha, tuned, small_n)
            human = human_topics_for_width(p, float(w), alpha, small_n)
            worst = float(np.max(need)) if not np.isnan(need).any() else np.nan
            rows.append({"measure": measure, "target": target, "width": float(w), "topics": p.topics,
                         "corr_median": float(np.median(p.corr)), "topics_ppi": worst,
                         "topics_ppi_median": float(np.nanmedian(need)) if (~np.isnan(need)).any() else np.nan,
                         "topics_human_only": float(np.max(human)),
                         "hours_ppi": worst * per_topic_h, "hours_human_only": float(np.max(human)) * per_topic_h})
    return pd.DataFrame(rows)


def batch_hours(table: pd.DataFrame, seen_topics, cost: CostModel | None = None) -> tuple[int, float]:
    """(documents new to people, assessor hours) of a batch (engine.pooling.ppi_batch.next_batch's pool
    table: stratum 2 rows with order > 0) under the cost model: the seconds per judgment at each topic's
    count, plus the topic's overhead where people have judged nothing of it yet (`seen_topics` they have)."""
    cost = cost or CostModel()
    times = cost.times(None)
    new = table[(table["order"] > 0) & (table["stratum"] == 2)]
    seen = set(map(str, seen_topics))
    secs = 0.0
    for topic, k in new.groupby("topic", sort=False).size().items():
        secs += times.seconds_per_judgment(k, cost.by_target) * k + (0.0 if str(topic) in seen else times.overhead)
    return int(len(new)), secs / 3600.0
