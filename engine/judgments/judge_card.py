"""Judge cards: one page per judgment source, measured against the people's judgments (the gold source).

A card holds
- agreement on the documents both judged: Cohen's kappa (unweighted, linear), Krippendorff's alpha
  (nominal, ordinal), graded and binarized, each with a percentile bootstrap interval over topics (the
  shared documents of a topic are resampled together, since they share a topic and an assessor);
- the confusion matrix, each cell as the share of the people's grade row with a Clopper-Pearson (exact
  binomial) interval;
- false-positive and false-negative rates by the people's grade, with Wilson intervals;
- Kendall's tau, tau_AP (people as the reference) and tau@10 (tau among the people's top 10 runs) of the
  runs' means on the topics both sources judged, with percentile bootstrap intervals over those topics;
- cost and time from the source's records (seconds, tokens) and, for people, the cost model;
- cautions where the sample is too small to trust a number.
Formulas and an example: docs/llm-judges.md ("Judge cards").
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .agreement import MIN_SHARED, alpha_from_confusion, confusion, kappa_from_confusion, shared_caution

N_BOOT = 1000
TOP = 10
MIN_CARD_TOPICS = 10
"""Fewer topics judged by both and the ranking correlations (and their bootstrap intervals) are flagged."""
MIN_RUNS = 3
STATS = (("kappa", "unweighted", False), ("kappa_linear", "linear", False), ("alpha_nominal", "nominal", False),
         ("alpha_ordinal", "ordinal", False), ("binary_kappa", "unweighted", True),
         ("binary_alpha", "nominal", True))


# ---------------------------------------------------------------------------- intervals

def wilson(k, n, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k / n (NaN, NaN when n = 0)."""
    from scipy.stats import norm
    if n <= 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(1 - alpha / 2))
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(k, n, alpha: float = 0.05) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of a binomial proportion k / n (NaN, NaN when n = 0)."""
    from scipy.stats import beta
    if n <= 0:
        return float("nan"), float("nan")
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def percentile(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile interval of bootstrap replicates (NaN replicates left out; NaN, NaN when none is left)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if not len(v):
        return float("nan"), float("nan")
    return float(np.quantile(v, alpha / 2)), float(np.quantile(v, 1 - alpha / 2))


# ---------------------------------------------------------------------------- label agreement

def topic_confusions(shared: pd.DataFrame, labels: list[int]) -> tuple[list[str], np.ndarray]:
    """(topics, T x k x k confusion matrices) of the shared documents (columns topic, a = gold, b = source)."""
    topics = list(dict.fromkeys(shared["topic"].astype(str)))
    out = np.zeros((len(topics), len(labels), len(labels)))
    for i, (_, g) in enumerate(shared.groupby(shared["topic"].astype(str), sort=False)):
        out[i] = confusion(g["a"], g["b"], labels)
    return topics, out


def binarize(m: np.ndarray, labels: list[int], threshold: int) -> np.ndarray:
    """Collapse confusion matrices (..., k, k) to (..., 2, 2) at `threshold` (relevant: grade >= threshold)."""
    rel = np.asarray(labels) >= threshold
    sel = np.stack([~rel, rel]).astype(float)          # 2 x k
    return np.einsum("ak,...kl,bl->...ab", sel, m, sel)


def _stat(m: np.ndarray, how: str, binary: bool, labels) -> float:
    if how in ("nominal", "ordinal"):
        return alpha_from_confusion(m, how, [0, 1] if binary else labels)
    return kappa_from_confusion(m, how)


def agreement_intervals(per_topic: np.ndarray, labels: list[int], threshold: int, n_boot: int = N_BOOT,
                        seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Kappa and alpha (graded and binarized) with percentile bootstrap intervals over topics: statistic,
    value, lower, upper, n_boot. One topic only: no interval."""
    from ..stability.discrim import bootstrap_counts
    total = per_topic.sum(axis=0)
    t = len(per_topic)
    reps = None
    if t >= 2 and n_boot > 0:
        c = bootstrap_counts(t, n_boot, np.random.default_rng(seed))
        reps = np.einsum("bt,tkl->bkl", c, per_topic)
    rows = []
    for name, how, binary in STATS:
        m = binarize(total, labels, threshold) if binary else total
        value = _stat(m, how, binary, labels)
        lo = hi = float("nan")
        if reps is not None:
            rb = binarize(reps, labels, threshold) if binary else reps
            lo, hi = percentile(np.array([_stat(x, how, binary, labels) for x in rb]), alpha)
        rows.append({"statistic": name, "value": value, "lower": lo, "upper": hi})
    return pd.DataFrame(rows)


