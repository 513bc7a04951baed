"""The values TREC AutoJudge's `auto-judge-evaluate` computes, with a reason wherever one is undefined.

- `meta_evaluate`: how well a judge's leaderboard orders the runs as the truth leaderboard does (Kendall's
  tau-b, Pearson, Spearman, tau_AP_b, tau_GAP, Kendall's tau among the truth's top k);
- `qrel_evaluate`: how a judge's labels agree with the truth labels per topic (set precision, recall, F1;
  Jaccard, Cohen's kappa at every pair of thresholds, linear-weighted kappa, ordinal Krippendorff's alpha,
  adjusted Rand index) and their mean over topics.
Where auto-judge-evaluate prints 0.0 for a value that is not defined (every run tied, a topic with one
label only, nothing predicted relevant) Cranfield gives NaN and says why; its means leave such topics out
and count them. Formulas: docs/llm-judges.md ("AutoJudge").
"""
from __future__ import annotations

from ..util import fs

import numpy as np
import pandas as pd

from ..errors import CranfieldError

BASE_METHODS = ("kendall", "pearson", "spearman", "tauap_b", "tau_gap")
METHODS = BASE_METHODS + ("kendall@10",)
ON_MISSING = ("error", "skip", "default")


def parse_method(m: str) -> tuple[str, int | None]:
    """`kendall` -> (kendall, None); `kendall@10` -> (kendall, 10)."""
    base, _, k = m.partition("@")
    if base not in BASE_METHODS:
        raise CranfieldError(f"correlation {m!r}: use one of {', '.join(BASE_METHODS)}, or METHOD@K (e.g. kendall@10)")
    if not k:
        return base, None
    if not k.isdigit() or int(k) < 1:
        raise CranfieldError(f"correlation {m!r}: K in METHOD@K must be a positive integer")
    return base, int(k)


def align(truth: pd.Series, judged: pd.Series, on_missing: str = "error") -> tuple[list[str], np.ndarray, np.ndarray, str | None]:
    """(runs, truth values, judged values, note) over the truth's runs in sorted order: a run the judge
    did not score is an error, left out (`skip`) or scored 0.0 (`default`, as auto-judge-evaluate does)."""
    if on_missing not in ON_MISSING:
        raise CranfieldError(f"--on-missing {on_missing!r}: one of {', '.join(ON_MISSING)}")
    missing = sorted(set(truth.index) - set(judged.index))
    extra = sorted(set(judged.index) - set(truth.index))
    note = None
    if (missing or extra) and on_missing == "error":
        raise CranfieldError(f"run mismatch: {len(missing)} truth run(s) not in the judge's leaderboard "
                             f"({', '.join(missing[:5])}), {len(extra)} judged run(s) not in the truth "
                             f"({', '.join(extra[:5])}); pass --on-missing skip or default")
    runs = sorted(truth.index) if on_missing == "default" else sorted(set(truth.index) & set(judged.index))
    if missing:
        note = (f"{len(missing)} run(s) missing from the judge's leaderboard scored 0.0" if on_missing == "default"
                else f"{len(missing)} run(s) missing from the judge's leaderboard left out")
    a = truth.reindex(runs).to_numpy(float)
    b = judged.reindex(runs).fillna(0.0).to_numpy(float)
    return runs, a, b, note


def correlation(a: np.ndarray, b: np.ndarray, method: str) -> tuple[float, str | None]:
    """(value, reason when undefined) of one base method between aligned truth `a` and judged `b`."""
    from scipy.stats import rankdata

    from ..stability.correlation import kendall_tau, tau_ap_b, tau_gap
    n = len(a)
    if n < 3:
        return float("nan"), f"only {n} run(s); a correlation needs at least 3 (auto-judge-evaluate refuses the input)"
    tied_a, tied_b = np.ptp(a) == 0, np.ptp(b) == 0
    if method == "tau_gap":
        if tied_a:
            return float("nan"), "every run has the same truth score: no gap to weigh"
        return tau_gap(a, b), None
    if tied_a or tied_b:
        who = "both leaderboards" if tied_a and tied_b else "the truth" if tied_a else "the judge"
        extra = " (auto-judge-evaluate gives 0.0 for tau_AP_b here)" if method == "tauap_b" else ""
        return float("nan"), f"{who} ties every run; {method} is undefined{extra}"
    if method == "kendall":
        return float(kendall_tau(a, b)), None
    if method == "pearson":
        return float(np.corrcoef(a, b)[0, 1]), None
    if method == "spearman":
        return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1]), None
    if method == "tauap_b":
        return tau_ap_b(a, b), None
    raise CranfieldError(f"correlation {method!r}: use one of {', '.join(BASE_METHODS)}")


