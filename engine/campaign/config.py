"""campaign.yaml: the schema (as data), its validator and the reader that names file:line for every problem."""
from __future__ import annotations

import copy
import difflib
import math
from typing import Any

import yaml

from ..errors import FormatError, Problem
from ..formats.qrels import CONFLICT_RULES
from ..formats.files import PathLike, check_text, read_bytes
from ..formats.safeload import type_name

CONFIG_NAME = "campaign.yaml"


# ----------------------------------------------------------------------------- schema (as data)
# Node kinds: map (fixed keys), dict (free keys: `key` kind, `values` node), list, str, int, number,
# bool, enum, any. `default` fills a missing key; `min` bounds numbers; `required` lists map keys.

_RUN_ENTRY = {"kind": "map", "keys": {
    "group": {"kind": "str", "doc": "the participating group that submitted the run"},
    "type": {"kind": "enum", "values": ["automatic", "manual"], "doc": "how the run was made (M on the leaderboard)"},
    "pooled": {"kind": "bool", "doc": "whether the run contributed to the pool"},
    "file": {"kind": "str", "doc": "path of the run file, relative to the campaign directory"},
    "description": {"kind": "str", "doc": "free text about the run"},
    "priority": {"kind": "int", "doc": "pooling priority given at submission (cranfield submit)"},
    "submitted": {"kind": "str", "doc": "submission time (ISO 8601), written by cranfield submit"},
    "checksum": {"kind": "str", "doc": "sha256 of the submitted file, written by cranfield submit"},
    "params": {"kind": "dict", "key": "str", "values": {"kind": "any"},
               "doc": "the run's parameter values (a run family for `cranfield training sensitivity`)"},
}}