def confusion_table(m: np.ndarray, labels: list[int], alpha: float = 0.05) -> pd.DataFrame:
    """The confusion matrix as rows (people's grade, source's grade, count, share of the people's grade row,
    Clopper-Pearson interval of that share)."""
    rows = []
    for i, g in enumerate(labels):
        n = int(m[i].sum())
        for j, h in enumerate(labels):
            k = int(m[i, j])
            lo, hi = clopper_pearson(k, n, alpha)
            rows.append({"gold": g, "source": h, "count": k, "share": k / n if n else float("nan"),
                         "lower": lo, "upper": hi})
    return pd.DataFrame(rows)


def error_rates(m: np.ndarray, labels: list[int], threshold: int, alpha: float = 0.05) -> pd.DataFrame:
    """False-positive and false-negative rates by the people's grade, with Wilson intervals. For a grade
    below `threshold` the error is a false positive (the source says relevant), at or above it a false
    negative (the source says not relevant); `higher` / `lower`: the share the source graded above / below
    the people's grade. Two rows `all <thr` and `all >=thr` give the binary rates."""
    rel = np.asarray(labels) >= threshold
    rows = []

    def row(name, counts_row, is_rel, up, down):
        n = int(counts_row.sum())
        wrong = int(counts_row[~rel].sum() if is_rel else counts_row[rel].sum())
        lo, hi = wilson(wrong, n, alpha)
        rows.append({"gold": name, "n": n, "error": "false negative" if is_rel else "false positive",
                     "rate": wrong / n if n else float("nan"), "lower": lo, "upper": hi,
                     "higher": up / n if n else float("nan"), "lower_grade": down / n if n else float("nan")})

    for i, g in enumerate(labels):
        r = m[i]
        row(str(g), r, bool(rel[i]), float(r[i + 1:].sum()), float(r[:i].sum()))
    for is_rel, name in ((False, f"all <{threshold}"), (True, f"all >={threshold}")):
        sub = m[rel == is_rel]
        row(name, sub.sum(axis=0), is_rel, float("nan"), float("nan"))
    out = pd.DataFrame(rows)
    return out


# ---------------------------------------------------------------------------- ranking agreement

def _tau_at(h: np.ndarray, s: np.ndarray, k: int) -> np.ndarray:
    """Kendall tau among the people's top k runs, per row (trials x runs)."""
    from ..stability.correlation import kendall_tau
    top = np.argsort(-h, axis=1, kind="stable")[:, :k]
    return np.atleast_1d(kendall_tau(np.take_along_axis(h, top, 1), np.take_along_axis(s, top, 1)))


def ranking_agreement(gold: np.ndarray, source: np.ndarray, n_boot: int = N_BOOT, seed: int = 0,
                      alpha: float = 0.05, k: int = TOP) -> pd.DataFrame:
    """tau, tau_AP (gold as the reference) and tau@k of the runs' means over topics (gold, source: topics x
    runs), with percentile bootstrap intervals over topics; statistic, value, lower, upper, reason (why a
    value is missing)."""
    from ..stability.correlation import kendall_tau
    from ..stability.discrim import bootstrap_counts
    from ..stability.matrix import tau_ap
    t, r = gold.shape
    why = None
    if r < MIN_RUNS:
        why = f"only {r} run(s); a rank correlation needs at least {MIN_RUNS}"
    elif t == 0:
        why = "no topic judged by both sources"
    hm, sm = gold.mean(axis=0) if t else None, source.mean(axis=0) if t else None
    if why is None and np.ptp(hm) == 0:
        why = "every run has the same mean under the people's judgments (all tied)"
    if why is None and np.ptp(sm) == 0:
        why = "every run has the same mean under this source's judgments (all tied)"
    kk = min(k, r)
    names = ("tau", "tau_ap", f"tau@{k}")
    if why is not None:
        return pd.DataFrame([{"statistic": n, "value": float("nan"), "lower": float("nan"),
                              "upper": float("nan"), "reason": why} for n in names])

    def stats(h, s):
        return (np.atleast_1d(kendall_tau(h, s)),
                np.array([tau_ap(a, b) for a, b in zip(h, s)]),
                _tau_at(h, s, kk))
    point = [float(v[0]) for v in stats(hm[None, :], sm[None, :])]
    if t >= 2 and n_boot > 0:
        c = bootstrap_counts(t, n_boot, np.random.default_rng(seed)) / t
        ints = [percentile(v, alpha) for v in stats(c @ gold, c @ source)]
        note = None if t >= MIN_CARD_TOPICS else (f"only {t} topics judged by both; the intervals are not to "
                                                  f"be trusted")
    else:
        ints = [(float("nan"), float("nan"))] * 3
        note = "one topic judged by both: no interval"
    if kk < k:
        extra = f"all {r} runs (fewer than {k})"
    else:
        extra = None
    rows = []
    for n, v, (lo, hi) in zip(names, point, ints):
        reason = note
        if n.startswith("tau@") and extra:
            reason = extra if note is None else f"{extra}; {note}"
        rows.append({"statistic": n, "value": v, "lower": lo, "upper": hi, "reason": reason})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- cost and time