def correlate(truth: pd.Series, judged: pd.Series, method: str, on_missing: str = "error") -> tuple[float, str | None]:
    """One method (METHOD or METHOD@K) between two run -> score series, as meta-evaluate computes it: @K keeps
    the runs both scored and then the truth's K best (ties at the cut in the truth's order)."""
    base, k = parse_method(method)
    if k is not None:
        common = [r for r in truth.index if r in judged.index]
        t = truth.loc[common]
        order = sorted(range(len(t)), key=lambda i: -t.iat[i])[:k]
        top = [common[i] for i in order]
        truth, judged = truth.loc[top], judged.loc[top]
    runs, a, b, note = align(truth, judged, on_missing)
    v, why = correlation(a, b, base)
    if note:
        why = note if why is None else f"{why}; {note}"
    return v, why


def _chosen(board, asked, what: str, where: str) -> list[str]:
    """The measures of leaderboard `board` (sorted), narrowed to `asked` when given; a CranfieldError naming
    `what` and `where` for an asked measure the board lacks."""
    have = sorted(set(board["measure"]))
    if not asked:
        return have
    bad = sorted(set(asked) - set(have))
    if bad:
        raise CranfieldError(f"{what} {', '.join(bad)} not in {where} (it has {', '.join(have)})")
    return [m for m in have if m in asked]


def meta_evaluate(truth: pd.DataFrame, judges: dict[str, pd.DataFrame], truth_measures: list[str] | None = None,
                  eval_measures: list[str] | None = None, methods: list[str] | None = None,
                  on_missing: str = "error") -> pd.DataFrame:
    """One row per (judge, truth measure, judged measure): each method's value and, in `reasons`, why a
    value is missing. `truth`, `judges[name]`: long leaderboards (run, topic, measure, value)."""
    from ..formats.autojudge import run_means
    methods = list(methods or METHODS)
    for m in methods:
        parse_method(m)
    tms = _chosen(truth, truth_measures, "truth measure(s)", "the truth leaderboard")
    if truth["run"].nunique() < 3:
        raise CranfieldError(f"the truth leaderboard has {truth['run'].nunique()} run(s); correlations need at least 3")
    rows = []
    for name, board in judges.items():
        ems = _chosen(board, eval_measures, f"{name}: measure(s)", "its leaderboard")
        for tm in tms:
            t = run_means(truth, tm)
            for em in ems:
                e = run_means(board, em)
                row = {"Judge": name, "TruthMeasure": tm, "EvalMeasure": em}
                reasons = []
                if any("@" in m for m in methods):
                    # auto-judge-evaluate keeps only the runs both scored for every method once a METHOD@K
                    # is asked; the same here, and said
                    both = [r for r in t.index if r in e.index]
                    if len(both) < len(t) or len(both) < len(e):
                        reasons.append(f"{len(t) + len(e) - 2 * len(both)} run(s) scored on one side only left "
                                       f"out of every method (a METHOD@K is asked)")
                    t, e = t.loc[both], e.loc[both]
                for m in methods:
                    v, why = correlate(t, e, m, on_missing)
                    row[m] = v
                    if why:
                        reasons.append(f"{m}: {why}")
                row["reasons"] = "; ".join(reasons)
                rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- qrel-evaluate

