"""Nugget and assignment files of other tools, read and written (docs/rag.md, "Nugget interchange").

- `nuggetizer-nuggets`: nuggetizer's nugget file (JSON lines), one line per topic:
  {"query": "...", "qid": "T", "nuggets": [{"text": "...", "importance": "vital"}, ...]}
- `nuggetizer-assignments`: nuggetizer's assignment file for answers, one line per (run, topic):
  {"query", "qid", "answer_text", "response_length", "run_id",
   "nuggets": [{"text", "importance", "assignment": "support"}, ...]} (nuggets named by their text)
- `trec-nuggets`: tab-separated TOPIC, NUGGET_ID, vital|okay, TEXT (one nugget a line, ids kept)
- `trec-assignments`: tab-separated RUN, TOPIC, NUGGET_ID, LABEL with LABEL support, partial_support,
  not_support or NIST's 0-2 support scale (2 full, 1 partial, 0 no support); the token is kept.
- `nist-rag24`: NIST's TREC 2024 RAG nugget assignment release (trec.nist.gov/data/rag/
  nugget_assignment.20241218.jsonl; earlier nugget_assignment.20241108.jl): nuggetizer's assignment layout, one
  line per assessed (run, topic), every line of a topic listing the topic's whole nugget list in the same
  order (NIST published no separate nugget file); import brings the nuggets and the assignments together.
- `autoargue-nuggets`: TREC AutoJudge's AutoARGUE nugget banks (JSON lines, one bank a topic, or one
  bank as one JSON document): {"query_id": "T", "title_query": "...", "nugget_bank": {QUESTION:
  {"question": ..., "importance": "vital"}}, "claim_bank": {CLAIM: {"claim": ...}}} (either bank a dict
  or a list); a question or a claim is one nugget; importance vital or okay (absent: okay, noted);
  answers, references and sub-nuggets are not kept (noted).
Each item read carries its origin: file, format, line, position in the line's list, original id.
Detection never guesses: a file that reads as two formats, or lines of different formats, is refused
with a request for --format.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import FormatError, Problem
from ..formats.files import check_text, read_bytes
from ..formats.safeload import loads_json, type_name
from ..util.names import name_problem
from .answers import check_ident
from .scores import IMPORTANCE, LABELS

FORMATS = ("nuggetizer-nuggets", "nuggetizer-assignments", "trec-nuggets", "trec-assignments", "autoargue-nuggets",
           "nist-rag24")
ASSIGNING_JSON = ("nuggetizer-assignments", "nist-rag24")
NIST_SCALE = {"2": "support", "1": "partial_support", "0": "not_support"}
_TOKENS = {**{x: x for x in LABELS}, **NIST_SCALE}
_HINT = ("give the file's format with --format (" + ", ".join(FORMATS) + "); docs/rag.md describes each")


@dataclass
class Item:
    """One nugget (run None) or one assignment read from a file, with where it came from."""

    topic: str
    text: str | None            # the nugget's text (nuggetizer formats, trec-nuggets)
    importance: str | None
    nugget_id: str | None = None    # the file's own id (trec formats)
    run: str | None = None
    label: str | None = None
    origin: dict = field(default_factory=dict)


def _json_records(spath: str, text: str) -> tuple[list[tuple[int, dict]], list[Problem]]:
    out, probs = [], []
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = loads_json(line, spath, ln)
        except ValueError as exc:
            probs.append(Problem(spath, ln, f"is not valid JSON ({getattr(exc, 'msg', exc)})"))
            continue
        if not isinstance(obj, dict):
            probs.append(Problem(spath, ln, f"expected a JSON object, found {type_name(obj)}"))
            continue
        out.append((ln, obj))
    return out, probs


def _json_kind(obj: dict) -> str | None:
    """nuggets, assignments, or None when the line alone cannot tell."""
    ns = obj.get("nuggets")
    assigned = isinstance(ns, list) and any(isinstance(n, dict) and "assignment" in n for n in ns)
    if assigned or "run_id" in obj or "answer_text" in obj:
        return "assignments"
    if isinstance(ns, list) and ns and all(isinstance(n, dict) for n in ns):
        return "nuggets"
    return None


def _tsv_kinds(fields: list[str]) -> set[str]:
    out = set()
    if len(fields) == 4 and fields[2] in IMPORTANCE and fields[3].strip():
        out.add("trec-nuggets")
    if len(fields) == 4 and fields[3] in _TOKENS:
        out.add("trec-assignments")
    return out


def detect_format(spath: str, text: str) -> str:
    """The file's format, or FormatError asking for --format (ambiguous, mixed or unknown)."""
    lines = [(ln, x) for ln, x in enumerate(text.split("\n"), start=1) if x.strip()]
    if not lines:
        raise FormatError(Problem(spath, None, "holds no records"), hint=_HINT)
    if lines[0][1].lstrip().startswith("{"):
        if _autoargue_records(spath, text)[0]:
            return "autoargue-nuggets"
        recs, probs = _json_records(spath, text)
        if probs:
            raise FormatError(probs, hint=_HINT)
        kinds = {ln: _json_kind(o) for ln, o in recs}
        seen = {k for k in kinds.values() if k}
        if len(seen) == 1:
            return f"nuggetizer-{seen.pop()}"
        if not seen:
            raise FormatError(Problem(spath, None, "no line shows whether this is a nugget file or an "
                                                   "assignment file (no nuggets listed)"), hint=_HINT)
        a = next(ln for ln, k in kinds.items() if k == "nuggets")
        b = next(ln for ln, k in kinds.items() if k == "assignments")
        raise FormatError(Problem(spath, None, f"line {a} reads as a nugget file, line {b} as an assignment file"),
                          hint=_HINT)
    fits = {ln: _tsv_kinds(x.rstrip("\r").split("\t")) for ln, x in lines}
    bad = [ln for ln, k in fits.items() if not k]
    if bad:
        raise FormatError([Problem(spath, ln, "neither TOPIC<TAB>NUGGET_ID<TAB>vital|okay<TAB>TEXT nor "
                                              "RUN<TAB>TOPIC<TAB>NUGGET_ID<TAB>LABEL") for ln in bad[:20]],
                          hint=_HINT)
    only = {next(iter(k)) for k in fits.values() if len(k) == 1}
    if len(only) == 1:
        return only.pop()
    if not only:
        raise FormatError(Problem(spath, None, "every line reads both as a nugget (TOPIC ID IMPORTANCE TEXT) "
                                               "and as an assignment (RUN TOPIC NUGGET LABEL)"), hint=_HINT)
    a = next(ln for ln, k in fits.items() if k == {"trec-nuggets"})
    b = next(ln for ln, k in fits.items() if k == {"trec-assignments"})
    raise FormatError(Problem(spath, None, f"line {a} reads as a nugget, line {b} as an assignment"), hint=_HINT)


