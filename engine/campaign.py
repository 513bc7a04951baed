"""Campaign directories: `campaign.yaml` (validated against `SCHEMA`), runs/, topics/, judgments/.

`load_campaign(path)` validates the configuration and returns a `Campaign` whose methods read the
inputs on demand (re-read when a file changes). Judgments merge the imported files with the
assessor log `judgments/log.jsonl`, repeated judgments resolved by `judgments.conflict_rule`.
Layout and schema: docs/campaign-format.md.
"""
from __future__ import annotations

import copy
import difflib
import json
import math
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import yaml

from .errors import CranfieldError, FormatError, Problem, Warnings
from .formats import (CONFLICT_RULES, PathLike, _rule_text, _str_series, check_text, read_bytes, read_judgments,
                      read_qrels, read_runs, resolve_duplicate_judgments, warn_unknown_topics)

CONFIG_NAME = "campaign.yaml"
LOG_NAME = "log.jsonl"
RUN_SUFFIXES = {".txt", ".run", ".res", ".trec", ".runs", ""}
JUDGMENT_SUFFIXES = {".qrels", ".prels", ".sample", ".txt", ".rels"}
TOPIC_SUFFIXES = {".txt", ".sgml", ".sgm", ".trec", ".tsv", ".jsonl", ".json"}
IGNORED_NAMES = {"readme", "readme.md", "readme.txt", "license", ".gitkeep", ".gitignore"}

# ----------------------------------------------------------------------------- schema (as data)
# Node kinds: map (fixed keys), dict (free keys: `key` kind, `values` node), list, str, int, number,
# bool, enum, any. `default` fills a missing key; `min` bounds numbers; `required` lists map keys.

_RUN_ENTRY = {"kind": "map", "keys": {
    "group": {"kind": "str", "doc": "the participating group that submitted the run"},
    "type": {"kind": "enum", "values": ["automatic", "manual"]},
    "pooled": {"kind": "bool", "doc": "whether the run contributed to the pool"},
    "file": {"kind": "str", "doc": "path of the run file, relative to the campaign directory"},
    "description": {"kind": "str"},
    "priority": {"kind": "int", "doc": "pooling priority given at submission (cranfield submit)"},
    "submitted": {"kind": "str", "doc": "submission time (ISO 8601), written by cranfield submit"},
    "checksum": {"kind": "str", "doc": "sha256 of the submitted file, written by cranfield submit"},
}}

SCHEMA: dict = {"kind": "map", "required": ["name"], "keys": {
    "name": {"kind": "str", "nonempty": True, "example": "name: My track 2026"},
    "description": {"kind": "str", "default": ""},
    "relevance": {"kind": "map", "default": {}, "keys": {
        "scale": {"kind": "dict", "key": "grade", "values": {"kind": "map", "required": ["gain"], "keys": {
            "label": {"kind": "str"},
            "gain": {"kind": "number", "example": "gain: 3"},
        }}, "default": {0: {"label": "not relevant", "gain": 0}, 1: {"label": "relevant", "gain": 1},
                        2: {"label": "highly relevant", "gain": 2}}},
        "binary_threshold": {"kind": "int", "min": 0, "default": 1},
    }},
    "evaluation": {"kind": "map", "default": {}, "keys": {
        "depth": {"kind": "int", "min": 1, "default": 1000},
        "measures": {"kind": "list", "items": {"kind": "str"}, "measures": True,
                     "default": ["map", "P.10", "ndcg_cut.10", "bpref"]},
    }},
    "judgments": {"kind": "map", "default": {}, "keys": {
        "conflict_rule": {"kind": "enum", "values": list(CONFLICT_RULES), "default": "last"},
    }},
    "runs": {"kind": "dict", "key": "str", "values": _RUN_ENTRY, "default": {}},
    "topics": {"kind": "map", "default": {}, "keys": {
        "categories": {"kind": "dict", "key": "topic", "values": {"kind": "str"}, "default": {}},
        "targets": {"kind": "dict", "key": "topic", "values": {"kind": "int", "min": 1}, "default": {}},
    }},
    "pool": {"kind": "any", "default": {}, "doc": "written by `cranfield pool`"},
    "cost": {"kind": "any", "default": {}, "doc": "checked by engine.cost"},
    "submission": {"kind": "any", "default": {}, "doc": "intake settings, checked by engine.intake"},
}}

_KIND_TEXT = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true or false",
              "map": "a mapping (key: value lines)", "dict": "a mapping", "list": "a list ([a, b] or - items)"}


