"""The TREC RAG answer-run reader (JSON lines, one answer per line).

Each line is one JSON object:
  {"run_id": "R1", "topic_id": "2024-1", "topic": "...", "references": ["seg1", "seg2"],
   "response_length": 12, "answer": [{"text": "One sentence.", "citations": [0, 1]}, ...]}
The 2025 layout, with the ids under "metadata" ({"metadata": {"run_id": ..., "narrative_id" or
"topic_id": ...}}), is read too (the 2024 layout needs "topic" and "response_length", as NIST's checker).
Every problem of every malformed line is an error naming file:line and what is wrong; unknown keys, a
citation repeated in a sentence (counted once) and a `response_length` that differs from the counted
words are warnings, as NIST's RAG24 checker gives them (nothing is dropped silently). Limits bound every
part, so no file makes the reader hang or exhaust memory.
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FormatError, Problem, Warnings
from ..formats.files import PathLike, check_text, read_bytes
from ..formats.safeload import MAX_DEPTH, json_too_deep, type_name

MAX_LINE_BYTES = 4_000_000      # one answer line
MAX_SENTENCES = 2_000           # sentences in one answer
MAX_REFERENCES = 2_000          # references of one answer
MAX_CITATIONS = 200             # citations of one sentence
MAX_SENTENCE_CHARS = 20_000     # characters of one sentence
MAX_ID_CHARS = 200              # run, topic and reference ids

_KNOWN = {"run_id", "topic_id", "topic", "references", "response_length", "answer", "metadata"}
_META_KNOWN = {"team_id", "run_id", "narrative_id", "topic_id", "narrative", "type", "topic"}
HINT = ('each line is one JSON object: {"run_id": "R1", "topic_id": "T1", "references": ["doc1", ...], '
        '"answer": [{"text": "a sentence", "citations": [0]}, ...]} (citations index the references, from 0)')


@dataclass(frozen=True)
class Sentence:
    """One answer sentence and the indices of the references it cites."""

    text: str
    citations: tuple[int, ...]


@dataclass
class Answer:
    """One run's answer to one topic."""

    run: str
    topic: str
    references: list[str]
    sentences: list[Sentence]
    line: int = 0
    query: str = ""
    response_length: int | None = None
    path: str = ""

    @property
    def words(self) -> int:
        """Words in the answer: white-space separated tokens of every sentence after NFKC normalization
        (NIST's RAG24 checker's count)."""
        return count_words(s.text for s in self.sentences)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    def cited(self, i: int) -> list[str]:
        """The reference ids sentence `i` cites."""
        return [self.references[c] for c in self.sentences[i].citations]


@dataclass
class AnswerRun:
    """Every answer of one file, in file order."""

    path: str
    answers: list[Answer] = field(default_factory=list)

    @property
    def runs(self) -> list[str]:
        return list(dict.fromkeys(a.run for a in self.answers))


class _RepeatedKey(ValueError):
    pass


