"""Judgments of sampled pools: Million Query prels and sample_eval qrels (strata, inclusion probabilities)."""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..errors import Warnings
from .grammar import check_grade_bounds
from .files import PathLike, _Col, _raise_rows, read_table, write_text
from .qrels import _judgment_table, _require_rows, resolve_duplicate_judgments

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it


PRELS_COLS = [_Col("topic", "str", "a topic id"), _Col("doc", "str", "a document id"),
              _Col("grade", "int", "an integer relevance grade"),
              _Col("method", "str", "a selection method (e.g. 0 MTC, 1 statAP, 2 both)"),
              _Col("prob", "float", "an inclusion probability in (0, 1]")]


PRELS_LABEL = "topic doc grade method probability"


SAMPLE_COLS = [_Col("topic", "str", "a topic id"), _Col("iter", "str", "an iteration field (usually 0)"),
               _Col("doc", "str", "a document id"), _Col("stratum", "int", "an integer stratum number"),
               _Col("grade", "int", "an integer grade (-1 = pooled, not sampled)")]


SAMPLE_LABEL = "topic iter doc stratum grade"


def read_prels(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
               data: bytes | None = None) -> pd.DataFrame:
    """Read Million Query prels (`topic doc grade method probability`) into topic, doc, grade, method,
    prob (+ line). The probability must lie in (0, 1]."""
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, PRELS_COLS, PRELS_LABEL, data=data)
    _require_rows(spath, df, PRELS_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    p = df["prob"].to_numpy(np.float64)
    _raise_rows(spath, df, ~((p > 0) & (p <= 1)),
                lambda r: f"probability must be in (0, 1], found {r['prob']!r}",
                hint="the 5th field is the document's inclusion probability (1 when selected with certainty)")
    df = resolve_duplicate_judgments(df, spath, w, rule)
    from .mq import warn_unknown_methods
    warn_unknown_methods(spath, df, w)
    return _judgment_table(df, ("method", "prob"))


def read_sample(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
                data: bytes | None = None) -> pd.DataFrame:
    """Read sample_eval qrels (`topic iter doc stratum grade`; grade -1 = pooled, not sampled) into
    topic, doc, grade, stratum, prob (+ line).

    prob is each stratum's sampling rate, sampled / pooled documents of that (topic, stratum), the
    inclusion probability of every document in the stratum. A stratum with no sampled document is
    reported (its prob is 0).
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, SAMPLE_COLS, SAMPLE_LABEL, data=data)
    _require_rows(spath, df, SAMPLE_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    _raise_rows(spath, df, df["grade"].to_numpy(np.int64) < -1,
                lambda r: f"grade {int(r['grade'])} is not allowed (-1 = pooled, not sampled; 0.. = judged)",
                hint="sample_eval grades are -1 or a judgment >= 0")
    df = resolve_duplicate_judgments(df, spath, w, rule)
    df = df.copy()
    df["prob"] = stratum_probabilities(df["topic"], df["stratum"], df["grade"])
    empty = df[df["prob"] == 0].drop_duplicates(["topic", "stratum"])
    for _, r in empty.head(20).iterrows():
        w.add(spath, int(r["line"]), f"stratum {int(r['stratum'])} of topic {r['topic']} has no sampled "
                                     f"document (all grades -1); its inclusion probability is 0")
    return _judgment_table(df, ("stratum", "prob"))


def stratum_probabilities(topic: pd.Series, stratum: pd.Series, grade: pd.Series) -> np.ndarray:
    """Per row: sampled (grade >= 0) / pooled documents of its (topic, stratum)."""
    key = pd.MultiIndex.from_arrays([np.asarray(topic, dtype=object), np.asarray(stratum, dtype=np.int64)])
    sampled = pd.Series((np.asarray(grade) >= 0).astype(np.float64), index=key)
    return sampled.groupby(level=[0, 1]).transform("mean").to_numpy(np.float64)


def write_prels(path: PathLike, prels: pd.DataFrame) -> None:
    """Write `topic doc grade method probability` lines (method defaults to 0, prob to 1)."""
    df = prels.sort_values(["topic", "doc"], kind="mergesort")
    method = df["method"].astype(str) if "method" in df else "0"
    prob = df["prob"].map(repr) if "prob" in df else "1"
    out = pd.DataFrame({"topic": df["topic"], "doc": df["doc"], "grade": df["grade"].astype(int),
                        "method": method, "prob": prob})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


def write_sample(path: PathLike, sample: pd.DataFrame) -> None:
    """Write sample_eval qrels `topic 0 doc stratum grade` (grade -1: pooled, not sampled)."""
    df = sample.sort_values(["topic", "stratum", "doc"], kind="mergesort")
    out = pd.DataFrame({"topic": df["topic"], "iter": 0, "doc": df["doc"],
                        "stratum": df["stratum"].astype(int), "grade": df["grade"].astype(int)})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))

