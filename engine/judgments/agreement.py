"""Agreement between two judgment sources: on the labels (Cohen's kappa, Krippendorff's alpha,
confusion matrices; graded and binarized, overall and per topic) and on the systems (the leaderboard
under each source, Kendall tau, tau_ap, the largest rank change, top-k overlap).

Kappa is computed here (weights by the distance between label positions on the scale, as
scikit-learn's `cohen_kappa_score` does), and so is alpha (from the confusion matrix; scikit-learn and the
`krippendorff` package are the tests' oracles).
Formulas and an example: docs/judgment-sources.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError

WEIGHTS = ("unweighted", "linear", "quadratic")


# ---------------------------------------------------------------------------- label agreement

def confusion(a, b, labels: list[int]) -> np.ndarray:
    """Counts: rows are source A's labels, columns source B's, in `labels` order."""
    idx = {g: i for i, g in enumerate(labels)}
    k = len(labels)
    m = np.zeros((k, k), np.int64)
    for x, y in zip(a, b):
        m[idx[int(x)], idx[int(y)]] += 1
    return m


def kappa_from_confusion(m: np.ndarray, weights: str = "unweighted") -> float:
    """Cohen's kappa of a confusion matrix; weights unweighted, linear (|i-j|) or quadratic ((i-j)^2)
    of the label positions. NaN when the expected disagreement is 0 (one label only)."""
    if weights not in WEIGHTS:
        raise CranfieldError(f"kappa weights {weights!r}: use one of {', '.join(WEIGHTS)}")
    m = np.asarray(m, float)
    n = m.sum()
    k = len(m)
    if n == 0:
        return float("nan")
    i, j = np.indices((k, k))
    w = {"unweighted": (i != j).astype(float), "linear": np.abs(i - j).astype(float),
         "quadratic": ((i - j) ** 2).astype(float)}[weights]
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    de = (w * expected).sum()
    if de == 0:
        return float("nan")
    return float(1.0 - (w * m).sum() / de)


def cohen_kappa(a, b, weights: str = "unweighted", labels: list[int] | None = None) -> float:
    """Cohen's kappa between two label vectors (same items, same order)."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if len(a) != len(b):
        raise CranfieldError("kappa needs two label vectors of the same length")
    labels = labels if labels is not None else sorted(set(a.tolist()) | set(b.tolist()))
    return kappa_from_confusion(confusion(a, b, labels), weights)


ALPHA_LEVELS = ("nominal", "ordinal", "interval")
MIN_SHARED = 30
"""Fewer documents judged by both sources than this and the label agreement is flagged as not to be trusted."""


def shared_caution(n_shared: int) -> str | None:
    """The small-sample caution for agreement on `n_shared` shared documents (None when there are enough)."""
    if n_shared >= MIN_SHARED:
        return None
    return (f"only {n_shared} shared document{'s' if n_shared != 1 else ''}; not to be trusted "
            f"(kappa and alpha need at least {MIN_SHARED})")


def alpha_from_confusion(m: np.ndarray, level: str = "nominal", values=None) -> float:
    """Krippendorff's alpha of two coders who both labelled every item, from their confusion matrix `m`
    (rows coder A, columns coder B, in the order of `values`, default 0..k-1): coincidences o = m + m^T,
    alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck with the level's distance d (nominal: c != k;
    ordinal: (sum of n_g from c to k - (n_c + n_k) / 2)^2; interval: (v_c - v_k)^2). NaN when the expected
    disagreement is 0 (one value only)."""
    if level not in ALPHA_LEVELS:
        raise CranfieldError(f"alpha level {level!r}: use one of {', '.join(ALPHA_LEVELS)}")
    m = np.asarray(m, float)
    k = len(m)
    v = np.arange(k, dtype=float) if values is None else np.asarray(values, float)
    o = m + m.T
    nc = o.sum(axis=1)
    n = nc.sum()
    if n < 2:
        return float("nan")
    i, j = np.indices((k, k))
    if level == "nominal":
        d = (i != j).astype(float)
    elif level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(nc)])
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        d = (cum[hi + 1] - cum[lo] - (nc[i] + nc[j]) / 2.0) ** 2
    de = (np.outer(nc, nc) * d).sum()
    if de <= 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * d).sum() / de)


def krippendorff_alpha(a, b, level: str = "nominal", labels: list[int] | None = None) -> float:
    """Krippendorff's alpha of two coders over the same items (`alpha_from_confusion`; the `krippendorff`
    package is the tests' oracle); `labels` is the value domain (the scale). NaN with fewer than two values."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) != len(b):
        raise CranfieldError("alpha needs two label vectors of the same length")
    domain = sorted(set(labels or []) | set(a.tolist()) | set(b.tolist()))
    if len(a) == 0 or len(domain) < 2 or len(set(a.tolist()) | set(b.tolist())) < 2:
        return float("nan")
    idx = {x: i for i, x in enumerate(domain)}
    m = np.zeros((len(domain), len(domain)))
    np.add.at(m, ([idx[x] for x in a.tolist()], [idx[x] for x in b.tolist()]), 1.0)
    return alpha_from_confusion(m, level, domain)


def label_stats(a, b, labels: list[int]) -> dict:
    """n, observed agreement, kappa (three weightings), alpha (nominal, ordinal) and the confusion matrix."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    m = confusion(a, b, labels)
    n = int(m.sum())
    return {"n": n, "agreement": float(np.trace(m) / n) if n else float("nan"),
            **{f"kappa_{w}": kappa_from_confusion(m, w) for w in WEIGHTS},
            "alpha_nominal": krippendorff_alpha(a, b, "nominal", labels),
            "alpha_ordinal": krippendorff_alpha(a, b, "ordinal", labels),
            "confusion": m}