def _type_name(v: Any) -> str:
    return repr(v) if isinstance(v, (str, int, float, bool)) or v is None else type(v).__name__


def _node_lines(node, prefix: tuple = (), out: dict | None = None, dups: list | None = None) -> dict:
    """Key path -> 1-based line of the YAML node, and duplicate keys found on the way."""
    out = {} if out is None else out
    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            key = str(k.value)
            line = k.start_mark.line + 1
            if key in seen and dups is not None:
                dups.append((prefix + (key,), seen[key], line))
            seen[key] = line
            out[prefix + (key,)] = line
            _node_lines(v, prefix + (key,), out, dups)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _node_lines(v, prefix + (str(i),), out, dups)
    return out


class _Validator:
    def __init__(self, path: str, lines: dict):
        self.path, self.lines, self.problems = path, lines, []

    def err(self, keypath: tuple, message: str) -> None:
        line = None
        for i in range(len(keypath), -1, -1):
            if keypath[:i] in self.lines:
                line = self.lines[keypath[:i]]
                break
        where = ".".join(keypath) if keypath else "(top level)"
        self.problems.append(Problem(self.path, line, f"{where}: {message}"))

    def check(self, node: dict, value: Any, kp: tuple) -> Any:
        kind = node["kind"]
        if kind == "any":
            return value
        if kind == "map":
            return self._map(node, value, kp)
        if kind == "dict":
            return self._dict(node, value, kp)
        if kind == "list":
            if not isinstance(value, list):
                self.err(kp, f"must be {_KIND_TEXT['list']}, got {_type_name(value)}")
                return node.get("default", [])
            out = [self.check(node["items"], v, kp + (str(i),)) for i, v in enumerate(value)]
            if node.get("measures"):
                self._measures(out, kp)
            return out
        if kind == "enum":
            if value not in node["values"]:
                close = difflib.get_close_matches(str(value), node["values"], n=1)
                self.err(kp, f"must be one of {', '.join(node['values'])}, got {_type_name(value)}"
                             + (f" (did you mean {close[0]}?)" if close else ""))
            return value
        if kind == "str":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                extra = (" (YAML reads unquoted yes/no/on/off/true/false as a boolean: quote the text, "
                         "e.g. 'no')" if isinstance(value, bool) else "")
                self.err(kp, f"must be {_KIND_TEXT['str']}, got {_type_name(value)}{extra}")
                return ""
            value = str(value)
            if node.get("nonempty") and not value.strip():
                self.err(kp, "must not be empty" + (f"; write e.g. `{node['example']}`" if "example" in node else ""))
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                self.err(kp, f"must be true or false, got {_type_name(value)}")
            return value
        if kind in ("int", "number"):
            ok = isinstance(value, int) and not isinstance(value, bool)
            if kind == "number":
                ok = ok or (isinstance(value, float) and math.isfinite(value))
            if not ok:
                ex = f"; write e.g. `{node['example']}`" if "example" in node else ""
                self.err(kp, f"must be {_KIND_TEXT[kind]}, got {_type_name(value)}{ex}")
                return value
            if "min" in node and value < node["min"]:
                self.err(kp, f"must be >= {node['min']}, got {value}")
            return value
        raise AssertionError(kind)

    def _map(self, node: dict, value: Any, kp: tuple) -> dict:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.err(kp, f"must be {_KIND_TEXT['map']}, got {_type_name(value)}")
            return self._defaults(node)
        keys = node["keys"]
        out = {}
        for k, v in value.items():
            ks = str(k)
            if ks not in keys:
                close = difflib.get_close_matches(ks, list(keys), n=1)
                self.err(kp + (ks,), "unknown key" + (f" (did you mean {close[0]}?)" if close else "")
                         + f"; allowed here: {', '.join(keys)}")
                continue
            out[ks] = self.check(keys[ks], v, kp + (ks,))
        for r in node.get("required", []):
            if r not in value:
                ex = keys[r].get("example")
                self.err(kp + (r,), "required key is missing" + (f"; add `{ex}`" if ex else ""))
        for k, sub in keys.items():
            if k not in out and "default" in sub:
                out[k] = self.check(sub, _copy(sub["default"]), kp + (k,))  # fills nested defaults
        return out

    def _dict(self, node: dict, value: Any, kp: tuple) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.err(kp, f"must be {_KIND_TEXT['dict']}, got {_type_name(value)}")
            return _copy(node.get("default", {}))
        out = {}
        for k, v in value.items():
            kk = self._key(node["key"], k, kp)
            if kk is None:
                continue
            out[kk] = self.check(node["values"], v, kp + (str(k),))
        return out

    def _key(self, kind: str, k: Any, kp: tuple):
        if kind == "grade":
            if isinstance(k, bool) or not (isinstance(k, int) or (isinstance(k, str) and k.strip().isdigit())):
                self.err(kp + (str(k),), f"a grade must be an integer >= 0, got {_type_name(k)}; "
                                         f"write grades as `2: {{label: highly relevant, gain: 3}}`")
                return None
            g = int(k)
            if g < 0:
                self.err(kp + (str(k),), f"a grade must be >= 0, got {g} (negative grades mean "
                                         f"'pooled, not judged' and take no gain)")
                return None
            return g
        if k is None or isinstance(k, (bool, float, list, dict)):
            self.err(kp + (str(k),), f"key must be {'a topic id' if kind == 'topic' else 'a name'}, "
                                     f"got {_type_name(k)}")
            return None
        return str(k)

    def _measures(self, names: list, kp: tuple) -> None:
        try:
            from .measures import load_all, resolve
            load_all()
        except Exception:  # the registry is optional at validation time
            return
        for i, m in enumerate(names):
            if not isinstance(m, str) or not m:
                continue
            try:
                resolve([m])
            except Exception as exc:
                self.err(kp + (str(i),), f"{exc}")

    def _defaults(self, node: dict) -> dict:
        return {k: self.check(s, _copy(s["default"]), ()) for k, s in node["keys"].items() if "default" in s}