def source_cost(records: pd.DataFrame | None, kind: str, origin: str = "", seconds_per_judgment: float | None = None,
                cost_source: str = "") -> dict:
    """What judging cost, from a source's records (a judgment log: `seconds`, and for an automatic judge
    `prompt_tokens`, `completion_tokens`, `cached`). `seconds_per_judgment` (people): the cost model's
    time per judgment, used when the log has no times."""
    out: dict = {"kind": kind}
    if records is None or not len(records):
        out["note"] = f"no records of time or cost (imported from {origin})" if origin else "no records of time or cost"
        return out
    judge = records[records["op"].astype(str) == "judge"]
    out["judgments"] = int(len(judge))
    secs = pd.to_numeric(judge["seconds"], errors="coerce")
    out["timed"] = int(secs.notna().sum())
    out["seconds"] = float(secs.sum())
    out["seconds_per_judgment"] = float(secs.mean()) if secs.notna().any() else float("nan")
    if kind == "auto" or "cached" in judge:
        cached = (judge["cached"].astype(str).str.lower().isin(["true", "1"]) if "cached" in judge
                  else pd.Series(False, index=judge.index))
        out["from_cache"] = int(cached.sum())
        out["calls"] = int((~cached).sum())
    for c in ("prompt_tokens", "completion_tokens"):
        if c in judge:
            v = pd.to_numeric(judge[c], errors="coerce")
            out[c] = int(v.sum()) if v.notna().any() else None
    if kind == "auto" and out.get("prompt_tokens") is None:
        out["note"] = "tokens not recorded (a log written before tokens were kept per judgment)"
    if kind in ("human", "assessor") and seconds_per_judgment is not None:
        out["model_seconds_per_judgment"] = float(seconds_per_judgment)
        out["model_hours"] = float(seconds_per_judgment) * out["judgments"] / 3600.0
        out["cost_model"] = cost_source
    return out


# ---------------------------------------------------------------------------- the card

@dataclass
class JudgeCard:
    source: str
    gold: str
    kind: str
    model: str
    prompt_version: str
    measure: str
    labels: list[int]
    threshold: int
    n_source: int
    n_gold: int
    n_shared: int
    topics_shared: int
    agreement: pd.DataFrame
    confusion: pd.DataFrame
    rates: pd.DataFrame
    ranking: pd.DataFrame
    runs: int
    ranking_topics: int
    cost: dict
    cautions: list[str] = field(default_factory=list)
    n_boot: int = N_BOOT
    alpha: float = 0.05

    def to_dict(self) -> dict:
        def recs(df):
            return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                    for r in df.to_dict("records")]
        d = {k: getattr(self, k) for k in ("source", "gold", "kind", "model", "prompt_version", "measure",
                                           "labels", "threshold", "n_source", "n_gold", "n_shared",
                                           "topics_shared", "runs", "ranking_topics", "cautions", "n_boot",
                                           "alpha")}
        d.update(agreement=recs(self.agreement), confusion=recs(self.confusion), rates=recs(self.rates),
                 ranking=recs(self.ranking),
                 cost={k: (None if isinstance(v, float) and v != v else v) for k, v in self.cost.items()})
        return d


def card_sources(camp, gold: str = "human") -> list[str]:
    """The sources that get a card: every source neither holding nor held by the gold source."""
    from .sources import list_sources, nested, resolve_name
    gold = resolve_name(camp, gold)
    return [s.name for s in list_sources(camp) if not nested(camp, gold, s.name)]


