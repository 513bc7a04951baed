"""Inputs by convention: judgments and runs in any of the ecosystem's shapes, validated as the file
readers validate files.

Recognized shapes
- DataFrames with Cranfield's columns (topic, doc, grade / run, topic, doc, score), ir_measures'
  (query_id, doc_id, relevance / score), PyTerrier's (qid, docno, label / score [, rank]) or trec file
  column names (query, docno, rel / query, docno, score, run_id or system); a one-run frame needs no run column;
- pytrec_eval dicts {topic: {doc: grade or score}};
- ranx `Qrels` / `Run` objects (ranx is imported only if such an object is passed);
- paths to qrels / run files (read by the file readers), and lists of paths for runs;
- iterables of named tuples or tuples (ir_measures' Qrel(query_id, doc_id, relevance) and
  ScoredDoc(query_id, doc_id, score)).

Validation, exactly as the files: a document retrieved twice for a topic keeps its first occurrence
(warning); conflicting judgments follow the rule 'last' (warning); NaN or infinite scores and
non-integer grades are errors; run topics without judgments, and ids that match only after removing
leading zeros, are warnings. Warnings are `Problem` objects in an `Issues` list the caller can inspect.

>>> from engine.evaluation.adapters import as_qrels
>>> as_qrels({"1": {"a": 1, "b": 0}})[["topic", "doc", "grade"]].values.tolist()
[['1', 'a', 1], ['1', 'b', 0]]
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ..util.lazy import lazy_module
from ..errors import CranfieldError, Warnings

pd = lazy_module("pandas")      # dict inputs never import it

QRELS_COLUMNS = {
    "cranfield": ("topic", "doc", "grade"),
    "ir_measures": ("query_id", "doc_id", "relevance"),
    "pyterrier": ("qid", "docno", "label"),
    "trec": ("query", "docno", "rel"),
}
RUN_COLUMNS = {
    "cranfield": ("topic", "doc", "score"),
    "ir_measures": ("query_id", "doc_id", "score"),
    "pyterrier": ("qid", "docno", "score"),
    "trec": ("query", "docno", "score"),
}
RUN_NAME_COLUMNS = ("run", "run_id", "system", "name", "tag")
SOURCE = "<input>"


class Issues(Warnings):
    """Warnings about an input (a `Warnings`: `Problem` items with path, line and message)."""

    def note(self, kind: str, value: str) -> None:
        if kind == "run_topics_without_judgments":
            if not hasattr(self, "_seen"):
                self._seen = set()
            if value not in self._seen:
                self._seen.add(value)
                self.add(SOURCE, None, f"run topic {value} has no judgments: it is not evaluated")

    def error(self, message: str) -> CranfieldError:
        return CranfieldError(message)


def _expected(kind: str, got) -> CranfieldError:
    table = QRELS_COLUMNS if kind == "judgments" else RUN_COLUMNS
    sets = "; ".join(f"{k}: {', '.join(v)}" for k, v in table.items())
    return CranfieldError(f"{kind}: expected one of these column sets ({sets}), or a pytrec_eval dict, a ranx "
                          f"object, a file path or (topic, doc, value) tuples; got {got}")


def _columns_of(df: pd.DataFrame, kind: str) -> tuple[str, str, str]:
    table = QRELS_COLUMNS if kind == "judgments" else RUN_COLUMNS
    cols = set(df.columns)
    for names in table.values():
        if set(names) <= cols:
            return names
    raise _expected(kind, f"a DataFrame with columns {list(df.columns)[:12]}")


def _is_ranx(obj, cls: str) -> bool:
    return type(obj).__name__ == cls and type(obj).__module__.startswith("ranx")


def _from_nested(d: Mapping, value: str) -> pd.DataFrame:
    topics, docs, vals = [], [], []
    for t, inner in d.items():
        if not isinstance(inner, Mapping):
            raise CranfieldError(f"a pytrec_eval-style dict maps topic -> {{doc: {value}}}; topic {t!r} maps to "
                                 f"{type(inner).__name__}")
        for doc, v in inner.items():
            topics.append(str(t))
            docs.append(str(doc))
            vals.append(v)
    return pd.DataFrame({"topic": pd.Series(topics, dtype=object), "doc": pd.Series(docs, dtype=object),
                         value: pd.Series(vals, dtype=object)})


def _from_tuples(rows: Iterable, kind: str, value: str) -> pd.DataFrame:
    rows = list(rows)
    if not rows:
        return pd.DataFrame({"topic": [], "doc": [], value: []})
    first = rows[0]
    fields = getattr(first, "_fields", None)
    if fields:
        df = pd.DataFrame(rows, columns=list(fields))
        return df
    if isinstance(first, (tuple, list)) and len(first) in (3, 4):
        cols = ["topic", "doc", value] if len(first) == 3 else ["run", "topic", "doc", value]
        return pd.DataFrame([tuple(r) for r in rows], columns=cols)
    raise _expected(kind, f"an iterable of {type(first).__name__}")


def _frame_of(obj, kind: str, value: str) -> tuple:
    """(frame, (topic, doc, value) column names) of a nested dict, a DataFrame or an iterable of tuples."""
    if isinstance(obj, Mapping):
        return _from_nested(obj, value), ("topic", "doc", value)
    if isinstance(obj, pd.DataFrame):
        return obj, _columns_of(obj, kind)
    if isinstance(obj, Iterable):
        df = _from_tuples(obj, kind, value)
        return df, _columns_of(df, kind)
    raise _expected(kind, type(obj).__name__)


def _strict_grades(values: pd.Series) -> np.ndarray:
    out = np.empty(len(values), np.int64)
    for i, v in enumerate(values.tolist()):
        if isinstance(v, (bool, np.bool_)):
            raise CranfieldError(f"judgments: row {i + 1}: grade {v!r} is not an integer")
        if isinstance(v, (int, np.integer)):
            out[i] = int(v)
            continue
        if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
            out[i] = int(v)
            continue
        if isinstance(v, str) and v.strip().lstrip("+-").isascii() and v.strip().lstrip("+-").isdigit():
            out[i] = int(v.strip())
            continue
        raise CranfieldError(f"judgments: row {i + 1}: grade {v!r} is not an integer "
                             f"(grades are integers, as in a qrels file)")
    return out


def _ids(s: pd.Series) -> pd.Series:
    return pd.Series([x if type(x) is str else str(x) for x in s.tolist()], dtype=object, index=s.index)


def as_qrels(obj, *, issues: Warnings | None = None, rule: str = "last") -> pd.DataFrame:
    """Judgments (topic, doc, grade) from any recognized shape, validated as a qrels file is."""
    from ..formats.detect import read_judgments
    from ..formats.qrels import resolve_duplicate_judgments

    w = issues if issues is not None else Warnings()
    if isinstance(obj, (str, Path)):
        return read_judgments(obj, w, rule=rule)
    if _is_ranx(obj, "Qrels"):
        obj = obj.to_dict()
    df, cols = _frame_of(obj, "judgments", "grade")
    t, d, g = cols
    out = pd.DataFrame({"topic": _ids(df[t]), "doc": _ids(df[d]), "grade": _strict_grades(df[g])})
    return resolve_duplicate_judgments(out.reset_index(drop=True), SOURCE, w, rule)


def as_runs(obj, *, issues: Warnings | None = None, name: str = "run") -> pd.DataFrame:
    """Runs (run, topic, doc, score) from any recognized shape, validated as run files are. A frame or
    dict without run names is one run called `name`."""
    from ..formats.runs import read_runs, warn_repeated_docs

    w = issues if issues is not None else Warnings()
    if isinstance(obj, (str, Path)):
        return read_runs([obj], w)
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(p, (str, Path)) for p in obj):
        return read_runs(list(obj), w)
    if _is_ranx(obj, "Run"):
        name = getattr(obj, "name", None) or name
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
        if obj and all(isinstance(v, Mapping) and v and all(isinstance(x, Mapping) for x in v.values())
                       for v in obj.values()):
            parts = [as_runs(v, issues=w, name=str(k)) for k, v in obj.items()]   # {run: {topic: {doc: score}}}
            return pd.concat(parts, ignore_index=True)
    df, cols = _frame_of(obj, "runs", "score")
    t, d, s = cols
    run_col = next((c for c in RUN_NAME_COLUMNS if c in df.columns), None)
    try:
        score = pd.to_numeric(df[s], errors="raise").to_numpy(np.float64)
    except (ValueError, TypeError):
        raise CranfieldError("runs: scores must be numbers") from None
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CranfieldError(f"runs: row {i + 1}: score {score[i]!r} is not a finite number "
                             f"({int(bad.sum())} such rows; a run file would be refused the same way)")
    out = pd.DataFrame({"run": _ids(df[run_col]) if run_col else pd.Series([name] * len(df), dtype=object),
                        "topic": _ids(df[t]), "doc": _ids(df[d]), "score": score})
    key = pd.MultiIndex.from_frame(out[["run", "topic", "doc"]])
    dup = key.duplicated(keep="first")
    if dup.any():
        first = pd.Series(np.arange(len(out))[~dup] + 1, index=key[~dup])
        idx = np.flatnonzero(dup)
        warn_repeated_docs(w, [(SOURCE, int(i) + 1, out["doc"].iat[i], out["topic"].iat[i],
                                int(first[key[i]])) for i in idx[:50]], len(idx) - len(idx[:50]), SOURCE)
        out = out[~dup].reset_index(drop=True)
    return out


def check_ids(qrels: pd.DataFrame, runs: pd.DataFrame, issues: Warnings) -> None:
    """Warn about run topics without judgments, and about ids that match only without leading zeros."""
    qt = set(qrels["topic"].astype(str))
    rt = set(runs["topic"].astype(str))
    missing = sorted(rt - qt)
    if not missing:
        return
    strip = {t.lstrip("0") or "0": t for t in qt}
    near = [(t, strip[t.lstrip("0") or "0"]) for t in missing if (t.lstrip("0") or "0") in strip]
    for t, q in near[:10]:
        issues.add(SOURCE, None, f"run topic {t!r} matches judged topic {q!r} only without leading zeros: "
                                 f"ids are compared as text, so it is not evaluated (write the ids the same way)")
    rest = [t for t in missing if t not in dict(near)]
    if rest:
        issues.add(SOURCE, None, f"{len(rest)} run topic(s) have no judgments and are not evaluated: "
                                 f"{', '.join(rest[:10])}{' ...' if len(rest) > 10 else ''}")
