"""Intake of answer runs (`cranfield submit` with TREC RAG answer files): read with the answer reader,
check campaign.yaml's `answers:` limits (max_words, max_sentences, max_references), the campaign's
topics and run names (a topic without an answer is a warning); all pass: each file is written
atomically to answers/RUN.jsonl; any fails: every problem as file:line and nothing is written."""
from __future__ import annotations

from dataclasses import dataclass

from ..campaign.campaign import load_campaign
from ..errors import FormatError, Problem, Warnings
from ..formats.files import read_bytes, read_head
from ..util.atomic import atomic_write
from ..util.confine import allowed_roots, refuse_outside
from ..util.names import name_problem
from .answers import answers_dir, check_limits, read_answers
from .rag24 import unanswered_warning


@dataclass
class AcceptedAnswers:
    path: str
    run: str
    answers: int
    topics: int
    target: str


def is_answer_file(path) -> bool:
    """True when the file's name ends in .jsonl(.gz) or its first non-blank byte opens a JSON object."""
    name = str(path)
    if name.endswith((".jsonl", ".jsonl.gz")):
        return True
    head = read_head(path)
    return head is not None and head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def submit_answers(root, files: list, warnings: Warnings | None = None, dry_run: bool = False,
                   replace: bool = False) -> list[AcceptedAnswers]:
    """Check every answer file against the campaign; all pass: write them to answers/RUN.jsonl."""
    w = warnings if warnings is not None else Warnings()
    camp = load_campaign(root, warnings=w)
    limits = camp.config.get("answers") or {}
    tt = camp.topics()
    topics = set(tt["topic"].astype(str)) if len(tt) else None
    retrieval = set(camp.runs()["run"].astype(str).unique()) if len(camp.runs()) else set()
    problems: list[Problem] = []
    staged = []
    seen: dict[str, str] = {}
    roots = allowed_roots(camp.root, {})[:1]     # answers are written inside the campaign only
    for f in files:
        data = read_bytes(f)
        try:
            run = read_answers(f, w, data)
        except FormatError as exc:
            problems.extend(exc.problems)
            continue
        problems.extend(check_limits(run, limits, topics))
        if topics is not None:
            unanswered_warning(str(f), topics, {a.topic for a in run.answers}, w)
        if len(run.runs) != 1:
            problems.append(Problem(str(f), None, f"holds runs {', '.join(run.runs[:5])}; submit one run per file"))
            continue
        rid = run.runs[0]
        bad = [m for m in [name_problem(rid, "answer run id"),
                           *(name_problem(t, "topic id") for t in sorted({a.topic for a in run.answers}))] if m]
        if bad:
            problems.extend(Problem(str(f), None, m) for m in bad[:3])
            continue
        target = answers_dir(camp.root) / f"{rid}.jsonl"
        refuse_outside(target, roots, str(answers_dir(camp.root)), "answer run")
        if rid in seen:
            problems.append(Problem(str(f), None, f"run {rid} is also submitted in {seen[rid]}"))
        elif rid in retrieval:
            problems.append(Problem(str(f), None, f"run {rid} is already a retrieval run of the campaign; "
                                                  f"give the answer run another run_id"))
        elif target.exists() and not replace:
            problems.append(Problem(str(f), None, f"run {rid} is already in {target}; give another run_id "
                                                  f"or resubmit with --replace"))
        seen[rid] = str(f)
        staged.append((f, rid, run, target, data))
    if problems:
        raise FormatError(problems, hint="fix the answers named above and submit again; nothing was copied")
    out = []
    for f, rid, run, target, data in staged:
        if not dry_run:
            atomic_write(target, data)   # decompressed: answers/RUN.jsonl is plain text
        out.append(AcceptedAnswers(str(f), rid, len(run.answers), len({a.topic for a in run.answers}), str(target)))
    return out