def source_records(camp, name: str) -> pd.DataFrame | None:
    """The judgment log records behind a source (None for an imported label set)."""
    from .log import read_log
    from .sources import HUMAN, sources_dir
    from engine.util.confine import confine
    if name == HUMAN or name.startswith("assessor:"):
        log = camp.log()
        if log is None:
            return None
        return log if name == HUMAN else log[log["assessor"].astype(str) == name.split(":", 1)[1]]
    lp = confine(camp.root, sources_dir(camp.root) / f"{name}.jsonl")
    return read_log(lp, camp.warnings) if lp.is_file() else None


def judge_card(camp, source: str, gold: str = "human", measure: str | None = None, threshold: int | None = None,
               n_boot: int = N_BOOT, seed: int = 0, alpha: float = 0.05, seconds_per_judgment: float | None = None,
               cost_source: str = "") -> JudgeCard:
    """The card of one judgment source against the gold source (people)."""
    from .agreement import _shared
    from .ppi import topic_values
    from .sources import list_sources, nested, resolve_name, source_judgments
    source, gold = resolve_name(camp, source), resolve_name(camp, gold)
    if nested(camp, gold, source):
        raise CranfieldError(f"source {source} and gold {gold}: one holds the other's judgments (human holds every "
                             f"assessor:NAME); a card compares a source with people who judged independently")
    info = {s.name: s for s in list_sources(camp)}
    if source not in info:
        raise CranfieldError(f"unknown judgment source {source!r}; the campaign has: {', '.join(info)}")
    s = info[source]
    js, jg = source_judgments(camp, source), source_judgments(camp, gold)
    sh = _shared(jg, js)                       # a = gold (people), b = the source
    thr = camp.binary_threshold() if threshold is None else int(threshold)
    labels = sorted(set(camp.scale()) | set(sh["a"].tolist()) | set(sh["b"].tolist()))
    cautions = []
    if not len(sh):
        raise CranfieldError(f"sources {gold} and {source} judged no document in common; a judge card needs "
                             f"documents both judged")
    topics, per = topic_confusions(sh, labels)
    total = per.sum(axis=0)
    c = shared_caution(len(sh))
    if c:
        cautions.append(c)
    if len(topics) < MIN_CARD_TOPICS:
        cautions.append(f"only {len(topics)} topics with shared documents; the bootstrap intervals are not to be "
                        f"trusted")
    agr = agreement_intervals(per, labels, thr, n_boot, seed, alpha)
    measure = measure or (camp.measures() or ["map"])[0]
    runs = camp.runs()
    rk_topics, n_runs = 0, int(runs["run"].nunique()) if len(runs) else 0
    if n_runs:
        tv = topic_values(camp, source, gold, [measure], notes=[])
        if not tv:
            raise CranfieldError(f"measure {measure} is not averaged over topics; choose another with -m")
        v = tv[0]
        g_m, s_m = v.human[v.labelled], v.model[v.labelled]
        rk_topics = int(v.labelled.sum())
        rank = ranking_agreement(g_m, s_m, n_boot, seed + 1, alpha)
    else:
        rank = ranking_agreement(np.zeros((0, 0)), np.zeros((0, 0)))
    cost = source_cost(source_records(camp, source), s.kind, s.meta.get("origin", "") if s.meta else "",
                       seconds_per_judgment if s.kind in ("human", "assessor") else None, cost_source)
    return JudgeCard(source, gold, s.kind, s.model, s.prompt_version, measure, labels, thr, len(js), len(jg),
                     len(sh), len(topics), agr, confusion_table(total, labels, alpha),
                     error_rates(total, labels, thr, alpha), rank, n_runs, rk_topics, cost, cautions, n_boot, alpha)


def judge_cards(camp, gold: str = "human", sources: list[str] | None = None, **kw) -> list[JudgeCard]:
    """A card for each source (default: every source independent of `gold` with documents shared with it)."""
    from .agreement import _shared
    from .sources import source_judgments
    names = sources if sources else card_sources(camp, gold)
    out = []
    for n in names:
        if not sources and not len(_shared(source_judgments(camp, gold), source_judgments(camp, n))):
            continue
        out.append(judge_card(camp, n, gold, **kw))
    return out


# ---------------------------------------------------------------------------- text

def _n(v, p: int = 3) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else f"{v:.{p}f}"


def _iv(lo, hi, p: int = 3) -> str:
    return "" if lo != lo else f"[{lo:.{p}f}, {hi:.{p}f}]"


