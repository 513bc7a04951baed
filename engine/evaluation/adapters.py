"""Inputs by convention: judgments and runs in any of the ecosystem's shapes, validated as the file
readers validate files.

Recognized shapes
- DataFrames with Cranfield's columns (topic, doc, grade / run, topic, doc, score), ir_measures'
  (query_id, doc_id, relevance / score), PyTerrier's (qid, docno, label / score [, rank]) or trec file
  column names (query, docno, rel / query, docno, score, run_id or system); a one-run frame needs no run column;
- pytrec_eval dicts {topic: {doc: grade or score}};
- ranx `Qrels` / `Run` objects (ranx is imported only if such an object is passed), trectools `TrecQrel` /
  `TrecRun` objects and their frames (query, docid, rel / score, system);
- paths to qrels / run files (read by the file readers), lists of paths for runs, and open file objects or
  text streams (StringIO) holding such a file;
- iterables of named tuples or tuples (ir_measures' Qrel(query_id, doc_id, relevance) and
  ScoredDoc(query_id, doc_id, score)).

Validation, exactly as the files: a document retrieved twice for a topic keeps its first occurrence
(warning); conflicting judgments follow the rule 'last' (warning); NaN or infinite scores and
non-integer grades are errors; run topics without judgments, and ids that match only after removing
leading zeros, are warnings. Warnings are `Problem` objects in an `Issues` list the caller can inspect;
the library's entry points given no `Issues` raise them through Python's `warnings` (`InputWarning`).
A topic given with an empty ranking ({topic: {}}) is kept: `as_runs` lists such (run, topic) pairs in
`attrs["empty"]`, and they are evaluated as empty lists (as pytrec_eval does).

>>> from engine.evaluation.adapters import as_qrels
>>> as_qrels({"1": {"a": 1, "b": 0}})[["topic", "doc", "grade"]].values.tolist()
[['1', 'a', 1], ['1', 'b', 0]]
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..util.lazy import lazy_module
from ..errors import CranfieldError, Warnings
from ..util import fs

pd = lazy_module("pandas")      # dict inputs never import it
pa = lazy_module("pyarrow")
pc = lazy_module("pyarrow.compute")

QRELS_COLUMNS = {
    "cranfield": ("topic", "doc", "grade"),
    "ir_measures": ("query_id", "doc_id", "relevance"),
    "pyterrier": ("qid", "docno", "label"),
    "trec": ("query", "docno", "rel"),
    "trectools": ("query", "docid", "rel"),
}
RUN_COLUMNS = {
    "cranfield": ("topic", "doc", "score"),
    "ir_measures": ("query_id", "doc_id", "score"),
    "pyterrier": ("qid", "docno", "score"),
    "trec": ("query", "docno", "score"),
    "trectools": ("query", "docid", "score"),
}
RUN_NAME_COLUMNS = ("run", "run_id", "system", "name", "tag")
SOURCE = "<input>"


class InputWarning(UserWarning):
    """A problem with an input that Cranfield resolved (duplicates, topics without judgments, ...)."""


def surface(issues: Warnings, stacklevel: int = 3) -> None:
    """Raise the problems of `issues` not raised yet as `InputWarning`s (Python's warnings module)."""
    import warnings
    done = getattr(issues, "_surfaced", 0)
    items = list(issues)
    for p in items[done:]:
        warnings.warn(str(p), InputWarning, stacklevel=stacklevel)
    try:
        issues._surfaced = len(items)
    except AttributeError:
        pass


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


def _unwrap(obj, kind: str):
    """The table inside another library's object: trectools' TrecQrel (`qrels_data`) / TrecRun (`run_data`);
    a file object or text stream is read as the file it holds (`_spool`)."""
    attr = "qrels_data" if kind == "judgments" else "run_data"
    inner = getattr(obj, attr, None)
    if inner is not None and isinstance(inner, pd.DataFrame):
        return inner
    if hasattr(obj, "read") and not isinstance(obj, (pd.DataFrame, Mapping)):
        return _spool(obj)
    return obj


def _spool(stream) -> Path:
    """A file object or text stream (open file, StringIO, BytesIO) copied to a temporary file named as the
    stream's file, so the file readers (and their messages) read it; removed at exit."""
    import atexit
    import shutil
    import tempfile

    data = stream.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = Path(tempfile.mkdtemp(prefix="cranfield-stream-"))
    atexit.register(shutil.rmtree, folder, True)
    name = Path(str(getattr(stream, "name", "") or "")).name
    path = folder / (name if name and not name.startswith("<") else "stream")
    fs.atomic_write(path, data)
    return path


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


def _refuse_missing(s) -> None:
    """A None/NaN id is refused (it would become a document named "nan")."""
    miss = s.isna().to_numpy() if isinstance(s, pd.Series) else pd.isna(np.asarray(s, dtype=object))
    if miss.any():
        rows = np.flatnonzero(miss)
        raise CranfieldError(f"{SOURCE}: column {getattr(s, 'name', None)!r} has {len(rows)} missing value(s) "
                             f"(None/NaN; first in row {int(rows[0]) + 1}); every topic and doc id must be given")


def _ids(s: pd.Series) -> pd.Series:
    _refuse_missing(s)
    return pd.Series([x if type(x) is str else str(x) for x in s.tolist()], dtype=object, index=s.index)


def as_qrels(obj, *, issues: Warnings | None = None, rule: str = "last") -> pd.DataFrame:
    """Judgments (topic, doc, grade) from any recognized shape, validated as a qrels file is."""
    from ..formats.detect import read_judgments
    from ..formats.qrels import resolve_duplicate_judgments

    w = issues if issues is not None else Warnings()
    obj = _unwrap(obj, "judgments")
    if isinstance(obj, (str, Path)):
        return read_judgments(obj, w, rule=rule)
    if _is_ranx(obj, "Qrels"):
        obj = obj.to_dict()
    df, cols = _frame_of(obj, "judgments", "grade")
    t, d, g = cols
    out = pd.DataFrame({"topic": _ids(df[t]), "doc": _ids(df[d]), "grade": _strict_grades(df[g])})
    return resolve_duplicate_judgments(out.reset_index(drop=True), SOURCE, w, rule)


SUBTOPIC_COLUMNS = ("subtopic", "iteration")     # ir_measures' Qrel.iteration holds the subtopic


def as_subtopic_qrels(obj, *, issues: Warnings | None = None) -> pd.DataFrame:
    """Subtopic judgments (topic, subtopic, doc, grade) for the diversity measures: a qrels file (its second
    column is the subtopic, as ndeval reads it), a frame with a `subtopic` or ir_measures' `iteration` column
    beside one of the judgment column sets, or named tuples with such a field."""
    obj = _unwrap(obj, "judgments")
    if isinstance(obj, (str, Path)):
        from ..measures.diversity import read_diversity_qrels
        return read_diversity_qrels(obj, issues)
    if isinstance(obj, Mapping) or _is_ranx(obj, "Qrels"):
        raise CranfieldError("diversity measures need subtopic judgments: a pytrec_eval dict or ranx Qrels has "
                             "none; give a qrels file (topic subtopic doc grade), a frame with a subtopic (or "
                             "ir_measures' iteration) column, or ir_measures Qrel tuples")
    df, cols = _frame_of(obj, "judgments", "grade")
    sub = next((c for c in SUBTOPIC_COLUMNS if c in df.columns), None)
    if sub is None:
        raise CranfieldError(f"diversity measures need subtopic judgments: add a subtopic (or iteration) column "
                             f"to the judgments (columns: {list(df.columns)[:12]})")
    t, d, g = cols
    return pd.DataFrame({"topic": _ids(df[t]), "subtopic": _ids(df[sub]), "doc": _ids(df[d]),
                         "grade": _strict_grades(df[g])}).reset_index(drop=True)


@dataclass
class RunColumns:
    """Runs as coded columns, validated as run files are: per row run, topic and document codes into the
    name arrays, and the score; (run, topic) pairs given with an empty ranking. The one reading of run
    inputs: `as_runs` builds its table from it, `cranfield.Evaluator` evaluates it directly."""

    runs: list[str]
    run_code: np.ndarray
    topics: np.ndarray          # object array of str
    topic_code: np.ndarray
    docs: np.ndarray            # object array of str
    doc_code: np.ndarray
    score: np.ndarray
    empty: list

    def frame(self) -> pd.DataFrame:
        """The run table (run, topic, doc, score)."""
        out = pd.DataFrame({"run": pd.Series(np.asarray(self.runs, dtype=object)[self.run_code], dtype=object),
                            "topic": pd.Series(self.topics[self.topic_code], dtype=object),
                            "doc": pd.Series(self.docs[self.doc_code], dtype=object), "score": self.score})
        if self.empty:
            out.attrs["empty"] = list(self.empty)
        return out


def _codes(col) -> tuple[np.ndarray, np.ndarray]:
    """(codes, names as str) of an id column, hashed without per-row Python; a missing id is refused."""
    arrow = _arrow_text(col)
    if arrow is not None:               # pandas' Arrow-backed text (pandas 3's default): encoded by Arrow
        enc = pc.dictionary_encode(arrow).combine_chunks()
        return (np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64),
                np.asarray(enc.dictionary.to_numpy(zero_copy_only=False), dtype=object))
    _refuse_missing(col)
    codes, uniq = pd.factorize(col, use_na_sentinel=False)
    names = np.asarray([x if type(x) is str else str(x) for x in np.asarray(uniq, dtype=object).tolist()], dtype=object)
    if len(set(names.tolist())) != len(names):             # 1 and "1": one id as text
        u2, inv = np.unique(names, return_inverse=True)
        codes, names = inv[codes], u2.astype(object)
    return np.asarray(codes, np.int64), names