def read_interchange(path, fmt: str | None = None) -> tuple[str, list[Item], bytes, list[str]]:
    """(format, items in file order, the file's bytes, notes on what is not kept); every malformed line a
    Problem naming file:line."""
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(Problem(spath, None, "is not UTF-8 text"), hint=_HINT) from None
    if fmt is None:
        fmt = detect_format(spath, text)
    elif fmt not in FORMATS:
        raise FormatError(Problem(spath, None, f"unknown format {fmt!r}"), hint=_HINT)
    notes: list[str] = []
    if fmt == "autoargue-nuggets":
        items, probs = _read_autoargue(spath, text, notes)
    else:
        items, probs = (_read_json if fmt in _KEEP else _read_tsv)(spath, text, fmt)
    if probs:
        raise FormatError(probs, hint=f"the file was read as {fmt}; " + _HINT)
    if not items:
        raise FormatError(Problem(spath, None, "holds no nuggets" if fmt.endswith("nuggets") else
                                  "holds no assignments"))
    if fmt in _KEEP:
        extra = _extra_keys(text, fmt)
        if extra:
            notes.append(f"{spath}: key(s) {', '.join(sorted(extra))} are not kept (first at line "
                         f"{min(extra.values())}); an export will not write them back")
    return fmt, items, data, notes