def _kappa(t: np.ndarray, p: np.ndarray, weights: str = "unweighted", labels=None) -> tuple[float, str | None]:
    from .agreement import cohen_kappa
    ct, cp = len(set(t.tolist())) < 2, len(set(p.tolist())) < 2
    if ct or cp:
        who = "both sides" if ct and cp else "the truth" if ct else "the judge"
        zero = "" if ct and cp else " (auto-judge-evaluate gives 0.0)"
        verb = "use" if ct and cp else "uses"
        return float("nan"), f"{who} {verb} one label only: kappa cannot measure agreement{zero}"
    return cohen_kappa(t, p, weights, labels), None


def _ari(t: np.ndarray, p: np.ndarray) -> tuple[float, str | None]:
    """Adjusted Rand index of two binary labellings, from the pair confusion counts."""
    n = len(t)
    if n < 2:
        return float("nan"), "one document: no pair to compare (auto-judge-evaluate gives 1.0)"
    same_t = t[:, None] == t[None, :]
    same_p = p[:, None] == p[None, :]
    off = ~np.eye(n, dtype=bool)
    tp = float((same_t & same_p & off).sum())
    tn = float((~same_t & ~same_p).sum())
    fp = float((~same_t & same_p).sum())
    fn = float((same_t & ~same_p & off).sum())
    if fn == 0 and fp == 0:
        return 1.0, None
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)), None


def qrel_evaluate(truth: pd.DataFrame, predicted: pd.DataFrame, truth_max_grade: int = 1, predict_max_grade: int = 1,
                  truth_threshold: int = 1, predict_threshold: int = 1, default_grade: int = 0,
                  on_missing: str = "default") -> pd.DataFrame:
    """Per topic (sorted as text) and a MEAN row: Precision, Recall, F1, TP, FP, FN, Jaccard, Kappa@T (or
    Kappa@TvP), Kappa_w, Kripp_a, ARI and `reasons`. Grades are clipped to 0..max per side; a document judged
    on one side only gets `default_grade` on the other. `on_missing` default: every topic of either side;
    skip: the topics both judged. The MEAN row averages the defined values; `reasons` counts the rest."""
    from .agreement import krippendorff_alpha
    if on_missing not in ("default", "skip"):
        raise CranfieldError("--on-missing: default or skip")
    tq = {t: dict(zip(g["doc"].astype(str), g["grade"].astype(int))) for t, g in truth.groupby(truth["topic"].astype(str))}
    pq = {t: dict(zip(g["doc"].astype(str), g["grade"].astype(int))) for t, g in predicted.groupby(predicted["topic"].astype(str))}
    topics = sorted(set(tq) | set(pq)) if on_missing == "default" else sorted(set(tq) & set(pq))
    keys = [(a, b) for a in range(1, truth_max_grade + 1) for b in range(1, predict_max_grade + 1)]
    kname = (lambda a, b: "Kappa@1") if truth_max_grade == predict_max_grade == 1 else (lambda a, b: f"Kappa@{a}v{b}")
    rows = []
    for topic in topics:
        td, pd_ = tq.get(topic, {}), pq.get(topic, {})
        docs = sorted(set(td) | set(pd_))
        t = np.clip([td.get(d, default_grade) for d in docs], 0, truth_max_grade)
        p = np.clip([pd_.get(d, default_grade) for d in docs], 0, predict_max_grade)
        row, why = {"Topic": topic}, []
        rt, rp = t >= truth_threshold, p >= predict_threshold
        # set overlap over the documents each side calls relevant (as judged, before default grades)
        st = {d for d, g in td.items() if g >= truth_threshold}
        sp = {d for d, g in pd_.items() if g >= predict_threshold}
        tp, fp, fn = len(st & sp), len(sp - st), len(st - sp)
        if not st and not sp:
            row.update(Precision=np.nan, Recall=np.nan, F1=np.nan)
            why.append("no document relevant on either side: no set overlap (auto-judge-evaluate leaves the topic "
                       "out of its precision, recall and F1)")
        else:
            prec = tp / (tp + fp) if tp + fp else np.nan
            rec = tp / (tp + fn) if tp + fn else np.nan
            if tp + fp == 0:
                why.append("the judge calls no document relevant: precision undefined (auto-judge-evaluate gives 0.0)")
            if tp + fn == 0:
                why.append("the truth has no relevant document: recall undefined (auto-judge-evaluate gives 0.0)")
            row.update(Precision=prec, Recall=rec, F1=2 * tp / (2 * tp + fp + fn))
        row.update(TP=tp, FP=fp, FN=fn)
        both = int((rt & rp).sum()) + int((~rt & rp).sum()) + int((rt & ~rp).sum())
        row["Jaccard"] = int((rt & rp).sum()) / both if both else np.nan
        if not both:
            why.append("no document relevant on either side: Jaccard undefined")
        notes = set()
        for a, b in keys:
            v, w = _kappa((t >= a).astype(int), (p >= b).astype(int))
            row[kname(a, b)] = v
            if w:
                notes.add(f"{kname(a, b)}: {w}")
        if truth_max_grade != predict_max_grade:
            row["Kappa_w"] = row["Kripp_a"] = np.nan
            why.append("the two sides use different grade scales: weighted kappa and alpha undefined")
        else:
            v, w = _kappa(t, p, "linear", list(range(truth_max_grade + 1)))
            row["Kappa_w"] = v
            if w:
                notes.add(f"Kappa_w: {w}")
            row["Kripp_a"] = krippendorff_alpha(t, p, "ordinal")
            if row["Kripp_a"] != row["Kripp_a"]:
                why.append("one grade only on this topic: alpha undefined")
        row["ARI"], w = _ari(rt.astype(int), rp.astype(int))
        if w:
            why.append(w)
        row["reasons"] = "; ".join(why + sorted(notes))
        rows.append(row)
    df = pd.DataFrame(rows)
    if not len(df):
        return df
    mean = {"Topic": "MEAN"}
    left = []
    for c in df.columns:
        if c in ("Topic", "reasons", "TP", "FP", "FN"):
            continue
        v = pd.to_numeric(df[c], errors="coerce")
        mean[c] = float(v.mean()) if v.notna().any() else np.nan
        if v.isna().any():
            left.append(f"{c} over {int(v.notna().sum())} of {len(v)} topics")
    mean["reasons"] = ("undefined values left out: " + ", ".join(left)) if left else ""
    return pd.concat([df, pd.DataFrame([mean])], ignore_index=True)


