"""TREC AutoJudge leaderboards, read and written (docs/llm-judges.md, "AutoJudge").

A leaderboard holds one value per (run, topic, measure); the rows whose topic is `all` are the run's
aggregate (what `auto-judge-evaluate meta-evaluate` correlates by default). Formats:
- `jsonl`: one JSON object a line, {"run_id": R, "topic_id": T, "measure": M, "value": V} (the
  `*.eval.jsonl` files of the track);
- `tot`: whitespace-separated `run measure topic value`;
- `ir_measures`: whitespace-separated `run topic measure value`.
AutoJudge's judgments are TREC qrels (`topic 0 doc grade`: engine.formats.qrels reads and writes them);
its nugget banks in the nuggetizer form are engine.nuggets.interchange's `nuggetizer-nuggets`.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from ..errors import FormatError, Problem

LEADERBOARD_FORMATS = ("jsonl", "tot", "ir_measures")
ALL = "all"
_COLS = {"tot": ("run", "measure", "topic", "value"), "ir_measures": ("run", "topic", "measure", "value")}
_HINT = ("an AutoJudge leaderboard: jsonl ({\"run_id\", \"topic_id\", \"measure\", \"value\"} a line), "
         "tot (run measure topic value) or ir_measures (run topic measure value); name it with --format")


def detect_leaderboard(path, text: str) -> str:
    """`jsonl` when the first non-empty line is a JSON object; a 4-column file could be tot or ir_measures,
    so it is refused with a request for the format."""
    for ln, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("{"):
            return "jsonl"
        raise FormatError(Problem(str(path), ln, f"{len(s.split())} columns: could be tot or ir_measures"),
                          hint=_HINT)
    raise FormatError(Problem(str(path), None, "file is empty (holds no leaderboard rows)"), hint=_HINT)


def _number(v, spath: str, ln: int) -> float:
    if isinstance(v, bool):
        raise FormatError(Problem(spath, ln, f"value {v!r} is not a number"), hint=_HINT)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise FormatError(Problem(spath, ln, f"value {v!r} is not a number"), hint=_HINT) from None
    if not math.isfinite(x):
        raise FormatError(Problem(spath, ln, f"value {v!r} is not a finite number"), hint=_HINT)
    return x


def read_leaderboard(path, fmt: str | None = None) -> pd.DataFrame:
    """An AutoJudge leaderboard as a long table: run, topic, measure, value (file order; `all` rows kept)."""
    from .files import check_text, read_bytes
    from .safeload import loads_json, type_name
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    text = data.decode("utf-8")
    fmt = fmt or detect_leaderboard(path, text)
    if fmt not in LEADERBOARD_FORMATS:
        raise FormatError(Problem(spath, None, f"unknown leaderboard format {fmt!r}"), hint=_HINT)
    rows, probs = [], []
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            if fmt == "jsonl":
                try:
                    obj = loads_json(line, spath, ln)
                except ValueError as exc:
                    raise FormatError(Problem(spath, ln, f"is not valid JSON ({getattr(exc, 'msg', exc)})"),
                                      hint=_HINT) from None
                if not isinstance(obj, dict):
                    raise FormatError(Problem(spath, ln, f"expected a JSON object, found {type_name(obj)}"), hint=_HINT)
                miss = [k for k in ("run_id", "topic_id", "measure", "value") if k not in obj]
                if miss:
                    raise FormatError(Problem(spath, ln, f"missing key {miss[0]!r}"), hint=_HINT)
                run, topic, measure, value = obj["run_id"], obj["topic_id"], obj["measure"], obj["value"]
            else:
                f = line.split()
                if len(f) != 4:
                    raise FormatError(Problem(spath, ln, f"{len(f)} fields; {fmt} has 4 ({' '.join(_COLS[fmt])})"),
                                      hint=_HINT)
                rec = dict(zip(_COLS[fmt], f))
                run, topic, measure, value = rec["run"], rec["topic"], rec["measure"], rec["value"]
            for what, v in (("run_id", run), ("topic_id", topic), ("measure", measure)):
                if not isinstance(v, (str, int)) or isinstance(v, bool) or str(v) == "":
                    raise FormatError(Problem(spath, ln, f"{what} must be a non-empty name"), hint=_HINT)
            rows.append((str(run), str(topic), str(measure), _number(value, spath, ln)))
        except FormatError as exc:
            probs.extend(exc.problems)
            if len(probs) >= 10:
                break
    if probs:
        raise FormatError(probs, hint=_HINT)
    if not rows:
        raise FormatError(Problem(spath, None, "file is empty (holds no leaderboard rows)"), hint=_HINT)
    df = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])
    dup = df.duplicated(["run", "topic", "measure"], keep=False)
    if dup.any():
        r = df[dup].iloc[0]
        raise FormatError(Problem(spath, None, f"run {r['run']} topic {r['topic']} measure {r['measure']} appears "
                                               f"{int(dup.sum())} times"), hint="keep one value per (run, topic, measure)")
    return df


def run_means(board: pd.DataFrame, measure: str) -> pd.Series:
    """Run -> aggregate value of `measure`: the `all` rows where the leaderboard has them (as meta-evaluate
    reads it by default), else the mean over the run's topics. Runs in first-seen order."""
    sub = board[board["measure"] == measure]
    agg = sub[sub["topic"] == ALL]
    if len(agg):
        return pd.Series(agg["value"].to_numpy(float), index=agg["run"].to_numpy(object), name=measure)
    per = sub.groupby("run", sort=False)["value"].mean()
    return per.rename(measure)


def leaderboard_text(table: pd.DataFrame, fmt: str = "jsonl") -> str:
    """Write a long table (run, topic, measure, value; `all` rows included as given) in an AutoJudge format."""
    if fmt not in LEADERBOARD_FORMATS:
        raise ValueError(f"leaderboard format {fmt!r}: one of {', '.join(LEADERBOARD_FORMATS)}")
    out = []
    for run, topic, measure, value in table[["run", "topic", "measure", "value"]].itertuples(index=False):
        v = float(value)
        if fmt == "jsonl":
            out.append(json.dumps({"run_id": str(run), "topic_id": str(topic), "measure": str(measure),
                                   "value": v if np.isfinite(v) else None}))
        else:
            cells = (run, measure, topic) if fmt == "tot" else (run, topic, measure)
            out.append("\t".join([*map(str, cells), repr(v)]))
    return "\n".join(out) + "\n"


def with_aggregates(per_topic: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per-topic rows (run, topic, measure, value) followed by each run's `all` row from `summary` (run x
    measure, the evaluator's summary values)."""
    agg = summary.reset_index(names="run").melt(id_vars="run", var_name="measure", value_name="value")
    agg["topic"] = ALL
    pt = per_topic[["run", "topic", "measure", "value"]].astype({"run": str, "topic": str, "measure": str})
    out = pd.concat([pt, agg[["run", "topic", "measure", "value"]].astype({"run": str, "measure": str})],
                    ignore_index=True)
    return out.dropna(subset=["value"]).reset_index(drop=True)