SCHEMA: dict = {"kind": "map", "required": ["name"], "keys": {
    "name": {"kind": "str", "nonempty": True, "example": "name: My track 2026",
             "doc": "the campaign's name, shown in every title"},
    "description": {"kind": "str", "default": "", "doc": "free text about the campaign"},
    "relevance": {"kind": "map", "default": {}, "doc": "the grades assessors give and what they are worth", "keys": {
        "scale": {"kind": "dict", "key": "grade", "values": {"kind": "map", "required": ["gain"], "keys": {
            "label": {"kind": "str", "doc": "the grade's name on the judging screen"},
            "gain": {"kind": "number", "example": "gain: 3", "doc": "the gain nDCG-style measures give the grade"},
        }}, "default": {0: {"label": "not relevant", "gain": 0}, 1: {"label": "relevant", "gain": 1},
                        2: {"label": "highly relevant", "gain": 2}},
                  "doc": "grade (an integer >= 0; grade 0 required) -> label and gain"},
        "binary_threshold": {"kind": "int", "min": 0, "default": 1,
                             "doc": "grades from this one up count as relevant (trec_eval -l); at most the top grade"},
    }},
    "evaluation": {"kind": "map", "default": {}, "doc": "how runs are scored", "keys": {
        "depth": {"kind": "int", "min": 1, "default": 1000, "doc": "documents per topic evaluated (trec_eval -M)"},
        "measures": {"kind": "list", "items": {"kind": "str"}, "measures": True,
                     "default": ["map", "P.10", "ndcg_cut.10", "bpref"],
                     "doc": "measures shown by default (leaderboard columns, eval --campaign); names are checked"},
    }},
    "judgments": {"kind": "map", "default": {}, "doc": "how judgments/ is read and merged", "keys": {
        "conflict_rule": {"kind": "enum", "values": list(CONFLICT_RULES), "default": "last",
                          "doc": "how repeated judgments of a document resolve (latest, highest, most frequent)"},
        "format": {"kind": "enum", "values": ["auto", "qrels", "prels", "sample"], "default": "auto",
                   "doc": "how to read judgments/ files whose name does not say (.qrels/.prels/.sample)"},
    }},
    "runs": {"kind": "dict", "key": "str", "values": _RUN_ENTRY, "default": {},
             "doc": "run tag -> metadata (a run in runs/ without an entry: group = its tag, automatic, pooled)"},
    "topics": {"kind": "map", "default": {}, "doc": "per-topic settings (topic ids: 801 = '801')", "keys": {
        "categories": {"kind": "dict", "key": "topic", "values": {"kind": "str"}, "default": {},
                       "doc": "topic id -> query category (stratified designs, cost by category)"},
        "targets": {"kind": "dict", "key": "topic", "values": {"kind": "int", "min": 1}, "default": {},
                    "doc": "topic id -> judgments to collect for the topic (Million Query targets)"},
    }},
    "pool": {"kind": "any", "default": {}, "doc": "the last pool strategy used (strategy, depth, ...), written by `cranfield pool`",
             "defaults": {"strategy": "depth", "depth": 100}},     # read by Campaign.pool()
    "cost": {"kind": "any", "default": {}, "doc": "overrides of the assessor-time model (docs/cost.md): default "
             "(a category), by_target, categories: {NAME: {refresh, view, lastview, topic, judgment: {TARGET: "
             "seconds}, judgment_avg}}; checked by engine.planning.cost"},
    "submission": {"kind": "any", "default": {}, "doc": "intake settings for `cranfield submit`: deadline (ISO 8601), "
                   "max_runs_per_group, max_depth (default evaluation.depth), missing_topics: allow, doclist (a "
                   "file of the collection's document ids); checked by engine.campaign.intake"},
    "sources": {"kind": "any", "default": {}, "doc": "judgment sources (docs/judgment-sources.md): official (default "
                "human), combine (official, fill, majority, precedence), fill (a source), precedence (a list "
                "of sources); checked by engine.judgments.sources"},
    "judging": {"kind": "map", "default": {}, "doc": "judging sessions (engine.judging.sessions)", "keys": {
        "guidelines": {"kind": "str", "default": None,
                       "doc": "file shown beside the document, relative to the campaign directory"},
        "random_order": {"kind": "bool", "default": False,
                         "doc": "present each topic's documents in a random order (per assessor)"},
        "double_fraction": {"kind": "number", "min": 0, "max": 1, "default": 0.0,
                            "doc": "share of pooled documents two assessors judge"},
        "lease_seconds": {"kind": "number", "min": 1, "default": 900,
                          "doc": "a document lease not released by then expires"},
        "auto_source": {"kind": "str", "default": None,
                        "doc": "automatic labels to show (default: the first automatic source)"},
    }},
    "answers": {"kind": "map", "default": {}, "doc": "answer-run limits, checked at intake (engine.nuggets)", "keys": {
        "max_words": {"kind": "int", "min": 1, "doc": "most words in one answer"},
        "max_sentences": {"kind": "int", "min": 1, "doc": "most sentences in one answer"},
        "max_references": {"kind": "int", "min": 1, "doc": "most cited passages in one answer"},
    }},
    "allow_outside": {"kind": "list", "items": {"kind": "str"}, "default": [],
                      "doc": "folders outside the campaign directory its files are expected in; only narrows the folders the person running the command grants (--allow-outside DIR or their $XDG_CONFIG_HOME/cranfield/config.yaml), never widens them (engine.util.confine)"},
}}

