"""Judge audits (issue 38): canary documents planted in pools, each judge's false-positive rate per
canary kind, and runs whose human-vs-model score gap stands out.

The canaries (three kinds: query-term stuffing, an instruction to mark the document relevant, an
off-topic document in another language) are engine.judgments.canaries'. A judge's false-positive rate on
a kind is the share of that kind's canaries it judged at or above the campaign's binary threshold, with a
Wilson interval.

Run gaps: per run, mean(model - gold) of a measure over the topics the gold source (people) judged; a run
whose gap lies more than 2 SD (ddof 1) from the mean of the other runs' gaps is flagged (a crafted run
inflating itself under a model judge; Clarke & Dietz). Kendall's tau between the gold ranking (judged
topics) and the model ranking (every topic) is given with and without the flagged runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings
from .canaries import KINDS, read_canaries

GAP_SD = 2.0
"""A run is flagged when its gap lies more than this many SD from the other runs' gaps."""


def wilson(k, n, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion k / n (NaN where n = 0)."""
    from ..stability.ppi import z_value
    z = z_value(alpha)
    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        d = 1 + z * z / n
        c = (p + z * z / (2 * n)) / d
        h = z / d * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.where(n > 0, np.maximum(c - h, 0.0), np.nan), np.where(n > 0, np.minimum(c + h, 1.0), np.nan)


def judges(camp) -> list[str]:
    """The campaign's non-human judgment sources (imported, automatic, simulated)."""
    from .sources import model_sources
    return model_sources(camp)


def rate_rows(canaries: pd.DataFrame, labels: pd.DataFrame, rel_level: int, alpha: float = 0.05,
              judge: str = "") -> list[dict]:
    """One judge's rows of `canary_rates` from its labels (topic, doc, grade) of any documents."""
    m = canaries.merge(labels[["topic", "doc", "grade"]], on=["topic", "doc"], how="left")
    rows = []
    for kind in KINDS:
        g = m[m["kind"] == kind]
        judged = g["grade"].notna()
        fp = int((g.loc[judged, "grade"] >= rel_level).sum())
        n = int(judged.sum())
        lo, hi = wilson(fp, n, alpha)
        rows.append({"judge": judge, "kind": kind, "planted": len(g), "judged": n, "false_positives": fp,
                     "rate": fp / n if n else np.nan, "lower": float(lo), "upper": float(hi)})
    return rows


def canary_rates(camp, sources=None, alpha: float = 0.05, warnings: Warnings | None = None) -> pd.DataFrame:
    """Per judge and canary kind: canaries planted, judged, false positives (grade >= the binary
    threshold), the rate and its Wilson interval; with rows for people (judge `human`) once they judged
    canaries at a desk (engine.judgments.canaries.people_canary_judgments)."""
    from .canaries import people_canary_judgments
    from .sources import HUMAN, source_judgments
    c = read_canaries(camp.root)
    rows = []
    for s in sources if sources is not None else judges(camp):
        q = source_judgments(camp, s, warnings, canaries=True)
        rows += rate_rows(c, q, camp.binary_threshold(), alpha, s)
    people = people_canary_judgments(camp) if len(c) else None
    if people is not None and len(people):      # people judged canaries at the desk: their rate beside the judges'
        rows += rate_rows(c, people, camp.binary_threshold(), alpha, HUMAN)
    return pd.DataFrame(rows, columns=["judge", "kind", "planted", "judged", "false_positives", "rate", "lower",
                                       "upper"])


def gap_flags(gaps: np.ndarray, sd: float = GAP_SD) -> tuple[np.ndarray, np.ndarray]:
    """(z, flagged) per run: the gap's distance from the other runs' mean gap in their SDs (ddof 1); NaN
    and unflagged with fewer than 3 other runs or when the others' gaps do not vary."""
    g = np.asarray(gaps, dtype=np.float64)
    k = len(g)
    z = np.full(k, np.nan)
    if k >= 4:
        for i in range(k):
            o = np.delete(g, i)
            s = o.std(ddof=1)
            if s > 0:
                z[i] = (g[i] - o.mean()) / s
    return z, np.abs(np.nan_to_num(z)) > sd


def gap_table(human: np.ndarray, model: np.ndarray, labelled: np.ndarray, runs) -> tuple[pd.DataFrame, dict]:
    """Run gaps from topics x runs values: `model` on every topic, `human` on the `labelled` ones. Per run:
    gold mean and model mean over the labelled topics, the model's mean over all, gap, z, flagged; and the
    tau summary (gold ranking vs the model's ranking over every topic, with and without flagged runs)."""
    from ..stability.correlation import kendall_tau
    lab = np.asarray(labelled, dtype=bool)
    h = human[lab].mean(0)
    ml = model[lab].mean(0)
    ma = model.mean(0)
    gap = ml - h
    z, flag = gap_flags(gap)
    df = pd.DataFrame({"run": list(runs), "gold": h, "model": ml, "model_all_topics": ma, "gap": gap, "z": z,
                       "flagged": flag})
    keep = ~flag
    tau = {"runs": len(h), "flagged": int(flag.sum()), "gold_topics": int(lab.sum()), "topics": len(model),
           "tau_all": float(kendall_tau(ma, h)),
           "tau_unflagged": float(kendall_tau(ma[keep], h[keep])) if keep.sum() > 1 else np.nan}
    return df, tau


@dataclass
class AuditReport:
    """Canary false-positive rates, run gaps with flags, and tau with and without the flagged runs."""

    canaries: pd.DataFrame
    gaps: pd.DataFrame
    tau: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def run_gaps(camp, model: str, gold: str = "human", measure: str | None = None,
             warnings: Warnings | None = None) -> tuple[pd.DataFrame, dict]:
    """Per run under one model source: gold and model means over the gold-judged topics, the gap, its z
    against the other runs and the flag; and {tau_all, tau_unflagged, runs, flagged}."""
    from .ppi import topic_values
    measure = measure or (camp.measures() or ["map"])[0]
    tvs = topic_values(camp, model, gold, [measure], warnings=warnings)
    if not tvs:
        raise CranfieldError(f"{measure}: not a mean over topics; give a measure such as map or P.10")
    tv = tvs[0]
    lab = tv.labelled
    if lab.sum() < 1:
        raise CranfieldError(f"source {gold} judged none of the topics {model} judged: no gaps to measure")
    df, tau = gap_table(tv.human, tv.model, lab, tv.runs)
    df.insert(0, "measure", tv.measure)
    df.insert(0, "judge", model)
    tau = {"judge": model, "measure": tv.measure, **tau}
    return df, tau


def audit(camp, sources=None, gold: str = "human", measure: str | None = None, alpha: float = 0.05,
          warnings: Warnings | None = None) -> AuditReport:
    """The audit of every non-human judge (or `sources`): canary rates, run gaps, tau."""
    planted = read_canaries(camp.root)          # a damaged file is reported first, whatever else is missing
    srcs = list(sources) if sources else judges(camp)
    if not srcs:
        raise CranfieldError(f"{camp.root}: no model or imported judgment source to audit "
                             f"(`cranfield judgments sources {camp.root}` lists them)")
    notes = []
    if not len(planted):
        notes.append("no canaries planted: build a pool with --canaries N and have the model judge it")
        rates = canary_rates(camp, [], alpha, warnings)
    else:
        rates = canary_rates(camp, srcs, alpha, warnings)
    gaps, taus = [], []
    for s in srcs:
        try:
            g, t = run_gaps(camp, s, gold, measure, warnings)
        except CranfieldError as exc:
            notes.append(f"{s}: no run gaps ({exc})")
            continue
        gaps.append(g)
        taus.append(t)
    gdf = pd.concat(gaps, ignore_index=True) if gaps else pd.DataFrame()
    return AuditReport(rates, gdf, pd.DataFrame(taus), notes)