# ---------------------------------------------------------------------------- a campaign's files

def source_leaderboard(camp, name: str, measures: list[str] | None = None) -> pd.DataFrame:
    """The leaderboard under one judgment source: per-topic rows and each run's `all` row (the evaluator's
    summary value), as a long table run, topic, measure, value."""
    from ..evaluation.evaluate import summarize
    from ..formats.autojudge import with_aggregates
    from .ppi import _long_values
    from .sources import source_judgments
    long = _long_values(camp, source_judgments(camp, name), measures or camp.measures() or ["map"])
    return with_aggregates(long, summarize(long))


def export_campaign(camp, out, sources: list[str] | None = None, measures: list[str] | None = None,
                    board_format: str = "jsonl") -> list:
    """Write SOURCE.qrels (AutoJudge's judgment format: TREC qrels) and SOURCE.eval.jsonl (or .eval.tot /
    .eval.ir_measures) for each judgment source into `out`; returns the paths."""
    from pathlib import Path

    from ..formats.autojudge import leaderboard_text
    from ..formats.qrels import write_qrels
    from ..util.atomic import atomic_write
    from .sources import source_judgments, source_names
    names = sources or source_names(camp)
    out = Path(out)
    fs.makedirs(out)
    paths = []
    for n in names:
        stem = n.replace(":", "_")
        q = source_judgments(camp, n)
        if not len(q):
            continue
        write_qrels(out / f"{stem}.qrels", q)
        paths.append(out / f"{stem}.qrels")
        board = source_leaderboard(camp, n, measures)
        p = out / f"{stem}.eval.{board_format}"
        atomic_write(p, leaderboard_text(board, board_format).encode("utf-8"))
        paths.append(p)
    return paths