_KEEP = {"nuggetizer-nuggets": ({"query", "qid", "nuggets"}, {"text", "importance"}),
         "nuggetizer-assignments": ({"query", "qid", "nuggets", "answer_text", "response_length", "run_id"},
                                    {"text", "importance", "assignment"})}
_KEEP["nist-rag24"] = _KEEP["nuggetizer-assignments"]


def _extra_keys(text: str, fmt: str) -> dict[str, int]:
    top, per = _KEEP[fmt]
    out: dict[str, int] = {}
    for ln, obj in _json_records("", text)[0]:
        for k in set(obj) - top:
            out.setdefault(k, ln)
        for n in obj.get("nuggets") or []:
            if isinstance(n, dict):
                for k in set(n) - per:
                    out.setdefault(f"nuggets[].{k}", ln)
    return out


def _nugget_text(t, where: str) -> tuple[str | None, str | None]:
    if not isinstance(t, str) or not t.strip():
        return None, f'{where}: "text" must be a non-empty string, found {type_name(t)}'
    if "\n" in t or "\r" in t or "\x00" in t or "\t" in t:
        return None, f"{where}: the text holds a line break, tab or NUL; a nugget is one line"
    return t, None


def _run_id(v, what: str) -> tuple[str | None, str | None]:
    """A run id of an assignment file: the rule for names that become file names and terminal text
    (engine.util.names.name_problem), then `check_ident`."""
    e = name_problem(v, what) if isinstance(v, str) else None
    return (None, e) if e else check_ident(v, what)


def _read_json(spath: str, text: str, fmt: str) -> tuple[list[Item], list[Problem]]:
    recs, probs = _json_records(spath, text)
    items: list[Item] = []
    assigning = fmt in ASSIGNING_JSON
    seen: dict[tuple, int] = {}
    lists: dict[str, tuple[int, list]] = {}       # nist-rag24: per topic its first line and nugget list
    for ln, obj in recs:
        errs = []
        topic, e = check_ident(obj.get("qid"), '"qid"')
        errs += [e] if e else []
        run = None
        if assigning:
            if "candidate_text" in obj or "docid" in obj:
                errs.append("a retrieval-mode assignment (candidate_text, docid) judges a passage, not an answer")
            run, e = _run_id(obj.get("run_id"), '"run_id"')
            errs += [e] if e else []
        q = obj.get("query", "")
        if not isinstance(q, str):
            errs.append(f'"query" must be a string, found {type_name(q)}')
        ns = obj.get("nuggets")
        if not isinstance(ns, list):
            errs.append(f'"nuggets" must be a list, found {type_name(ns)}')
            ns = []
        key = (run, topic)
        if topic and key in seen:
            errs.append(f"{'run ' + run + ' and ' if run else ''}topic {topic} again (first at line {seen[key]})")
        seen.setdefault(key, ln)
        line_items = []
        for i, n in enumerate(ns):
            where = f"nugget {i}"
            if not isinstance(n, dict):
                errs.append(f"{where}: expected an object, found {type_name(n)}")
                continue
            t, e = _nugget_text(n.get("text"), where)
            errs += [e] if e else []
            imp = n.get("importance")
            if imp not in IMPORTANCE:
                errs.append(f'{where}: "importance" must be vital or okay, found {type_name(imp)}')
            lab = n.get("assignment")
            if assigning and lab not in LABELS:
                errs.append(f'{where}: "assignment" must be one of {", ".join(LABELS)}, found {type_name(lab)}')
            origin = {"format": fmt, "line": ln, "index": i}
            if i == 0:
                origin["query"] = q
                if assigning:
                    origin.update(answer_text=obj.get("answer_text"), response_length=obj.get("response_length"))
            line_items.append(Item(topic or "", t, imp, None, run, lab if assigning else None, origin))
        if fmt == "nist-rag24" and topic and not errs:
            mine = [(x.text, x.importance) for x in line_items]
            first = lists.setdefault(topic, (ln, mine))
            if first[1] != mine:
                errs.append(f"topic {topic}'s nuggets differ from those of line {first[0]} (NIST's file lists "
                            f"the topic's same nuggets, in the same order, for every run)")
        if errs:
            probs.extend(Problem(spath, ln, e) for e in errs)
        else:
            items.extend(line_items)      # a line listing no nuggets adds nothing
    return items, probs


