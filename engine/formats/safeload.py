"""YAML and JSON parsing with limits, so a hostile file is refused fast instead of hanging or crashing.

YAML (campaign.yaml): at most `YAML_MAX_BYTES`, nesting at most `MAX_DEPTH`, at most
`YAML_MAX_ALIASES` aliases, and at most `YAML_MAX_NODES` nodes once every alias is expanded (an
"alias bomb" of nine nested aliases is 10^9 nodes). The limits are checked on the parser's event
stream, before anything is built. JSON (log lines, topics, manifests): nesting at most `MAX_DEPTH`.
Every refusal is a FormatError naming the file and line.
"""
from __future__ import annotations

import json
import re
from typing import Any

import yaml

from ..errors import FormatError, Problem

YAML_MAX_BYTES = 4 * 2**20
YAML_MAX_ALIASES = 100
YAML_MAX_NODES = 200_000
MAX_DEPTH = 64

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _line(ev) -> int | None:
    m = getattr(ev, "start_mark", None)
    return m.line + 1 if m is not None else None


def check_yaml_limits(text: str, path: str) -> None:
    """Raise FormatError when `text` exceeds a size, depth, alias or expanded-size limit."""
    if len(text.encode("utf-8", "surrogatepass")) > YAML_MAX_BYTES:
        raise FormatError(Problem(path, None, f"is larger than {YAML_MAX_BYTES // 2**20} MB; a campaign.yaml "
                                              f"holds settings, not data"),
                          hint="move data (runs, judgments, topics) into the campaign's folders")
    # Cranfield's own depth limit, checked on the text before any parser runs (a parser may have a limit
    # of its own, with its own wording, that a deep flow collection reaches first)
    deep = _too_deep(text, True)
    if deep is not None:
        raise FormatError(Problem(path, deep, f"nesting deeper than {MAX_DEPTH} levels"),
                          hint="a campaign.yaml is a few levels deep; remove the nesting")
    sizes: dict[str, int] = {}          # anchor -> expanded node count
    stack: list[list] = []              # per open collection: [anchor, node count]
    aliases = 0
    total = 0
    try:
        for ev in yaml.parse(text, Loader=_Loader):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([ev.anchor, 1])
                if len(stack) > MAX_DEPTH:
                    raise FormatError(Problem(path, _line(ev), f"nesting deeper than {MAX_DEPTH} levels"),
                                      hint="a campaign.yaml is a few levels deep; remove the nesting")
                continue
            if isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                anchor, n = stack.pop()
                if anchor is not None:
                    sizes[anchor] = n
                size = n
            elif isinstance(ev, yaml.AliasEvent):
                aliases += 1
                if aliases > YAML_MAX_ALIASES:
                    raise FormatError(Problem(path, _line(ev), f"more than {YAML_MAX_ALIASES} aliases (*name)"),
                                      hint="write the values out instead of repeating anchors")
                size = sizes.get(ev.anchor, 1)
            elif isinstance(ev, yaml.ScalarEvent):
                size = 1
                if ev.anchor is not None:
                    sizes[ev.anchor] = 1
            else:
                continue
            if stack:
                stack[-1][1] += size
            else:
                total += size
            if total > YAML_MAX_NODES or (stack and stack[-1][1] > YAML_MAX_NODES):
                raise FormatError(Problem(path, _line(ev), f"expands to more than {YAML_MAX_NODES:,} values "
                                                           f"(aliases repeating aliases)"),
                                  hint="remove the anchors (&name) and aliases (*name) that repeat each other")
    except RecursionError:
        raise FormatError(Problem(path, None, f"nesting deeper than {MAX_DEPTH} levels"),
                          hint="a campaign.yaml is a few levels deep; remove the nesting") from None


def type_name(v: Any) -> str:
    """How a loaded YAML/JSON value is shown in a message: scalars as written, others by type."""
    return repr(v) if isinstance(v, (str, int, float, bool)) or v is None else type(v).__name__


def load_yaml(text: str, path: str) -> tuple[Any, Any]:
    """(node tree, loaded data) of a YAML document after `check_yaml_limits`; yaml.YAMLError passes
    through for the caller to word (it carries the line)."""
    check_yaml_limits(text, path)
    node = yaml.compose(text, Loader=_Loader)
    data = yaml.load(text, Loader=_Loader)
    return node, data


def safe_yaml(text: str, path: str) -> Any:
    """The loaded data of a YAML document under the limits (FormatError on syntax errors too)."""
    try:
        return load_yaml(text, path)[1]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FormatError(Problem(path, mark.line + 1 if mark is not None else None,
                                  f"YAML syntax error: {getattr(exc, 'problem', None) or exc}")) from None


def _too_deep(s: str, yaml_text: bool) -> int | None:
    """The 1-based line where bracket nesting ([ and {) first exceeds MAX_DEPTH, or None; quoted strings
    (and, in YAML, single quotes and # comments) are skipped."""
    if s.count("[") + s.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    line = 1
    quote = ""
    esc = comment = False
    prev = "\n"
    for ch in s:
        if ch == "\n":
            line += 1
            comment = False
        if comment:
            prev = ch
            continue
        if quote:
            if esc:
                esc = False
            elif ch == "\\" and quote == '"':
                esc = True
            elif ch == quote:
                quote = ""
        elif ch == '"' or (yaml_text and ch == "'"):
            quote = ch
        elif yaml_text and ch == "#" and prev in " \t\n":
            comment = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif ch in "]}":
            depth -= 1
        prev = ch
    return None