def _copy(v: Any) -> Any:
    return copy.deepcopy(v)


def validate_config(data: Any, path: str = CONFIG_NAME, lines: dict | None = None) -> dict:
    """Validate a parsed campaign.yaml against `SCHEMA`; return it with defaults filled.

    Raises FormatError listing every problem as `campaign.yaml:LINE: key.path: what is wrong; what to do`.
    """
    v = _Validator(path, lines or {})
    if data is None:
        raise FormatError(Problem(path, None, "file is empty"), hint="it needs at least `name: My track`")
    if not isinstance(data, dict):
        raise FormatError(Problem(path, 1, f"top level must be a mapping of keys, got {_type_name(data)}"),
                          hint="start with `name: My track` (see docs/campaign-format.md)")
    cfg = v.check(SCHEMA, data, ())
    if not v.problems:
        scale = cfg["relevance"]["scale"]
        thr = cfg["relevance"]["binary_threshold"]
        if scale and thr > max(scale):
            v.err(("relevance", "binary_threshold"),
                  f"{thr} is above the highest grade {max(scale)} of relevance.scale, so no document could "
                  f"count as relevant; use a grade from the scale")
        if scale and 0 not in scale:
            v.err(("relevance", "scale"), "grade 0 (not relevant) is missing; add `0: {label: not relevant, "
                                          "gain: 0}`")
    if v.problems:
        v.problems.sort(key=lambda p: p.line or 0)
        raise FormatError(v.problems, hint="fix the keys named above (the format is in docs/campaign-format.md)")
    return cfg


def read_config(path: PathLike) -> dict:
    """Parse and validate a campaign.yaml file."""
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(Problem(spath, None, "is not valid UTF-8 text"), hint="save it as UTF-8") from None
    Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        node = yaml.compose(text, Loader=Loader)
        loaded = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FormatError(Problem(spath, line, f"YAML syntax error: {what}"),
                          hint="check indentation and quoting on that line (quote values containing ': ' or '#')"
                          ) from None
    dups: list = []
    lines = _node_lines(node, (), {}, dups) if node is not None else {}
    if dups:
        raise FormatError([Problem(spath, l2, f"{'.'.join(kp)}: key appears twice (also at line {l1}); "
                                              f"only one can count — remove one") for kp, l1, l2 in dups])
    return validate_config(loaded, spath, lines)


# ----------------------------------------------------------------------------- judgment log

_KNOWN_OPS = {"judge", "undo"}
_OTHER_OPS = {"topic", "skip", "view", "session", "note", "pause", "resume", "start", "stop"}
LOG_COLUMNS = ["topic", "doc", "grade", "assessor", "ts", "seconds", "strategy", "op", "line"]