def _autoargue_records(spath: str, text: str) -> tuple[list[tuple[int, dict]], list[Problem]]:
    """The banks of an AutoARGUE file (JSON lines, or one JSON document): [] when it holds none."""
    recs, probs = _json_records(spath, text)
    if probs:
        try:
            whole = loads_json(text, spath)
        except ValueError:
            return [], probs
        recs, probs = ([(1, whole)] if isinstance(whole, dict) else []), []
    banks = [(ln, o) for ln, o in recs if "nugget_bank" in o or "claim_bank" in o]
    return (banks, probs) if banks and len(banks) == len(recs) else ([], probs)


def _read_autoargue(spath: str, text: str, notes: list[str]) -> tuple[list[Item], list[Problem]]:
    recs, probs = _autoargue_records(spath, text)
    if not recs:
        return [], probs or [Problem(spath, None, 'no line is a nugget bank (a "nugget_bank" or "claim_bank")')]
    items: list[Item] = []
    seen: dict[str, int] = {}
    no_imp = dropped = 0
    for ln, obj in recs:
        errs = []
        topic, e = check_ident(obj.get("query_id"), '"query_id"')
        errs += [e] if e else []
        if topic and topic in seen:
            errs.append(f"topic {topic} again (first at line {seen[topic]})")
        seen.setdefault(topic or "", ln)
        q = obj.get("title_query") or ""
        line_items = []
        for key, field_, kind in (("nugget_bank", "question", "question"), ("claim_bank", "claim", "claim")):
            bank = obj.get(key)
            if bank is None:
                continue
            entries = list(bank.values()) if isinstance(bank, dict) else bank
            if not isinstance(entries, list):
                errs.append(f'"{key}" must be an object or a list, found {type_name(bank)}')
                continue
            for i, n in enumerate(entries):
                where = f"{key}[{i}]"
                if not isinstance(n, dict):
                    errs.append(f"{where}: expected an object, found {type_name(n)}")
                    continue
                t, e = _nugget_text(n.get(field_), f'{where} "{field_}"')
                errs += [e] if e else []
                imp = n.get("importance")
                if imp is None:
                    imp, no_imp = "okay", no_imp + 1
                elif imp not in IMPORTANCE:
                    errs.append(f'{where}: "importance" must be vital or okay, found {type_name(imp)}')
                dropped += sum(1 for k in ("answers", "references", "sub_nuggets") if n.get(k))
                origin = {"format": "autoargue-nuggets", "line": ln, "index": len(line_items), "kind": kind,
                          "id": n.get("question_id") or n.get("claim_id")}
                if not line_items:
                    origin["query"] = q if isinstance(q, str) else ""
                line_items.append(Item(topic or "", t, imp, None, None, None, origin))
        if errs:
            probs.extend(Problem(spath, ln, e) for e in errs)
        else:
            items.extend(line_items)
    if no_imp:
        notes.append(f"{spath}: {no_imp} nugget(s) without an importance read as okay")
    if dropped:
        notes.append(f"{spath}: answers, references and sub-nuggets ({dropped} field(s)) are not kept")
    return items, probs