_KIND_TEXT = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true or false",
              "map": "a mapping (key: value lines)", "dict": "a mapping", "list": "a list ([a, b] or - items)"}


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
                self.err(kp, f"must be {_KIND_TEXT['list']}, got {type_name(value)}")
                return node.get("default", [])
            out = [self.check(node["items"], v, kp + (str(i),)) for i, v in enumerate(value)]
            if node.get("measures"):
                self._measures(out, kp)
            return out
        if kind == "enum":
            if value not in node["values"]:
                close = difflib.get_close_matches(str(value), node["values"], n=1)
                self.err(kp, f"must be one of {', '.join(node['values'])}, got {type_name(value)}"
                             + (f" (did you mean {close[0]}?)" if close else ""))
            return value
        if kind == "str":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                extra = (" (YAML reads unquoted yes/no/on/off/true/false as a boolean: quote the text, "
                         "e.g. 'no')" if isinstance(value, bool) else "")
                self.err(kp, f"must be {_KIND_TEXT['str']}, got {type_name(value)}{extra}")
                return ""
            value = str(value)
            if node.get("nonempty") and not value.strip():
                self.err(kp, "must not be empty" + (f"; write e.g. `{node['example']}`" if "example" in node else ""))
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                self.err(kp, f"must be true or false, got {type_name(value)}")
            return value
        if kind in ("int", "number"):
            ok = isinstance(value, int) and not isinstance(value, bool)
            if kind == "number":
                ok = ok or (isinstance(value, float) and math.isfinite(value))
            if not ok:
                ex = f"; write e.g. `{node['example']}`" if "example" in node else ""
                self.err(kp, f"must be {_KIND_TEXT[kind]}, got {type_name(value)}{ex}")
                return value
            if "min" in node and value < node["min"]:
                self.err(kp, f"must be >= {node['min']}, got {value}")
            if "max" in node and value > node["max"]:
                self.err(kp, f"must be <= {node['max']}, got {value}")
            return value
        raise AssertionError(kind)

    def _map(self, node: dict, value: Any, kp: tuple) -> dict:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.err(kp, f"must be {_KIND_TEXT['map']}, got {type_name(value)}")
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
            unset = v is None and "default" in keys[ks] and keys[ks]["default"] is None   # `key:` left empty
            out[ks] = None if unset else self.check(keys[ks], v, kp + (ks,))
        for r in node.get("required", []):
            if r not in value:
                ex = keys[r].get("example")
                self.err(kp + (r,), "required key is missing" + (f"; add `{ex}`" if ex else ""))
        for k, sub in keys.items():
            if k not in out and "default" in sub:           # fills nested defaults; None: not set
                out[k] = None if sub["default"] is None else self.check(sub, _copy(sub["default"]), kp + (k,))
        return out

    def _dict(self, node: dict, value: Any, kp: tuple) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.err(kp, f"must be {_KIND_TEXT['dict']}, got {type_name(value)}")
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
            if isinstance(k, bool) or not (isinstance(k, int) or (isinstance(k, str) and k.strip().isascii() and k.strip().isdigit())):
                self.err(kp + (str(k),), f"a grade must be an integer >= 0, got {type_name(k)}; "
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
                                     f"got {type_name(k)}")
            return None
        return str(k)

    def _measures(self, names: list, kp: tuple) -> None:
        try:
            from ..measures import load_all, resolve
            load_all()
            from ..measures.names import translate
        except Exception:  # the registry is optional at validation time
            return
        for i, m in enumerate(names):
            if not isinstance(m, str) or not m:
                continue
            try:
                spec, opts = translate(m)       # the one request parser: trec_eval's and ir_measures' names
                if opts:
                    self.err(kp + (str(i),), f"{m!r} implies evaluation options ({', '.join(sorted(opts))}); the "
                                             f"campaign's measures share its options (relevance.binary_threshold, "
                                             f"evaluation.depth): ask for it with `cranfield eval -m` instead")
                    continue
                resolve([spec])
            except Exception as exc:
                self.err(kp + (str(i),), f"{exc}")

    def _defaults(self, node: dict) -> dict:
        return {k: None if s["default"] is None else self.check(s, _copy(s["default"]), ())
                for k, s in node["keys"].items() if "default" in s}


def _copy(v: Any) -> Any:
    return copy.deepcopy(v)


def section_defaults(name: str) -> dict:
    """The schema's defaults of one campaign.yaml section (e.g. "judging"), as a config without that
    section reads."""
    node = SCHEMA["keys"][name]
    if node["kind"] != "map":                       # a free section: the defaults its readers use
        return _copy(node.get("defaults", {}))
    return _Validator(CONFIG_NAME, {})._defaults(node)


def validate_config(data: Any, path: str = CONFIG_NAME, lines: dict | None = None) -> dict:
    """Validate a parsed campaign.yaml against `SCHEMA`; return it with defaults filled.

    Raises FormatError listing every problem as `campaign.yaml:LINE: key.path: what is wrong; what to do`.
    """
    v = _Validator(path, lines or {})
    if data is None:
        raise FormatError(Problem(path, None, "file is empty"), hint="it needs at least `name: My track`")
    if not isinstance(data, dict):
        raise FormatError(Problem(path, 1, f"top level must be a mapping of keys, got {type_name(data)}"),
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
    except UnicodeDecodeError as exc:
        raise FormatError(Problem(spath, data[:exc.start].count(b"\n") + 1, "is not valid UTF-8 text"),
                          hint="save it as UTF-8") from None
    from ..formats.safeload import load_yaml
    try:
        node, loaded = load_yaml(text, spath)    # size, depth and alias limits checked first
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        if line is None and isinstance(getattr(exc, "position", None), int):   # ReaderError: bad character
            line = text[:exc.position].count("\n") + 1
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