def read_judgment_log(path: PathLike, warnings: Warnings | None = None) -> pd.DataFrame:
    """Every entry of an assessor log (JSON lines) in file order, columns LOG_COLUMNS plus any extra
    keys found (stratum, prob, method, ...). `grade` is nullable Int64, `seconds` float (NaN unknown).

    A last line that is cut off (no newline, not valid JSON: a crash mid-write) is ignored with a
    warning; any other malformed line is an error naming the line.
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    raw = data.split(b"\n")
    problems: list[Problem] = []
    recs: list[dict] = []
    for ln, b in enumerate(raw, start=1):
        if not b.strip():
            continue
        torn = ln == len(raw) and not data.endswith(b"\n")
        try:
            obj = json.loads(b.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if torn:
                w.add(spath, ln, "last line is cut off (a crash while writing?) and is ignored; every complete "
                                 "line before it is kept")
                continue
            what = "is not valid UTF-8" if isinstance(exc, UnicodeDecodeError) else f"is not valid JSON ({exc.msg})"
            problems.append(Problem(spath, ln, what))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(spath, ln, f"expected a JSON object, found {type(obj).__name__}"))
            continue
        msg = _check_log_entry(obj)
        if msg:
            problems.append(Problem(spath, ln, msg))
            continue
        obj["line"] = ln
        recs.append(obj)
    if problems:
        raise FormatError(problems, hint='each line is one JSON object, e.g. {"topic": "801", "doc": "D1", '
                                         '"grade": 1, "assessor": "ann", "op": "judge"}')
    unknown: dict[str, int] = {}
    for r in recs:
        op = r.get("op") or "judge"
        if op not in _KNOWN_OPS and op not in _OTHER_OPS and op not in unknown:
            unknown[op] = r["line"]
    for op, ln in unknown.items():
        w.add(spath, ln, f"op {op!r} is not a judgment operation (judge, undo); such lines are kept in the log "
                         f"but change no judgment")
    return _log_frame(recs)


def _check_log_entry(obj: dict) -> str | None:
    op = obj.get("op", "judge")
    if op is None:
        op = "judge"
    if not isinstance(op, str):
        return f'"op" must be a string, found {_type_name(op)}'
    if op in _KNOWN_OPS:
        for k in ("topic", "doc"):
            if k not in obj or obj[k] is None or isinstance(obj[k], (bool, list, dict)) or str(obj[k]) == "":
                return f'missing or invalid "{k}" (a {k} id) in a {op} entry'
    if op == "judge":
        g = obj.get("grade")
        if isinstance(g, bool) or not isinstance(g, int):
            return f'"grade" must be an integer, found {_type_name(g)}'
    s = obj.get("seconds")
    if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float)) or s < 0):
        return f'"seconds" must be a number >= 0, found {_type_name(s)}'
    if "prob" in obj and obj["prob"] is not None:
        p = obj["prob"]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0 < p <= 1):
            return f'"prob" must be a probability in (0, 1], found {_type_name(p)}'
    if "stratum" in obj and obj["stratum"] is not None:
        if isinstance(obj["stratum"], bool) or not isinstance(obj["stratum"], int):
            return f'"stratum" must be an integer, found {_type_name(obj["stratum"])}'
    return None


def _log_frame(recs: list[dict]) -> pd.DataFrame:
    extra = []
    for r in recs:
        for k in r:
            if k not in LOG_COLUMNS and k not in extra:
                extra.append(k)
    get = (lambda k, d=None: [r.get(k, d) for r in recs])
    df = pd.DataFrame({
        "topic": _str_series([None if v is None else str(v) for v in get("topic")]),
        "doc": _str_series([None if v is None else str(v) for v in get("doc")]),
        "grade": pd.array(get("grade"), dtype="Int64"),
        "assessor": _str_series(["" if v is None else str(v) for v in get("assessor")]),
        "ts": _str_series(["" if v is None else str(v) for v in get("ts")]),
        "seconds": pd.to_numeric(pd.Series(get("seconds"), dtype=object), errors="coerce").astype("float64"),
        "strategy": _str_series(["" if v is None else str(v) for v in get("strategy")]),
        "op": _str_series([v or "judge" for v in get("op")]),
        "line": np.asarray(get("line"), dtype=np.int64),
    })
    for k in extra:
        df[k] = _str_series(get(k))
    return df


def log_judgments(log: pd.DataFrame, path: str = LOG_NAME, warnings: Warnings | None = None) -> pd.DataFrame:
    """The judge entries of a log that stand after applying undos, in log order: topic, doc, grade,
    assessor, line (+ stratum, prob, method when the log carries them).

    An undo retracts the same assessor's latest standing judgment of that (topic, doc).
    """
    w = warnings if warnings is not None else Warnings()
    ops = log["op"].to_numpy(object)
    is_judge = ops == "judge"
    is_undo = ops == "undo"
    keep = is_judge.copy()
    if is_undo.any():
        key = (log["topic"].astype(str) + "\x00" + log["doc"].astype(str) + "\x00"
               + log["assessor"].astype(str)).to_numpy(object)
        undo_keys = set(key[is_undo])
        stacks: dict[str, list[int]] = {}
        for i in np.flatnonzero((is_judge | is_undo) & np.isin(key, list(undo_keys))):
            k = key[i]
            if is_judge[i]:
                stacks.setdefault(k, []).append(i)
            elif stacks.get(k):
                keep[stacks[k].pop()] = False
            else:
                r = log.iloc[i]
                w.add(path, int(r["line"]), f"undo of document {r['doc']} for topic {r['topic']} by "
                                            f"{r['assessor'] or 'an unnamed assessor'} has no earlier judgment "
                                            f"to retract; ignored")
    j = log[keep]
    out = pd.DataFrame({"topic": _str_series(j["topic"].to_numpy(object)),
                        "doc": _str_series(j["doc"].to_numpy(object)),
                        "grade": j["grade"].to_numpy(np.int64),
                        "assessor": _str_series(j["assessor"].to_numpy(object)),
                        "line": j["line"].to_numpy(np.int64)})
    if "stratum" in j:
        out["stratum"] = pd.to_numeric(j["stratum"], errors="coerce").to_numpy(np.float64)
    if "prob" in j:
        out["prob"] = pd.to_numeric(j["prob"], errors="coerce").to_numpy(np.float64)
    if "method" in j:
        out["method"] = _str_series([None if v is None else str(v) for v in j["method"]])
    return out


def merge_judgments(frames: list[pd.DataFrame], rule: str, warnings: Warnings, source: str) -> pd.DataFrame:
    """Merge judgment tables given oldest first; repeated (topic, doc) resolve by `rule`.

    Differences between sources are summarized in one warning stating the rule. Extra columns
    present in some source only are filled: stratum -1 (none), prob 1.0 (judged with certainty, as
    MQ prels mark documents not sampled), method ''.
    """
    frames = [f for f in frames if len(f)]
    extras = [c for c in ("stratum", "prob", "method") if any(c in f for f in frames)]
    if not frames:
        out = pd.DataFrame({"topic": pd.Series([], dtype=object), "doc": pd.Series([], dtype=object),
                            "grade": pd.Series([], dtype="int64")})
        for c in extras:
            out[c] = pd.Series([], dtype={"stratum": "int64", "prob": "float64", "method": object}[c])
        return out
    cols = ["topic", "doc", "grade"] + extras
    parts = []
    for f in frames:
        g = pd.DataFrame({"topic": _str_series(f["topic"].to_numpy(object)),
                          "doc": _str_series(f["doc"].to_numpy(object)), "grade": f["grade"].to_numpy(np.int64)})
        for c in extras:
            if c in f:
                g[c] = f[c].to_numpy(object if c == "method" else np.float64)
            else:
                g[c] = pd.Series(np.full(len(f), np.nan if c != "method" else None, dtype=object if c == "method"
                                         else np.float64))
        parts.append(g[cols])
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    n_before = len(df)
    merged = resolve_duplicate_judgments(df, source, Warnings(), rule)  # reported below, in one line
    if len(merged) < n_before:
        conf = _count_conflicts(df)
        if conf:
            warnings.add(source, None, f"{conf} document(s) judged with different grades across the judgment "
                                       f"files and the log; rule '{rule}': {_rule_text(rule)} "
                                       f"(judgments.conflict_rule)")
    merged = merged.reset_index(drop=True)
    filled = {}
    for c in extras:
        s = merged[c]
        miss = s.isna() | ((s.astype(str) == "") if c == "method" else False)
        if c == "stratum":
            merged[c] = s.fillna(-1).astype(np.int64)
        elif c == "prob":
            merged[c] = s.fillna(1.0).astype(np.float64)
        else:
            merged[c] = _str_series(s.fillna("").astype(str).to_numpy(object))
        if miss.any():
            filled[c] = int(miss.sum())
    if filled:
        warnings.add(source, None, "judgments without " + ", ".join(f"{c} ({n})" for c, n in filled.items())
                     + ": filled with stratum -1, prob 1.0 (judged with certainty), method ''")
    return merged[cols]


def _count_conflicts(df: pd.DataFrame) -> int:
    real = df[df["grade"] >= 0]
    n = real.groupby(["topic", "doc"], sort=False)["grade"].nunique()
    return int((n > 1).sum())


# ----------------------------------------------------------------------------- the campaign

def _fingerprint(paths: list[Path]) -> tuple:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(p), -1, -1))
    return tuple(out)


def _visible_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def _base_suffix(p: Path) -> str:
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


class Campaign:
    """A campaign directory. Inputs are read on demand and re-read when their files change."""

    def __init__(self, root: Path, config: dict, warnings: Warnings):
        self.root = root
        self.config = config
        self.warnings = warnings
        self._memo: dict[str, tuple[tuple, Any]] = {}

    # ------------------------------------------------------------------ configuration views
    @property
    def name(self) -> str:
        return self.config["name"]

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    def scale(self) -> dict[int, dict]:
        """Grade -> {label, gain}."""
        return self.config["relevance"]["scale"]

    def gains(self) -> dict[int, float]:
        return {g: v["gain"] for g, v in self.scale().items()}

    def binary_threshold(self) -> int:
        return int(self.config["relevance"]["binary_threshold"])

    def measures(self) -> list[str]:
        """The measures shown by default (evaluation.measures)."""
        return list(self.config["evaluation"]["measures"])

    def depth(self) -> int:
        return int(self.config["evaluation"]["depth"])

    def conflict_rule(self) -> str:
        return self.config["judgments"]["conflict_rule"]

    def categories(self) -> dict[str, str]:
        """Topic id -> query category (topics.categories)."""
        return dict(self.config["topics"]["categories"])

    def targets(self) -> dict[str, int]:
        """Topic id -> judgment target (topics.targets)."""
        return dict(self.config["topics"]["targets"])

    # ------------------------------------------------------------------ files
    def _scan(self, folder: str, suffixes: set[str], what: str, skip: set[str] = frozenset()) -> list[Path]:
        out = []
        for p in _visible_files(self.root / folder):
            if p.name in skip:
                continue
            if _base_suffix(p) in suffixes:
                out.append(p)
            elif p.name.lower() not in IGNORED_NAMES and not p.name.lower().endswith(".md"):
                self._warn_once(str(p), None,
                                f"not read as {what} (expected a name ending in "
                                f"{', '.join(sorted(s for s in suffixes if s))}, optionally .gz); ignored")
        return out

    def _warn_once(self, path: str, line: int | None, msg: str) -> None:
        if not any(p.path == path and p.message == msg for p in self.warnings):
            self.warnings.add(path, line, msg)

    def run_files(self) -> list[Path]:
        """Run files: everything in runs/ plus files named by runs.<tag>.file."""
        files = self._scan("runs", RUN_SUFFIXES, "a run")
        for tag, meta in self.config["runs"].items():
            f = meta.get("file")
            if f:
                p = (self.root / f)
                if not p.is_file():
                    raise FormatError(Problem(str(self.config_path), None,
                                              f"runs.{tag}.file: {f} does not exist"),
                                      hint="fix the path (relative to the campaign directory) or remove the key")
                if p.resolve() not in {q.resolve() for q in files}:
                    files.append(p)
        return files

    def judgment_files(self) -> list[Path]:
        """Imported judgment files in judgments/ (not the log)."""
        return self._scan("judgments", JUDGMENT_SUFFIXES, "judgments", skip={LOG_NAME})

    def log_path(self) -> Path:
        return self.root / "judgments" / LOG_NAME

    def topic_files(self) -> list[Path]:
        return self._scan("topics", TOPIC_SUFFIXES, "topics")

    def input_files(self) -> list[Path]:
        """Every file evaluation results depend on (for cache keys)."""
        files = [self.config_path, *self.run_files(), *self.judgment_files()]
        if self.log_path().is_file():
            files.append(self.log_path())
        return files

    def _cached(self, name: str, files: list[Path], make: Callable[[], Any]) -> Any:
        fp = _fingerprint(files)
        hit = self._memo.get(name)
        if hit is not None and hit[0] == fp:
            return hit[1]
        val = make()
        self._memo[name] = (fp, val)
        return val

    # ------------------------------------------------------------------ inputs
    def runs(self) -> pd.DataFrame:
        """All runs: run, topic, doc, rank, score (categorical run/topic/doc; each run in trec_eval
        order), read from the run store (the text files only when they changed, or when the store
        cannot be written)."""
        files = self.run_files()
        return self._cached("runs", files + self.topic_files(), lambda: self._read_runs(files))

    def store(self):
        """The campaign's run store (`engine.store.RunStore`) brought up to date with the run files,
        or None when the campaign directory cannot be written (read-only)."""
        files = self.run_files()
        return self._cached("store", files, lambda: self._sync_store(files))

    def _sync_store(self, files: list[Path]):
        from .store import RunStore
        st = RunStore(self.root)
        w = Warnings()
        try:
            st.sync(files, w)
        except OSError as exc:
            self._warn_once(str(self.root), None, f"the run store cannot be written ({exc.strerror or exc}); "
                                                  f"run files are read as text every time")
            return None
        finally:
            for p in w:
                self._warn_once(p.path, p.line, p.message)
        return st

    def run_renames(self) -> dict[str, str]:
        """File tag -> campaign.yaml key, for run files named by runs.<key>.file whose tag differs."""
        files = self.run_files()
        return self._cached("renames", files, lambda: self._run_renames(files))

    def _run_renames(self, files: list[Path]) -> dict[str, str]:
        by_file = {(self.root / m["file"]).resolve(): tag for tag, m in self.config["runs"].items() if m.get("file")}
        rename = {}
        for p in files:
            want = by_file.get(p.resolve())
            if want is None:
                continue
            got = self._tag_of(p)
            if got is not None and got != want:
                rename[got] = want
                self._warn_once(str(p), None, f"run tag {got!r} differs from its campaign.yaml entry "
                                              f"runs.{want}; evaluated as run {want!r}")
        return rename

    def _tag_of(self, path: Path) -> str | None:
        """A run file's tag: from the run store's manifest when it holds the file, else its first line."""
        st = self.store()
        if st is not None:
            e = st.manifest["files"].get(str(Path(path).resolve()))
            if e is not None:
                return e.get("tag")
        return _first_tag(path)

    def _read_runs(self, files: list[Path]) -> pd.DataFrame:
        st = self.store()
        runs = st.frame() if st is not None else read_runs(files, self.warnings)
        rename = self.run_renames()
        if rename and len(runs):
            runs = runs.copy()
            runs["run"] = _str_series(runs["run"].astype(object).map(lambda r: rename.get(r, r)).to_numpy(object))
        listed = set(self.config["runs"])
        present = set(runs["run"].unique()) if len(runs) else set()
        for tag in sorted(listed - present):
            self._warn_once(str(self.config_path), None, f"runs.{tag}: no run file with this tag in runs/")
        topics = self.topics()
        if len(topics) and len(runs):
            w = Warnings()
            warn_unknown_topics(runs, topics["topic"], w, source=str(self.root / "runs"))
            for p in w:
                self._warn_once(p.path, p.line, p.message)
        return runs

    def topics(self) -> pd.DataFrame:
        """Topics from topics/: topic, title, description, narrative (+ file, line)."""
        files = self.topic_files()
        return self._cached("topics", files, lambda: _read_topic_files(files))

    def log(self) -> pd.DataFrame | None:
        """The raw assessor log (every entry), or None when there is none."""
        p = self.log_path()
        if not p.is_file():
            return None
        return self._cached("log", [p], lambda: read_judgment_log(p, self.warnings))

    def qrels(self) -> pd.DataFrame:
        """Merged judgments: imported files (by name) then the log, resolved by judgments.conflict_rule."""
        files = self.judgment_files()
        p = self.log_path()
        return self._cached("qrels", files + [p, self.config_path], lambda: self._read_qrels(files))

    def _read_qrels(self, files: list[Path]) -> pd.DataFrame:
        rule = self.conflict_rule()
        frames = []
        problems: list[Problem] = []
        for f in files:
            try:
                frames.append(read_judgments(f, self.warnings, rule=rule))
            except FormatError as exc:
                problems.extend(exc.problems)
        if problems:
            raise FormatError(problems, hint="fix the judgment files named above")
        log = self.log()
        if log is not None and len(log):
            frames.append(log_judgments(log, str(self.log_path()), self.warnings))
        q = merge_judgments(frames, rule, self.warnings, str(self.root / "judgments"))
        self._check_grades(q)
        return q

    def _check_grades(self, q: pd.DataFrame) -> None:
        if not len(q):
            return
        grades = set(np.unique(q["grade"].to_numpy()).tolist())
        unknown = sorted(g for g in grades if g >= 0 and g not in self.scale())
        if unknown:
            self._warn_once(str(self.config_path), None,
                            f"relevance.scale: judgments use grade(s) {unknown} that the scale does not list; "
                            f"add them with a label and gain")

    def truth_qrels(self) -> pd.DataFrame | None:
        """Complete ground-truth judgments of a simulated campaign (truth/qrels.txt), else None."""
        p = self.root / "truth" / "qrels.txt"
        if not p.is_file():
            return None
        return self._cached("truth", [p], lambda: read_qrels(p, self.warnings)[["topic", "doc", "grade"]])

    def run_meta(self) -> pd.DataFrame:
        """Per run: run, group, type, pooled, file. Runs not listed in campaign.yaml get group = their tag,
        type automatic, pooled true."""
        st = self.store()
        if st is not None:                       # the store knows the tags: no run table needed
            rename = self.run_renames()
            tags = list(dict.fromkeys(rename.get(t, t) for t in st.runs))
        else:
            runs = self.runs()
            tags = list(dict.fromkeys(runs["run"].tolist())) if len(runs) else []
        files = self.run_files()
        file_of = {}
        for p in files:
            t = self._tag_of(p)
            if t is not None:
                file_of.setdefault(t, p)
        rows = []
        for tag in tags:
            m = self.config["runs"].get(tag, {})
            f = m.get("file") or (os.path.relpath(file_of[tag], self.root) if tag in file_of else "")
            rows.append((tag, str(m.get("group", tag)), str(m.get("type", "automatic")),
                         bool(m.get("pooled", True)), str(f)))
        return pd.DataFrame(rows, columns=["run", "group", "type", "pooled", "file"]).astype(
            {"run": object, "group": object, "type": object, "pooled": bool, "file": object})

    # ------------------------------------------------------------------ evaluation
    def eval_options(self, **options):
        """EvalOptions from the campaign (binary_threshold -> rel_level, depth -> max_depth) and overrides."""
        from .ranking import EvalOptions
        kw = {"rel_level": self.binary_threshold(), "max_depth": self.depth()}
        kw.update({k: v for k, v in options.items() if v is not None})
        return EvalOptions(**kw)

    def evaluate(self, measures=None, **options) -> pd.DataFrame:
        """Long table run, topic, measure, value for `measures` (default: evaluation.measures), cached
        under .cranfield-cache/ and recomputed when an input file changes."""
        from .cache import cached_evaluate
        return cached_evaluate(self, measures if measures is not None else self.measures(),
                               self.eval_options(**options))

    def reload(self) -> None:
        """Forget what was read (files are re-read on the next call)."""
        self._memo.clear()


def _first_tag(path: Path) -> str | None:
    """The tag (6th field) of a run file's first data line, or None."""
    import gzip
    try:
        with open(path, "rb") as fh:
            data = fh.read(4096)
        if data[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as fh:
                data = fh.read(4096)
    except (OSError, EOFError):
        return None
    for ln in data.split(b"\n"):
        t = ln.split()
        if t and not t[0].startswith(b"#"):
            return t[5].decode("utf-8", "replace") if len(t) >= 6 else None
    return None


def _read_topic_files(files: list[Path]) -> pd.DataFrame:
    from .topics import empty_topics, read_topics
    frames, problems = [], []
    seen: dict[str, str] = {}
    for f in files:
        try:
            t = read_topics(f)
        except FormatError as exc:
            problems.extend(exc.problems)
            continue
        for tid, ln in zip(t["topic"], t["line"]):
            if tid in seen:
                problems.append(Problem(str(f), int(ln), f"topic {tid} is also defined in {seen[tid]}"))
            else:
                seen[tid] = f"{f}:{ln}"
        t["file"] = str(f)
        frames.append(t)
    if problems:
        raise FormatError(problems, hint="every topic id must be defined once across topics/")
    if not frames:
        e = empty_topics()
        e["file"] = pd.Series([], dtype=object)
        return e
    return pd.concat(frames, ignore_index=True)


def load_campaign(path: PathLike, warnings: Warnings | None = None) -> Campaign:
    """Open a campaign directory (or its campaign.yaml), validating the configuration."""
    p = Path(path)
    if p.is_file() and p.name == CONFIG_NAME:
        p = p.parent
    if not p.exists():
        raise CranfieldError(f"{p}: no such directory; create a campaign with `cranfield init {p}`")
    if not p.is_dir():
        raise CranfieldError(f"{p}: not a directory (a campaign is a directory holding {CONFIG_NAME})")
    cfg_path = p / CONFIG_NAME
    if not cfg_path.is_file():
        raise CranfieldError(f"{p}: not a campaign directory (no {CONFIG_NAME}); "
                             f"create one with `cranfield init {p}`")
    w = warnings if warnings is not None else Warnings()
    cfg = read_config(cfg_path)
    return Campaign(p, cfg, w)