def _arrow_text(col):
    """The Arrow string array under a pandas column of Arrow-backed text without missing values, else None
    (same codes and names as pd.factorize: ids in order of first appearance)."""
    dt = getattr(col, "dtype", None)
    if not (isinstance(dt, pd.StringDtype) and str(dt.storage).startswith("pyarrow")):
        return None
    arr = pa.chunked_array(pa.array(col.array)) if not isinstance(col.array, pa.ChunkedArray) else col.array
    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr


def run_columns(obj, *, issues: Warnings | None = None, name: str = "run") -> RunColumns:
    """`RunColumns` from any recognized run shape (see the module docstring). A frame or dict without run
    names is one run called `name`."""
    from ..formats.runs import read_runs, warn_repeated_docs

    w = issues if issues is not None else Warnings()
    obj = _unwrap(obj, "runs")
    if isinstance(obj, (str, Path)) or (isinstance(obj, (list, tuple)) and obj
                                        and all(isinstance(p, (str, Path)) for p in obj)):
        obj = read_runs([obj] if isinstance(obj, (str, Path)) else list(obj), w)
    if _is_ranx(obj, "Run"):
        name = getattr(obj, "name", None) or name
        obj = obj.to_dict()
    empty: list = []
    if isinstance(obj, Mapping):
        if obj and all(isinstance(v, Mapping) and v and all(isinstance(x, Mapping) for x in v.values())
                       for v in obj.values()):
            parts = [run_columns(v, issues=w, name=str(k)) for k, v in obj.items()]   # {run: {topic: {doc: score}}}
            return _concat_columns(parts)
        empty = [(name, str(t)) for t, v in obj.items() if isinstance(v, Mapping) and not v]
    elif isinstance(obj, pd.DataFrame):
        empty = list(obj.attrs.get("empty", ()))
    df, cols = _frame_of(obj, "runs", "score")
    t, d, s = cols
    run_col = next((c for c in RUN_NAME_COLUMNS if c in df.columns), None)
    col = df[s]
    try:
        score = col.to_numpy(np.float64) if col.dtype.kind in "fiu" else \
            pd.to_numeric(col, errors="raise").to_numpy(np.float64)
    except (ValueError, TypeError):
        raise CranfieldError("runs: scores must be numbers") from None
    bad = ~np.isfinite(score)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CranfieldError(f"runs: row {i + 1}: score {score[i]!r} is not a finite number "
                             f"({int(bad.sum())} such rows; a run file would be refused the same way)")
    if run_col:
        rc, rn = _codes(df[run_col])
        runs = rn.tolist()
    else:
        rc, runs = np.zeros(len(df), np.int64), [name]
    tc, tn = _codes(df[t])
    dc, dn = _codes(df[d])
    out = RunColumns(runs, rc, tn, tc, dn, dc, score, empty)
    # a document retrieved twice for a topic: the first occurrence is kept (as run files)
    key = (rc * max(len(tn), 1) + tc) * max(len(dn), 1) + dc
    if len(key) > 1:
        srt = np.argsort(key, kind="stable")
        same = key[srt][1:] == key[srt][:-1]
        if same.any():
            dup = np.zeros(len(key), bool)
            dup[srt[1:][same]] = True
            start = np.concatenate(([True], ~same))               # first of each key, in sorted order
            first = np.empty(len(key), np.int64)
            first[srt] = srt[np.maximum.accumulate(np.where(start, np.arange(len(key)), 0))]
            idx = np.flatnonzero(dup)
            warn_repeated_docs(w, [(SOURCE, int(i) + 1, dn[dc[i]], tn[tc[i]], int(first[i]) + 1)
                                   for i in idx[:50]], len(idx) - len(idx[:50]), SOURCE)
            keep = ~dup
            out = RunColumns(runs, rc[keep], tn, tc[keep], dn, dc[keep], score[keep], empty)
    return out


