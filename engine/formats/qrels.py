"""TREC qrels: reading and writing, and the rules for duplicate (conflicting) judgments."""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..errors import FormatError, Problem, Warnings
from .grammar import check_grade_bounds
from .files import PathLike, _Col, read_table, str_series, write_text

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it
pa = lazy_module("pyarrow")


QRELS_COLUMNS = ["topic", "doc", "grade"]


JUDGMENT_EXTRA = {"stratum": "int64", "prob": "float64", "method": "str"}


CONFLICT_RULES = ("last", "max", "majority")


QRELS_COLS = [_Col("topic", "str", "a topic id"), _Col("iter", "str", "an iteration field (usually 0)"),
              _Col("doc", "str", "a document id"), _Col("grade", "int", "an integer relevance grade")]


QRELS_LABEL = "topic iter doc grade"


def rule_text(rule: str) -> str:
    return {"last": "the last judgment wins", "max": "the highest grade wins",
            "majority": "the most frequent grade wins (ties: the latest of the tied grades)"}[rule]


def resolve_duplicate_judgments(df: pd.DataFrame, spath: str, w: Warnings,
                                rule: str = "last") -> pd.DataFrame:
    """Resolve a document judged more than once for a topic (rows in file/log order).

    rule 'last': the later row wins (a re-judgment); 'max': the highest grade wins; 'majority': the most
    frequent grade wins, ties going to the latest of the tied grades. Negative grades (pooled, not
    judged) never override a real judgment. Identical repeats are folded and counted; differing ones
    are reported. Extra columns (stratum, prob, method) keep the latest known value.
    """
    if rule not in CONFLICT_RULES:
        raise FormatError(Problem(spath, None, f"unknown conflict rule {rule!r}"),
                          hint=f"use one of: {', '.join(CONFLICT_RULES)}")
    if len(df) == 0:
        return df
    ct, ut = _factorize(df["topic"])
    cd, ud = _factorize(df["doc"])
    key = ct.astype(np.int64) * (len(ud) + 1) + cd
    dup_any = pd.Series(key).duplicated(keep=False).to_numpy()
    if not dup_any.any():
        return df
    d = df[dup_any]
    dk = key[dup_any]
    grades = d["grade"].to_numpy(np.int64)
    n_distinct = pd.Series(grades).groupby(dk).nunique()
    conflicting = n_distinct[n_distinct > 1].index
    n_same = int((pd.Series(dk).value_counts() - 1)[n_distinct[n_distinct == 1].index].sum())
    has_line = "line" in d.columns
    for k in conflicting[:50]:
        rows = d[dk == k]
        if has_line:
            where = ", ".join(f"line {int(l)}: {int(g)}" for l, g in zip(rows["line"], rows["grade"]))
        else:
            where = ", ".join(str(int(g)) for g in rows["grade"])
        line = int(rows["line"].iat[-1]) if has_line else None
        w.add(spath, line, f"document {rows['doc'].iat[0]} judged differently for topic {rows['topic'].iat[0]} "
                           f"({where}); rule '{rule}': {rule_text(rule)}")
    if len(conflicting) > 50:
        w.add(spath, None, f"{len(conflicting) - 50} more conflicting judgments resolved by rule '{rule}'")
    if n_same:
        w.add(spath, None, f"{n_same} repeated identical judgment lines folded into one")
    return _resolve(df, key, rule)


def _factorize(col: pd.Series) -> tuple[np.ndarray, object]:
    """pd.factorize of an id column (codes in order of first appearance, the distinct values); text is
    encoded by Arrow (0.36 s instead of 0.95 s for a topic and a document column of 1.7M judgments)."""
    if col.dtype == object:
        try:
            enc = pa.array(col.to_numpy(object), pa.string()).dictionary_encode()
        except (pa.ArrowException, TypeError, ValueError):
            enc = None
        if enc is not None and not enc.null_count:
            return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary
    return pd.factorize(col)


def _resolve(df: pd.DataFrame, key: np.ndarray, rule: str) -> pd.DataFrame:
    """One row per key: grade chosen by `rule`, extra columns from the latest row where known."""
    n = len(df)
    pos = np.arange(n)
    grade = df["grade"].to_numpy(np.int64)
    real = grade >= 0
    # rank of each row among its key's candidates: real judgments beat negative grades
    if rule == "last":
        score = np.stack([real.astype(np.int64), pos])
    elif rule == "max":
        score = np.stack([real.astype(np.int64), grade, pos])
    else:  # majority: count of the (key, grade) pair, then recency of that grade
        kg = pd.MultiIndex.from_arrays([key, grade])
        cnt = pd.Series(1, index=kg).groupby(level=[0, 1]).transform("size").to_numpy()
        last_pos = pd.Series(pos, index=kg).groupby(level=[0, 1]).transform("max").to_numpy()
        score = np.stack([real.astype(np.int64), cnt, last_pos, pos])
    # np.lexsort's primary key is the last one: sort by key, then real, ..., pos; the last row per key wins
    order = np.lexsort(tuple(score[::-1]) + (key,))
    ks = key[order]
    last_of_key = np.concatenate((ks[1:] != ks[:-1], [True]))
    winners = np.sort(order[last_of_key])
    out = df.iloc[winners].copy()
    for col in ("stratum", "prob", "method"):
        if col in df.columns:
            s = df[col]
            known = s.notna()
            if col == "method":
                known = known & (s.astype(str) != "")
            latest = pd.Series(s.to_numpy()[known.to_numpy()],
                               index=key[known.to_numpy()]).groupby(level=0).last()
            got = pd.Series(key[winners]).map(latest)
            vals = np.where(got.notna().to_numpy(), got.to_numpy(), out[col].to_numpy())
            out[col] = pd.Series(vals, index=out.index).astype(s.dtype)
    return out


def _judgment_table(df: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    out = {"topic": str_series(df["topic"].to_numpy(object)), "doc": str_series(df["doc"].to_numpy(object)),
           "grade": df["grade"].to_numpy(np.int64)}
    for c in extra:
        if c == "stratum":
            out[c] = df[c].to_numpy(np.int64)
        elif c == "prob":
            out[c] = df[c].to_numpy(np.float64)
        else:
            out[c] = str_series(df[c].astype(str).to_numpy(object))
    out["line"] = df["line"].to_numpy(np.int64)
    return pd.DataFrame(out, copy=False)


def _require_rows(spath: str, df: pd.DataFrame, label: str) -> None:
    if len(df) == 0:
        raise FormatError(Problem(spath, None, "file is empty (holds no judgments)"),
                          hint=f"a judgment line reads: {label}")


def read_qrels(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
               data: bytes | None = None) -> pd.DataFrame:
    """Read TREC qrels (`topic iter doc grade`) into topic, doc, grade (+ line).

    Grades may be graded or negative (pooled, not judged). Repeated judgments resolve by `rule`.
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, QRELS_COLS, QRELS_LABEL, data=data)
    _require_rows(spath, df, QRELS_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    df = resolve_duplicate_judgments(df, spath, w, rule)
    return _judgment_table(df)


def write_qrels(path: PathLike, qrels: pd.DataFrame) -> None:
    """Write `topic 0 doc grade` lines sorted by topic then doc."""
    df = qrels.sort_values(["topic", "doc"], kind="mergesort")
    out = pd.DataFrame({"topic": df["topic"], "iter": 0, "doc": df["doc"], "grade": df["grade"].astype(int)})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))