def card_tables(card: JudgeCard) -> dict[str, pd.DataFrame]:
    """The card's tables as shown (strings): agreement, confusion (a matrix), errors, ranking, cost."""
    agr = pd.DataFrame({"statistic": card.agreement["statistic"], "value": [_n(v) for v in card.agreement["value"]],
                        "interval": [_iv(a, b) for a, b in zip(card.agreement["lower"], card.agreement["upper"])]})
    c = card.confusion
    mat = {"people \\ source": [str(g) for g in card.labels]}
    for h in card.labels:
        sub = c[c["source"] == h].set_index("gold")
        mat[str(h)] = [f"{int(sub.loc[g, 'count'])} ({_n(sub.loc[g, 'share'], 2)} {_iv(sub.loc[g, 'lower'], sub.loc[g, 'upper'], 2)})"
                       for g in card.labels]
    r = card.rates
    rates = pd.DataFrame({"people": r["gold"], "n": r["n"].astype(int), "error": r["error"],
                          "rate": [_n(v) for v in r["rate"]], "interval": [_iv(a, b) for a, b in zip(r["lower"], r["upper"])],
                          "graded higher": [_n(v) for v in r["higher"]], "graded lower": [_n(v) for v in r["lower_grade"]]})
    k = card.ranking
    rank = pd.DataFrame({"statistic": k["statistic"], "value": [_n(v) for v in k["value"]],
                         "interval": [_iv(a, b) for a, b in zip(k["lower"], k["upper"])],
                         "note": [x or "" for x in k["reason"]]})
    labels = {"judgments": "judgments in the records", "timed": "judgments with a time", "seconds": "seconds in all",
              "seconds_per_judgment": "seconds per judgment", "calls": "model calls", "from_cache": "from the cache",
              "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
              "model_seconds_per_judgment": "cost model: seconds per judgment", "model_hours": "cost model: hours",
              "cost_model": "cost model", "note": "note"}
    cost = pd.DataFrame([{"item": labels[key], "value": (_n(v, 2) if isinstance(v, float) else
                                                         ("not recorded" if v is None else str(v)))}
                         for key, v in card.cost.items() if key in labels])
    return {"agreement": agr, "confusion": pd.DataFrame(mat), "errors": rates, "ranking": rank, "cost": cost}


def card_text(card: JudgeCard, fmt: str = "markdown") -> str:
    """The card as Markdown (`fmt` markdown: the report page, `cranfield judgments card`) or plain text."""
    from ..formats.text_tables import format_table
    from ..util.names import shown
    t = card_tables(card)
    pct = round(100 * (1 - card.alpha))
    what = ", ".join(x for x in (card.kind, f"model {card.model}" if card.model else "",
                                 f"prompt {card.prompt_version}" if card.prompt_version else "") if x)
    h1, h2 = ("## ", "### ") if fmt == "markdown" else ("", "")
    out = [f"{h1}Judge card: {shown(card.source)} ({what}) against {shown(card.gold)}", "",
           f"Documents judged: {card.n_source} by {shown(card.source)}, {card.n_gold} by {shown(card.gold)}, "
           f"{card.n_shared} by both on {card.topics_shared} topics. Relevant: grade >= {card.threshold}. "
           f"{pct}% intervals.", ""]
    out += [f"Caution: {c}." for c in card.cautions] + ([""] if card.cautions else [])
    sections = [
        ("Agreement with people", f"bootstrap over topics, {card.n_boot} resamples; binary_*: relevant or not",
         "agreement"),
        ("Confusion", "rows: the people's grade; columns: the source's; count (share of the row [Clopper-Pearson "
                      "exact interval])", "confusion"),
        ("False positives and negatives by the people's grade", "Wilson intervals; graded higher / lower: the "
                                                               "share the source graded above / below the people",
         "errors"),
        ("Ranking of the runs", f"{card.measure} means of {card.runs} runs on the {card.ranking_topics} topics both "
                                f"judged; tau_ap with the people's ranking as the reference; bootstrap over topics",
         "ranking"),
        ("Cost and time", "from the source's records", "cost")]
    for title, note, key in sections:
        df = t[key]
        out += [f"{h2}{title}", "", note + ".", "", format_table(df, fmt).rstrip("\n") if len(df) else "(none)", ""]
    return "\n".join(out)


__all__ = ["JudgeCard", "MIN_SHARED", "agreement_intervals", "card_sources", "card_tables", "card_text", "clopper_pearson", "confusion_table",
           "error_rates", "judge_card", "judge_cards", "ranking_agreement", "source_cost", "wilson"]