def _shared(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The documents both sources judged (grade >= 0): topic, doc, a, b."""
    ka = a[a["grade"] >= 0][["topic", "doc", "grade"]].astype({"topic": str, "doc": str})
    kb = b[b["grade"] >= 0][["topic", "doc", "grade"]].astype({"topic": str, "doc": str})
    m = ka.merge(kb, on=["topic", "doc"], suffixes=("_a", "_b"))
    return m.rename(columns={"grade_a": "a", "grade_b": "b"}).astype({"a": np.int64, "b": np.int64})


@dataclass
class LabelAgreement:
    """Agreement on the shared documents of two sources."""

    names: tuple[str, str]
    labels: list[int]
    threshold: int
    n_a: int
    n_b: int
    graded: dict
    binary: dict
    per_topic: pd.DataFrame
    shared: pd.DataFrame = field(repr=False)


def label_agreement(a: pd.DataFrame, b: pd.DataFrame, names=("A", "B"), labels: list[int] | None = None,
                    threshold: int = 1) -> LabelAgreement:
    """Kappa, alpha and confusion matrices of two judgment tables (topic, doc, grade) on the documents
    both judged, graded and binarized at `threshold`, overall and per topic (the topics that disagree
    most first: lowest unweighted kappa, then lowest agreement)."""
    sh = _shared(a, b)
    if not len(sh):
        raise CranfieldError(f"sources {names[0]} and {names[1]} judged no document in common; agreement "
                             f"needs shared (topic, document) pairs")
    labels = sorted(set(labels or []) | set(sh["a"].tolist()) | set(sh["b"].tolist()))
    ba, bb = (sh["a"] >= threshold).astype(np.int64), (sh["b"] >= threshold).astype(np.int64)
    graded = label_stats(sh["a"], sh["b"], labels)
    binary = label_stats(ba, bb, [0, 1])
    rows = []
    for t, g in sh.groupby("topic", sort=False):
        m = confusion(g["a"], g["b"], labels)
        mb = confusion((g["a"] >= threshold), (g["b"] >= threshold), [0, 1])
        rows.append({"topic": t, "n": len(g), "agreement": float(np.trace(m) / len(g)),
                     "kappa": kappa_from_confusion(m), "kappa_quadratic": kappa_from_confusion(m, "quadratic"),
                     "binary_agreement": float(np.trace(mb) / len(g)), "binary_kappa": kappa_from_confusion(mb),
                     "mean_a": float(g["a"].mean()), "mean_b": float(g["b"].mean())})
    per = pd.DataFrame(rows)
    per = per.sort_values(["kappa", "agreement", "topic"], na_position="last", kind="mergesort").reset_index(drop=True)
    n_a = int((a["grade"] >= 0).sum())
    n_b = int((b["grade"] >= 0).sum())
    return LabelAgreement(tuple(names), labels, threshold, n_a, n_b, graded, binary, per, sh)


# ---------------------------------------------------------------------------- system agreement

def top_k_overlap(a: list[str], b: list[str], k: int) -> float:
    """Share of the top k of ranking `a` that is also in the top k of ranking `b`."""
    k = min(k, len(a), len(b))
    return float(len(set(a[:k]) & set(b[:k])) / k) if k else float("nan")


@dataclass
class SystemAgreement:
    measure: str
    names: tuple[str, str]
    table: pd.DataFrame      # run, score_a, rank_a, score_b, rank_b, change
    tau: float
    tau_ap: float
    largest_change: dict
    k: int
    overlap: float


def leaderboard_agreement(scores_a: pd.Series, scores_b: pd.Series, names=("A", "B"), measure: str = "",
                          k: int = 10) -> SystemAgreement:
    """Rank runs by mean score under each source and compare the two orderings (tau_ap with source A
    as the reference)."""
    from ..stability.correlation import kendall_tau
    from ..stability import tau_ap

    runs = [r for r in scores_a.index if r in scores_b.index]
    if len(runs) < 2:
        raise CranfieldError("system agreement needs at least two runs scored under both sources")
    x = scores_a.loc[runs].to_numpy(float)
    y = scores_b.loc[runs].to_numpy(float)
    t = pd.DataFrame({"run": runs, "score_a": x, "score_b": y})
    t["rank_a"] = t["score_a"].rank(ascending=False, method="min").astype(np.int64)
    t["rank_b"] = t["score_b"].rank(ascending=False, method="min").astype(np.int64)
    t["change"] = t["rank_a"] - t["rank_b"]
    t = t.sort_values(["rank_a", "run"], kind="mergesort").reset_index(drop=True)
    i = int(np.argmax(np.abs(t["change"].to_numpy())))
    big = {"run": t["run"].iat[i], "rank_a": int(t["rank_a"].iat[i]), "rank_b": int(t["rank_b"].iat[i]),
           "change": int(t["change"].iat[i])}
    order_a = t.sort_values(["rank_a", "run"])["run"].tolist()
    order_b = t.sort_values(["rank_b", "run"])["run"].tolist()
    return SystemAgreement(measure, tuple(names), t[["run", "score_a", "rank_a", "score_b", "rank_b", "change"]],
                           float(kendall_tau(x, y)), float(tau_ap(x, y)), big, min(k, len(runs)),
                           top_k_overlap(order_a, order_b, k))


def mean_scores(qrels: pd.DataFrame, runs: pd.DataFrame, measure: str, options=None, gains=None) -> pd.Series:
    """Mean of `measure` per run under `qrels` (the engine's evaluator)."""
    from ..evaluation.evaluate import compute, summarize, to_long
    extra = {"gains": gains} if gains else None
    df = to_long(compute(qrels, runs, [measure], options, extra=extra))
    s = summarize(df)
    return s[s.columns[0]].astype(float)


# ---------------------------------------------------------------------------- text report

def _f(v: float, p: int = 3) -> str:
    return "nan" if v != v else f"{v:.{p}f}"


def _matrix_lines(m: np.ndarray, labels: list, names) -> list[str]:
    w = max(6, max(len(str(x)) for x in m.flatten()) + 1)
    head = f"  {names[0]} \\ {names[1]}"
    lw = max(14, len(head) + 2)
    out = [head.ljust(lw) + "".join(str(l).rjust(w) for l in labels)]
    for lab, row in zip(labels, m):
        out.append(f"  {lab}".ljust(lw) + "".join(str(int(x)).rjust(w) for x in row))
    return out


def report_lines(la: LabelAgreement, sa: SystemAgreement | None = None, top_topics: int = 10) -> list[str]:
    """The text report of `cranfield agreement`."""
    A, B = la.names
    g, b = la.graded, la.binary
    out = [f"Agreement between {A} ({la.n_a} judged) and {B} ({la.n_b} judged)",
           f"documents judged by both: {g['n']}",
           *([f"caution: {shared_caution(g['n'])}"] if shared_caution(g["n"]) else []), "",
           f"graded scale {la.labels}:",
           f"  observed agreement         {_f(g['agreement'])}",
           f"  Cohen's kappa (unweighted) {_f(g['kappa_unweighted'])}",
           f"  Cohen's kappa (linear)     {_f(g['kappa_linear'])}",
           f"  Cohen's kappa (quadratic)  {_f(g['kappa_quadratic'])}",
           f"  Krippendorff's alpha (nominal) {_f(g['alpha_nominal'])}",
           f"  Krippendorff's alpha (ordinal) {_f(g['alpha_ordinal'])}",
           "  confusion matrix (rows: " + A + ", columns: " + B + ")",
           *_matrix_lines(g["confusion"], la.labels, la.names), "",
           f"binarized (relevant = grade >= {la.threshold}):",
           f"  observed agreement         {_f(b['agreement'])}",
           f"  Cohen's kappa (unweighted) {_f(b['kappa_unweighted'])}",
           f"  Krippendorff's alpha (nominal) {_f(b['alpha_nominal'])}",
           *_matrix_lines(b["confusion"], [0, 1], la.names), ""]
    per = la.per_topic.head(top_topics)
    out.append(f"per topic (most disagreement first; {len(la.per_topic)} topics):")
    out.append("  topic        n  agree  kappa  kappa_q  bin_kappa")
    for r in per.itertuples():
        out.append(f"  {str(r.topic):<10} {r.n:>3}  {_f(r.agreement, 2):>5}  {_f(r.kappa, 2):>5}  "
                   f"{_f(r.kappa_quadratic, 2):>7}  {_f(r.binary_kappa, 2):>9}")
    if sa is not None:
        out += ["", f"systems ({len(sa.table)} runs, {sa.measure}):",
                f"  Kendall tau {_f(sa.tau)}   tau_ap {_f(sa.tau_ap)} ({A} as reference)   "
                f"top-{sa.k} overlap {_f(sa.overlap, 2)}",
                f"  largest rank change: {sa.largest_change['run']} {sa.largest_change['rank_a']} -> "
                f"{sa.largest_change['rank_b']}",
                f"  {'run':<20} {A[:10]:>10} {'rank':>4}  {B[:10]:>10} {'rank':>4}  change"]
        for r in sa.table.itertuples():
            out.append(f"  {str(r.run)[:20]:<20} {r.score_a:>10.4f} {r.rank_a:>4}  {r.score_b:>10.4f} {r.rank_b:>4}  "
                       f"{r.change:+d}")
    return out