def _concat_columns(parts: list[RunColumns]) -> RunColumns:
    """Several runs' columns as one (names re-coded)."""
    runs, rcs, tcs, dcs, scores, empty = [], [], [], [], [], []
    tmap: dict = {}
    dmap: dict = {}
    for p in parts:
        rlut = np.asarray([runs.index(r) if r in runs else (runs.append(r) or len(runs) - 1) for r in p.runs], np.int64)
        tlut = np.asarray([tmap.setdefault(x, len(tmap)) for x in p.topics.tolist()], np.int64)
        dlut = np.asarray([dmap.setdefault(x, len(dmap)) for x in p.docs.tolist()], np.int64)
        rcs.append(rlut[p.run_code] if len(p.run_code) else p.run_code)
        tcs.append(tlut[p.topic_code] if len(p.topic_code) else p.topic_code)
        dcs.append(dlut[p.doc_code] if len(p.doc_code) else p.doc_code)
        scores.append(p.score)
        empty += p.empty
    cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
    return RunColumns(runs, cat(rcs, np.int64), np.asarray(list(tmap), dtype=object), cat(tcs, np.int64),
                      np.asarray(list(dmap), dtype=object), cat(dcs, np.int64), cat(scores, np.float64), empty)


def as_runs(obj, *, issues: Warnings | None = None, name: str = "run") -> pd.DataFrame:
    """Runs (run, topic, doc, score) from any recognized shape, validated as run files are (`run_columns`).
    A frame or dict without run names is one run called `name`; empty rankings are listed in
    `attrs["empty"]`."""
    obj = _unwrap(obj, "runs")
    if isinstance(obj, (str, Path)) or (isinstance(obj, (list, tuple)) and obj
                                        and all(isinstance(p, (str, Path)) for p in obj)):
        from ..formats.runs import read_runs
        return read_runs([obj] if isinstance(obj, (str, Path)) else list(obj),
                         issues if issues is not None else Warnings())
    return run_columns(obj, issues=issues, name=name).frame()


def check_ids(qrels: pd.DataFrame, runs: pd.DataFrame, issues: Warnings) -> None:
    """Warn about run topics without judgments, and about ids that match only without leading zeros."""
    check_topics(qrels["topic"].astype(str), runs["topic"].astype(str), issues)


def check_topics(judged, run_topics, issues: Warnings) -> None:
    """`check_ids` on the topic ids themselves (iterables of str)."""
    qt = set(judged)
    rt = set(run_topics)
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