def _read_tsv(spath: str, text: str, fmt: str) -> tuple[list[Item], list[Problem]]:
    items: list[Item] = []
    probs: list[Problem] = []
    seen: dict[tuple, int] = {}
    for ln, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        f = raw.split("\t")
        errs: list[str] = []
        if len(f) != 4:
            probs.append(Problem(spath, ln, f"{len(f)} tab-separated fields; {fmt} lines have 4"))
            continue
        if fmt == "trec-nuggets":
            topic, e1 = check_ident(f[0], "topic")
            nid, e2 = check_ident(f[1], "nugget id")
            errs += [e for e in (e1, e2) if e]
            if f[2] not in IMPORTANCE:
                errs.append(f"importance {f[2]!r}: use vital or okay")
            t, e = _nugget_text(f[3], "nugget")
            errs += [e] if e else []
            key: tuple = (topic, nid)
            item = Item(topic or "", t, f[2], nid, None, None, {"format": fmt, "line": ln, "id": nid})
        else:
            run, e1 = _run_id(f[0], "run")
            topic, e2 = check_ident(f[1], "topic")
            nid, e3 = check_ident(f[2], "nugget id")
            errs += [e for e in (e1, e2, e3) if e]
            if f[3] not in _TOKENS:
                errs.append(f"label {f[3]!r}: use {', '.join(LABELS)} or NIST's 2, 1, 0")
            key = (run, topic, nid)
            item = Item(topic or "", None, None, nid, run, _TOKENS.get(f[3]),
                        {"format": fmt, "line": ln, "id": nid, "token": f[3]})
        if not errs and key in seen:
            errs.append(f"{' '.join(key)} again (first at line {seen[key]})")
        seen.setdefault(key, ln)
        if errs:
            probs.extend(Problem(spath, ln, e) for e in errs)
        else:
            items.append(item)
    return items, probs


# ---------------------------------------------------------------------------- writing

def nuggetizer_nugget_line(topic: str, query: str, nuggets: list[tuple[str, str]]) -> str:
    """One line of nuggetizer's nugget file (its writer's key order and json.dumps defaults)."""
    return json.dumps({"query": query, "qid": topic,
                       "nuggets": [{"text": t, "importance": i} for t, i in nuggets]}) + "\n"


def nuggetizer_assignment_line(run: str, topic: str, query: str, answer_text: str, response_length,
                               nuggets: list[tuple[str, str, str]]) -> str:
    """One line of nuggetizer's assignment file (text, importance, assignment per nugget)."""
    return json.dumps({"query": query, "qid": topic, "answer_text": answer_text, "response_length": response_length,
                       "run_id": run, "nuggets": [{"text": t, "importance": i, "assignment": a}
                                                  for t, i, a in nuggets]}) + "\n"


def autoargue_nugget_line(topic: str, query: str, nuggets: list[tuple[str, str, str]]) -> str:
    """One AutoARGUE nugget bank (a JSON line): (text, importance, kind) per nugget, kind question or claim."""
    bank = {"query_id": topic, "title_query": query, "format_version": "v3"}
    for key, field_, kind in (("nugget_bank", "question", "question"), ("claim_bank", "claim", "claim")):
        sub = {t: {field_: t, "query_id": topic, "importance": i} for t, i, k in nuggets if k == kind}
        if sub:
            bank[key] = sub
    return json.dumps(bank) + "\n"


def trec_nugget_line(topic: str, nugget: str, importance: str, text: str) -> str:
    return f"{topic}\t{nugget}\t{importance}\t{text}\n"


def trec_assignment_line(run: str, topic: str, nugget: str, token: str) -> str:
    return f"{run}\t{topic}\t{nugget}\t{token}\n"


def label_token(label: str, token: str | None) -> str:
    """The label as the file wrote it (NIST's 0-2 or the word) when that token still means the label."""
    return token if token is not None and _TOKENS.get(token) == label else label