def json_too_deep(text: str | bytes) -> bool:
    """True when a JSON text nests deeper than MAX_DEPTH (strings skipped; cheap when few brackets).
    Vectorized over the bytes (the run store's manifest, megabytes, is checked in milliseconds); a text
    with an escaped quote inside a string takes `_too_deep`'s character scan."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return False
    import numpy as np
    b = np.frombuffer(data, np.uint8)
    quotes = np.flatnonzero(b == 34)
    if len(quotes) and (b == 92).any():
        back = b == 92
        last_other = np.maximum.accumulate(np.where(back, -1, np.arange(len(b))))
        run = np.where(quotes > 0, quotes - 1 - last_other[np.maximum(quotes - 1, 0)], 0)
        if (run % 2 == 1).any():           # an escaped quote: its meaning depends on the state before it
            s = data.decode("utf-8", "replace")
            return _too_deep(s, False) is not None
    # every quote opens or closes a string: a bracket is outside strings when an even number of quotes
    # precede it
    opens = np.flatnonzero((b == 91) | (b == 123))
    closes = np.flatnonzero((b == 93) | (b == 125))
    pos = np.concatenate((opens, closes))
    step = np.concatenate((np.ones(len(opens), np.int64), np.full(len(closes), -1, np.int64)))
    keep = np.searchsorted(quotes, pos) % 2 == 0
    pos, step = pos[keep], step[keep]
    return bool(len(pos)) and int(np.cumsum(step[np.argsort(pos, kind="stable")]).max()) > MAX_DEPTH


def jsonl_objects(spath: str, data: bytes, warnings, check) -> tuple[list[dict], list]:
    """The JSON objects of an append-only JSON-lines file, each with its 1-based `line`, and the Problems
    of the malformed lines. Blank lines are skipped; a last line cut off (no newline, not valid: a crash
    mid-write) is a warning on `warnings`, not a problem; `check(obj)` returns a message for a bad object."""
    from ..errors import Problem
    raw = data.split(b"\n")
    problems: list = []
    out: list[dict] = []
    for ln, b in enumerate(raw, start=1):
        if not b.strip():
            continue
        try:
            obj = loads_json(b.decode("utf-8"), spath, ln)
        except (UnicodeDecodeError, ValueError) as exc:
            if ln == len(raw) and not data.endswith(b"\n"):
                warnings.add(spath, ln, "last line is cut off (a crash while writing?) and is ignored; every "
                                        "complete line before it is kept")
                continue
            what = ("is not valid UTF-8" if isinstance(exc, UnicodeDecodeError)
                    else f"is not valid JSON ({getattr(exc, 'msg', exc)})")
            problems.append(Problem(spath, ln, what))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(spath, ln, f"expected a JSON object, found {type(obj).__name__}"))
            continue
        msg = check(obj)
        if msg:
            problems.append(Problem(spath, ln, msg))
            continue
        obj["line"] = ln
        out.append(obj)
    return out, problems


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def every_line(raw: bytes, pattern: "re.Pattern[str]", encoding: str = "utf-8") -> list | None:
    """`pattern.findall` over `raw` decoded when each of its lines (all ending in a newline) is one match
    of `pattern`; None for any other text (for the caller's line-by-line reader)."""
    if raw and not raw.endswith(b"\n"):
        return None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        return None
    found = pattern.findall(text)
    return found if len(found) == text.count("\n") else None


def lone_surrogate(text: str | bytes, obj: Any) -> str | None:
    """The first lone surrogate (a JSON escape such as \\ud800 with no partner: no text in UTF-8) in the
    decoded `obj` of JSON `text`, written as an escape, or None. Every JSON reader refuses one."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if not _SURROGATE_ESCAPE.search(raw):
        return None
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            for c in v:
                if 0xD800 <= ord(c) <= 0xDFFF:
                    return f"\\u{ord(c):04x}"
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return None


def loads_json(text: str | bytes, path: str, line: int | None = None) -> Any:
    """json.loads with a nesting limit and lone surrogates refused; ValueError (json.JSONDecodeError,
    depth, surrogate) for the caller to word, never RecursionError."""
    if json_too_deep(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        obj = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    bad = lone_surrogate(text, obj)
    if bad:
        raise ValueError(f"a lone surrogate {bad} (a JSON escape that is no character) is not valid text")
    return obj


def json_line(text: str | bytes, path, line: int | None = None) -> Any:
    """One JSON value of a campaign file (a line of a log, cache or lease file, or a small JSON file):
    ValueError when it does not parse (the caller skips a torn line or words it), a FormatError naming
    `path`:`line` for a lone surrogate, which no reader passes on."""
    obj = json.loads(text)
    bad = lone_surrogate(text, obj)
    if bad:
        raise FormatError(Problem(str(path), line, f"a lone surrogate {bad} (a JSON escape that is no character) "
                                                   f"is not valid text"),
                          hint="write the text as UTF-8 (or escape a real character), then run the command again")
    return obj
