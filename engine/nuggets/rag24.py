"""The TREC RAG 2024 answer rules of NIST's format checker (as ported in ragnarok), each verdict an
error or a warning as that checker gives it; the answer reader applies them (reader_rules).

With the track's rules (`profile="rag24"`): a reference must be an MS MARCO v2.1 segment id (error),
at most 20 references (error); a `response_length` over 400 and an answer over 400 words are warnings
(NIST's checker cuts trailing sentences to 400 words). With a topic file (TOPIC<TAB>question lines,
NIST's form): an unknown topic and a question text other than the topic's are errors, every topic
without an accepted answer a warning. Several runs in one file is an error.
"""
from __future__ import annotations

import re

from ..errors import FormatError, Problem, Warnings
from ..formats.files import check_text, read_bytes
from .answers import AnswerRun

MARCO_SEGMENT = re.compile(r"^msmarco_v2\.1_doc_\d+_\d+#\d+_\d+$")
RAG24_MAX_REFERENCES = 20
RAG24_MAX_WORDS = 400
PROFILES = ("rag24",)


def read_topic_file(path) -> dict[str, str]:
    """topic id -> question from a NIST topic file (TOPIC<TAB>question per line); every malformed line
    is an error naming file:line."""
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    out: dict[str, str] = {}
    problems: list[Problem] = []
    for ln, raw in enumerate(data.decode("utf-8", "replace").split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        tid, sep, query = line.strip().partition("\t")
        if not sep or not tid or "\t" in query:
            problems.append(Problem(spath, ln, "expected TOPIC<TAB>question (two tab-separated fields)"))
        elif tid in out:
            problems.append(Problem(spath, ln, f"topic {tid} is listed again"))
        else:
            out[tid] = query
    if problems:
        raise FormatError(problems, hint="a topic file has one line per topic: the id, a tab, the question")
    return out


def reader_rules(profile: str | None, topics: dict[str, str] | None = None) -> dict | None:
    """The rules the answer reader applies for a profile and a topic list (answers.parse_answer's)."""
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}")
    rules: dict = {}
    if profile == "rag24":
        rules.update(reference_pattern=MARCO_SEGMENT, max_references=RAG24_MAX_REFERENCES, max_words=RAG24_MAX_WORDS)
    if topics is not None:
        rules["topics"] = topics
    return rules or None


def check_run(run: AnswerRun, warnings: Warnings, topics: dict[str, str] | None = None) -> list[Problem]:
    """The errors of an answer file beyond each line's (several runs in one file); with the track's
    topics, a warning naming the topics without an accepted answer."""
    out: list[Problem] = []
    runs = run.runs
    for a in run.answers:
        if a.run != runs[0]:
            out.append(Problem(run.path, a.line, f"run {a.run} after run {runs[0]}; one run per file"))
    if topics is not None:
        unanswered_warning(run.path, topics, {a.topic for a in run.answers}, warnings)
    return out


def unanswered_warning(path: str, topics, answered: set[str], warnings: Warnings) -> None:
    """One warning listing the topics without an accepted answer (NIST's checker warns for each)."""
    from ..util.names import natural_key
    missing = sorted(set(topics) - set(answered), key=natural_key)
    if missing:
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        warnings.add(path, None, f"no accepted answer to {len(missing)} topic(s): {', '.join(missing[:10])}{more}")