def _no_repeats(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set = set()
    for k, _ in pairs:
        if k in seen:
            raise _RepeatedKey(f"key {k!r} appears twice in one object; keep one (JSON keeps the last silently)")
        seen.add(k)
    return out


def _decode(text: str):
    """json.loads with the nesting limit and repeated keys refused (nothing silently dropped)."""
    if json_too_deep(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        obj = json.loads(text, object_pairs_hook=_no_repeats)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    from ..formats.safeload import lone_surrogate
    bad = lone_surrogate(text, obj)
    if bad:
        raise ValueError(f"a lone surrogate {bad} (a JSON escape that is no character) is not valid text")
    return obj


def check_ident(v, what: str) -> tuple[str | None, str | None]:
    """(id, None) or (None, message) for a run, topic, reference or nugget id (every nugget reader's rule)."""
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        return None, f"{what} must be a string, found {type_name(v)}"
    s = str(v)
    if not s or s.split() != [s]:             # empty, or a white-space character in it
        return None, f"{what} {s!r} must be non-empty without white space"
    if len(s) > MAX_ID_CHARS:
        return None, f"{what} is {len(s)} characters long (at most {MAX_ID_CHARS})"
    return s, None


def parse_answer(obj, path: str, line: int, warnings: Warnings,
                 rules: dict | None = None) -> tuple[Answer | None, list[str]]:
    """One decoded line as an Answer, or (None, every problem of the line). Warnings (as NIST's RAG24
    checker warns): a citation repeated in a sentence (kept once), a `response_length` that differs
    from the counted words, unknown keys. `rules`: a track's reference rules, `reference_pattern` (a
    compiled regex every reference id must match), `max_references`, `topics` (id -> question; an
    unknown topic and another question text are errors) and `max_words` (over it: warnings).
    Warnings are given for lines with errors too."""
    if not isinstance(obj, dict):
        return None, [f"expected a JSON object, found {type_name(obj)}"]
    errs: list[str] = []
    notes: list[str] = []
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        errs.append(f'"metadata" must be an object, found {type_name(meta)}')
        meta = {}
    meta = meta or {}
    run_v = obj.get("run_id", meta.get("run_id"))
    topic_v = obj.get("topic_id", meta.get("topic_id", meta.get("narrative_id")))
    run = topic = None
    if run_v is None:
        errs.append('missing "run_id" (the run\'s name)')
    else:
        run, err = check_ident(run_v, '"run_id"')
        errs += [err] if err else []
    if topic_v is None:
        errs.append('missing "topic_id" (or "metadata": {"narrative_id": ...})')
    else:
        topic, err = check_ident(topic_v, '"topic_id"')
        errs += [err] if err else []
    if "metadata" not in obj:     # the 2024 layout: NIST's checker requires the question and the length
        if "topic" not in obj:
            errs.append('missing "topic" (the question text)')
        if "response_length" not in obj:
            errs.append('missing "response_length" (the answer\'s words)')
    refs_v = obj.get("references")
    refs: list[str] = []
    n_refs = 0
    refs_ok = False      # citations are checked against the references only when those could be read
    if refs_v is None:
        errs.append('missing "references" (the list of cited passage ids; [] when none)')
    elif not isinstance(refs_v, list):
        errs.append(f'"references" must be a list of passage ids, found {type_name(refs_v)}')
    elif len(refs_v) > MAX_REFERENCES:
        errs.append(f'"references" lists {len(refs_v)} passages (at most {MAX_REFERENCES})')
    else:
        n_refs, refs_ok = len(refs_v), True
        seen: dict[str, int] = {}
        for i, r in enumerate(refs_v):
            rid, err = check_ident(r, f"reference {i}")
            if err:
                errs.append(err)
            elif rid in seen:
                errs.append(f"reference {rid!r} is listed twice (positions {seen[rid]} and {i}); list each once")
            else:
                seen[rid] = i
            pat = (rules or {}).get("reference_pattern")
            if rid and pat is not None and not pat.match(rid):
                errs.append(f"reference {rid!r} is not a valid passage id here (pattern {pat.pattern})")
            refs.append(rid or "")
        most = (rules or {}).get("max_references")
        if most is not None and n_refs > most:
            errs.append(f"{n_refs} references (at most {most})")
    ans_v = obj.get("answer")
    sents: list[Sentence] = []
    if ans_v is None:
        errs.append('missing "answer" (the list of sentences)')
    elif not isinstance(ans_v, list):
        errs.append(f'"answer" must be a list of sentences, found {type_name(ans_v)}')
    elif len(ans_v) > MAX_SENTENCES:
        errs.append(f'"answer" has {len(ans_v)} sentences (at most {MAX_SENTENCES})')
    else:
        for i, s in enumerate(ans_v):
            sent = _sentence(i, s, n_refs, refs_ok, errs, notes)
            if sent is not None:
                sents.append(sent)
    rl = obj.get("response_length")
    if rl is not None and (isinstance(rl, bool) or not isinstance(rl, int) or rl < 0):
        errs.append(f'"response_length" must be an integer >= 0, found {type_name(rl)}')
    q = obj.get("topic", meta.get("narrative", meta.get("topic", "")))
    if not isinstance(q, str):
        errs.append(f'"topic" (the question text) must be a string, found {type_name(q)}')
    topics = (rules or {}).get("topics")
    if topics is not None and topic is not None:
        if topic not in topics:
            errs.append(f"topic {topic} is not one of the track's topics")
        elif topics[topic] and isinstance(q, str) and q and q != topics[topic]:
            errs.append(f"the question text differs from topic {topic}'s {topics[topic]!r}")
    texts = [x.get("text") for x in (ans_v if isinstance(ans_v, list) else []) if isinstance(x, dict)]
    words = count_words(t for t in texts if isinstance(t, str))
    for n in notes:
        warnings.add(path, line, n)
    unknown = sorted(set(obj) - _KNOWN) + sorted(f"metadata.{k}" for k in set(meta) - _META_KNOWN)
    if unknown:
        warnings.add(path, line, f"unknown key(s) {', '.join(unknown)} ignored")
    if isinstance(rl, int) and not isinstance(rl, bool) and rl != words:
        warnings.add(path, line, f'"response_length" {rl} differs from the {words} words counted in the answer; '
                                 f"the counted words are used")
    most = (rules or {}).get("max_words")
    if most is not None:
        if isinstance(rl, int) and rl > most:
            warnings.add(path, line, f'"response_length" {rl} is over {most}')
        if words > most:
            warnings.add(path, line, f"the answer has {words} words (over {most}); NIST's checker drops its last "
                                     f"sentences to fit")
    if errs:
        return None, errs
    return Answer(run, topic, refs, sents, line, q, rl, path), []


def count_words(texts) -> int:
    """White-space separated tokens of the texts after NFKC normalization (NIST's RAG24 count)."""
    texts = list(texts)
    joined = " ".join(texts)
    if joined.isascii():             # NFKC leaves ASCII as it is, and a space between texts joins no tokens
        return len(joined.split())
    return sum(len(unicodedata.normalize("NFKC", t).split()) for t in texts)


def _sentence(i: int, s, n_refs: int, have_refs: bool, errs: list[str], notes: list[str]) -> Sentence | None:
    """Sentence `i` of an answer; its problems go to `errs`, its warnings to `notes`."""
    where = f"sentence {i}"
    if not isinstance(s, dict):
        errs.append(f'{where}: expected {{"text": ..., "citations": [...]}}, found {type_name(s)}')
        return None
    bad = len(errs)
    extra = () if len(s) == 2 and "text" in s and "citations" in s else set(s) - {"text", "citations"}
    if extra:
        errs.append(f"{where}: unknown key(s) {', '.join(sorted(map(repr, extra)))} (text, citations)")
    t = s.get("text")
    if not isinstance(t, str):
        errs.append(f'{where}: "text" must be a string, found {type_name(t)}')
    elif not t.strip():
        errs.append(f'{where}: "text" is empty')
    elif len(t) > MAX_SENTENCE_CHARS:
        errs.append(f"{where}: {len(t)} characters (at most {MAX_SENTENCE_CHARS})")
    elif "\x00" in t:
        errs.append(f"{where}: contains a NUL character")
    cv = s.get("citations", [])
    cites: list[int] = []
    if not isinstance(cv, list):
        errs.append(f'{where}: "citations" must be a list of reference indices, found {type_name(cv)}')
    elif len(cv) > MAX_CITATIONS:
        errs.append(f"{where}: {len(cv)} citations (at most {MAX_CITATIONS})")
    else:
        twice = []
        for c in cv:
            if isinstance(c, bool) or not isinstance(c, int):
                errs.append(f"{where}: citation {c!r} must be an integer index into the references")
            elif not 0 <= c < n_refs:
                if have_refs:
                    errs.append(f"{where}: citation {c} points outside the references (indices 0..{n_refs - 1})"
                                if n_refs else f"{where}: citation {c} but the references list is empty")
            elif c in cites:
                twice.append(c)
            else:
                cites.append(c)
        if twice:
            notes.append(f"{where}: citation(s) {', '.join(map(str, sorted(set(twice))))} repeated; each is "
                         f"counted once (as NIST's checker does)")
    return None if len(errs) > bad else Sentence(t, tuple(cites))


def read_answers(path: PathLike, warnings: Warnings | None = None, data: bytes | None = None) -> AnswerRun:
    """Every answer of a TREC RAG answer file (JSON lines, .gz too). Raises FormatError naming every
    malformed line (file:line: every problem of it) and every repeated (run, topic)."""
    run, problems = scan_answers(path, warnings, data)
    if problems:
        raise FormatError(problems, hint=HINT)
    if not run.answers:
        raise FormatError(Problem(str(path), None, "holds no answers"), hint=HINT)
    return run


def scan_answers(path: PathLike, warnings: Warnings | None = None, data: bytes | None = None,
                 rules: dict | None = None) -> tuple[AnswerRun, list[Problem]]:
    """The answers of the well-formed lines and the Problems of the others (a checker's full report);
    `rules` as parse_answer's."""
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    raw = read_bytes(path) if data is None else data
    check_text(spath, raw)
    problems: list[Problem] = []
    out = AnswerRun(spath)
    first: dict[tuple[str, str], int] = {}
    for ln, b in enumerate(raw.split(b"\n"), start=1):
        if not b.strip():
            continue
        if len(b) > MAX_LINE_BYTES:
            problems.append(Problem(spath, ln, f"line is {len(b):,} bytes long (at most {MAX_LINE_BYTES:,})"))
            continue
        try:
            obj = _decode(b.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(Problem(spath, ln, "is not valid UTF-8 text"))
            continue
        except _RepeatedKey as exc:
            problems.append(Problem(spath, ln, str(exc)))
            continue
        except ValueError as exc:
            problems.append(Problem(spath, ln, f"is not valid JSON ({getattr(exc, 'msg', exc)})"))
            continue
        a, errs = parse_answer(obj, spath, ln, w, rules)
        if errs:
            problems.extend(Problem(spath, ln, e) for e in errs)
            continue
        k = (a.run, a.topic)
        if k in first:
            problems.append(Problem(spath, ln, f"run {a.run} answers topic {a.topic} again (first at line "
                                               f"{first[k]}); one answer per run and topic"))
            continue
        first[k] = ln
        out.answers.append(a)
        if len(problems) > 1000:
            break
    return out, problems


def check_limits(run: AnswerRun, limits: dict, topics: set[str] | None = None) -> list[Problem]:
    """Campaign limits (campaign.yaml `answers:` max_words, max_sentences, max_references) and known
    topics: one Problem per answer over a limit."""
    out: list[Problem] = []
    for a in run.answers:
        for key, val in (("max_words", a.words), ("max_sentences", len(a.sentences)),
                         ("max_references", len(a.references))):
            lim = limits.get(key)
            if lim is not None and val > int(lim):
                out.append(Problem(run.path, a.line, f"answer of run {a.run} to topic {a.topic} has {val} "
                                                     f"{key[4:]} (answers.{key} is {lim})"))
        if topics is not None and a.topic not in topics:
            out.append(Problem(run.path, a.line, f"topic {a.topic} is not a topic of the campaign"))
    return out


def answers_dir(root) -> Path:
    """Where a campaign keeps its answer runs: answers/RUN.jsonl (confined)."""
    from ..util.confine import campaign_path
    return campaign_path(root, "answers")
