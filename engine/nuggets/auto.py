"""Automatic nugget assignment and citation support through the automatic judge's endpoint.

The calls go through the one model client (`engine.util.modelclient`: any OpenAI-compatible chat
endpoint; bounded, retried, refused as docs/reliability.md says) with the automatic judge's settings
(`JudgeSettings`), and the prompts are built by `engine.util.prompts` (every field a tagged block). As
AutoNuggetizer does, one call assigns up to `batch` nuggets of one answer: the prompt lists them,
numbered, and the model answers a list of labels (support / partial_support / not_support), one per
nugget; an answer whose list does not have one valid label per nugget is recorded in
`nuggets/assign/SOURCE.errors.jsonl` and asked again, never guessed.
Every label is appended as it arrives to the cache `.cranfield-cache/nugget-assign.jsonl` (keyed by
topic, answer text, nugget text, prompt and model) and to the source's log, so a rerun costs nothing
and a killed run resumes without duplicates. After `stop_after` (default: the settings' `max_failures`)
failed requests in a row (a dead endpoint), the run stops early and says why.
"""
from __future__ import annotations

import functools
import hashlib
import json
from json.encoder import encode_basestring as _enc
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import CranfieldError
from ..judging.auto import JudgeSettings, check_settings, client_of, in_blocks, read_cache_lines
from ..util import fs, prompts
from ..util.modelclient import tally
from ..judgments.commit import GroupCommit
from ..judgments.log import append_records, locked_file, now_ts, record_lines, write_lines
from ..util.parallel import in_parallel
from .answers import Answer
from .scores import LABELS
from .store import _check_assign, _check_support, assign_path, read_records, support_path

ASSIGN_PROMPT_VERSION = prompts.ASSIGN_VERSION
ASSIGN_PROMPT = prompts.ASSIGN
SUPPORT_PROMPT_VERSION = prompts.SUPPORT_VERSION
SUPPORT_PROMPT = prompts.SUPPORT

CACHE_NAME = "nugget-assign.jsonl"
_LIST_RE = re.compile(r"\[([^\[\]]*)\]")
_LABEL_RE = re.compile(r"\b(partial_support|not_support|support)\b")


def parse_labels(answer: str, count: int) -> list[str] | None:
    """The labels in the answer's last [...] list, or None unless there are exactly `count` of them
    and the list holds nothing else."""
    if not isinstance(answer, str):
        return None
    lists = _LIST_RE.findall(answer)
    if not lists:
        return None
    body = lists[-1]
    labels = _LABEL_RE.findall(body)
    rest = _LABEL_RE.sub("", body)
    if len(labels) != count or re.sub(r"[\s,'\"]", "", rest):
        return None
    return labels


def key_of(*parts: str) -> str:
    """A cache key: sha256 over the parts (topic, texts, prompt, model)."""
    return hashlib.sha256(json.dumps(list(parts), ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def _assign_keys(topic: str, text: str, nugget_texts: list, prompt: str, model: str,
                 encoded: list[bytes] | None = None) -> list[str]:
    """`key_of(topic, text, nugget, prompt, model)` of each nugget of one answer, the answer's and the
    prompt's part encoded once (the same JSON text as json.dumps writes); `encoded`: the nuggets' texts
    as `_encoded_texts` gives them, when the caller holds them."""
    if not (type(topic) is str and type(text) is str and type(prompt) is str and type(model) is str
            and (encoded is not None or all(isinstance(x, str) for x in nugget_texts))):
        return [key_of(topic, text, nt, prompt, model) for nt in nugget_texts]
    head = f"[{_enc(topic)}, {_enc(text)}, ".encode("utf-8")
    tail = f", {_enc(prompt)}, {_enc(model)}]".encode("utf-8")
    sha = hashlib.sha256
    return [sha(b"".join((head, e, tail))).hexdigest()[:32]
            for e in (encoded if encoded is not None else _encoded_texts(nugget_texts))]


def _encoded_texts(texts: list[str]) -> list[bytes]:
    return [_enc(t).encode("utf-8") for t in texts]


_RESERVED = ("label", "key", "ts", "seconds", "cached")


def _dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))


class _Lines:
    """Log lines {**meta, label, **base, key, ts, ...} byte for byte as `record_lines` writes them, the
    constant part encoded once and each meta's keys and repeated text values once (thread-safe)."""

    def __init__(self, base: dict) -> None:
        self.plain = bool(base) and all(type(k) is str and k not in _RESERVED for k in base)
        self.base, self.mid = base, _dumps(base)[1:-1] if self.plain else ""
        self.heads: dict[tuple, list[str] | None] = {}     # a meta's keys -> their '"k": ' parts (None: not this way)
        self.texts: dict[str, str] = {}                     # a text value -> its JSON

    def tail(self, ts: str, seconds) -> str:
        """What follows the key: the time, the seconds (None: from the cache)."""
        if seconds is None:
            return f', "ts": {_enc(ts)}, "seconds": null, "cached": true}}\n'
        return f', "ts": {_enc(ts)}, "seconds": {_dumps(seconds)}}}\n'

    def line(self, m: dict, lab: str, k: str, tail: str) -> bytes | None:
        """One line, or None where only `record_lines` writes it (odd keys or values)."""
        if not self.plain or type(m) is not dict or type(lab) is not str or type(k) is not str:
            return None
        names = tuple(m)
        parts = self.heads.get(names, False)
        if parts is False:
            ok = all(type(n) is str and n not in self.base and n not in _RESERVED for n in names)
            parts = self.heads[names] = [f"{_enc(n)}: " for n in names] if ok else None
        if parts is None:
            return None
        vals = []
        for n, v in zip(parts, m.values()):
            if type(v) is str:
                e = self.texts.get(v)
                if e is None:
                    e = self.texts[v] = _enc(v)
            else:
                e = _dumps(v)
            vals.append(n + e)
        return f'{{{", ".join(vals)}, "label": {_enc(lab)}, {self.mid}, "key": {_enc(k)}{tail}'.encode("utf-8")


def _hit_lines(hits: list[tuple[dict, str, str]], base: dict, ts: str) -> list[bytes]:
    """The log lines of labels taken from the cache, written at `ts`: byte for byte `record_lines` of
    {**meta, label, **base, key, ts, seconds: None, cached: True} for each (meta, label, key)."""
    mk = _Lines(base)
    tail = mk.tail(ts, None)
    out = [mk.line(m, lab, k, tail) for m, lab, k in hits]
    if None in out:
        return record_lines([{**m, "label": lab, **base, "key": k, "ts": ts, "seconds": None, "cached": True}
                             for m, lab, k in hits])
    return out


def _cache_lines(keys: list[str], labels: list[str], model: str, ts: str) -> list[bytes]:
    """The cache's lines of one reply: byte for byte `record_lines` of {key, label, model, ts} each."""
    rest = f', "model": {_dumps(model)}, "ts": {_enc(ts)}}}\n'
    return [f'{{"key": {_enc(k)}, "label": {_enc(lab)}{rest}'.encode("utf-8") for k, lab in zip(keys, labels)]


@dataclass
class AutoResult:
    """What an automatic run did."""

    items: int = 0                  # labels wanted
    already: int = 0                # already in the source's log
    from_cache: int = 0
    calls: int = 0
    labelled: int = 0               # new labels from calls
    unparsed: int = 0
    http_errors: int = 0
    failed: list = field(default_factory=list)
    stopped: str | None = None      # why the run stopped early
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class _Task:
    keys: list[str]
    meta: list[dict]
    prompt: str | Callable[[], str]     # the prompt, or what builds it when the task is asked


def _cache_path(root) -> Path:
    from ..util.confine import campaign_path
    p = campaign_path(root, "cache", CACHE_NAME)
    return p


# a cache line as this module writes it, with a plain ASCII model name and time (no escapes): read by one
# regular expression over the whole file when every line is one
_CACHE_LINE = re.compile(r'^\{"key": "([0-9a-f]{32})", "label": "(support|partial_support|not_support)", '
                         r'"model": "[ !#-\[\]-~]*", "ts": "[ !#-\[\]-~]*"\}\n', re.M)


def _cached(root) -> dict[str, str]:
    """key -> label from the cache (the automatic judge's tolerant reader: a torn line is asked again)."""
    p = _cache_path(root)
    if not fs.is_file(p):
        return {}
    raw = fs.read_bytes(p)
    fast = _canonical_cache(raw)
    if fast is not None:
        return fast
    return {str(r["key"]): r["label"] for r in read_cache_lines(p, raw) if r.get("label") in LABELS and "key" in r}


def _canonical_cache(raw: bytes) -> dict[str, str] | None:
    """key -> label of a cache whose every line is a plain line of this module's (`_CACHE_LINE`), in one
    pass; None for any other text (read line by line then)."""
    from ..formats.safeload import every_line
    pairs = every_line(raw, _CACHE_LINE, "ascii")
    return None if pairs is None else dict(pairs)


def _execute(root, tasks: list[_Task], log_p: Path, settings: JudgeSettings, base: dict,
             res: AutoResult, stop_after: int | None,
             progress: Callable[[int, int, AutoResult], None] | None) -> AutoResult:
    """Ask for each task's labels (parallel, retried); append each to the cache and the log."""
    check_settings(settings)
    cache_p = _cache_path(root)
    err_p = log_p.with_name(log_p.stem + ".errors.jsonl")
    lock = threading.Lock()
    client = client_of(settings, stop_after)
    lines = _Lines(base)
    t0 = time.monotonic()

    def one(task: _Task) -> None:
        def failure(attempt: int, reason: str, answer: str | None) -> None:
            rec = {"keys": task.keys, "error": reason, "attempt": attempt, "ts": now_ts()}
            if answer is not None:
                rec["answer"] = answer[-2000:]
            append_records(err_p, [rec])

        p = task.prompt if isinstance(task.prompt, str) else task.prompt()
        out = client.ask(p, lambda a: parse_labels(a, len(task.keys)), failure)
        with lock:
            tally(res, out)
        if not out.ok:
            if out.requests:
                with lock:
                    res.failed.append((task.meta[0].get("run"), task.meta[0].get("topic"), out.reason))
            return
        labels = out.value
        secs = round(out.seconds / len(labels), 3)

        def labelled() -> None:      # in the writer thread, once the labels are on disk
            with lock:
                res.labelled += len(labels)
        ts = now_ts()                # the reply's labels arrived at once: one time for its lines
        tail = lines.tail(ts, secs)
        log = [lines.line(m, lab, k, tail) for k, m, lab in zip(task.keys, task.meta, labels)]
        if None in log:
            log = record_lines([{**m, "label": lab, **base, "key": k, "ts": ts, "seconds": secs}
                                for k, m, lab in zip(task.keys, task.meta, labels)])
        commit.submit_lines([(cache_p, _cache_lines(task.keys, labels, settings.model, ts)), (log_p, log)],
                            labelled)

    n = len(tasks)
    if progress:
        progress(0, n, res)
    commit = GroupCommit()
    try:
        in_parallel(one, tasks, settings.concurrency, lambda done: progress and done < n and progress(done, n, res))
    finally:
        commit.close()
    if progress and n:
        progress(n, n, res)
    res.seconds = time.monotonic() - t0
    res.stopped = client.stopped
    return res


def _split_done(root, log_p: Path, check, keyed: list[tuple[str, dict]], res: AutoResult, base: dict):
    """Drop items already in the log; write cached ones; return those still to ask."""
    ids = ("run", "topic", "nugget", "sentence", "doc")
    done = {(r.get("key"),) + tuple(r.get(c) for c in ids) for r in read_records(log_p, check)}
    cache = _cached(root)
    todo, hits = [], []
    for k, m in keyed:
        if done and (k,) + tuple(m.get(c) for c in ids) in done:
            res.already += 1
        elif k in cache:
            hits.append((m, cache[k], k))
        else:
            todo.append((k, m))
    if hits:                         # one write of complete lines (a torn tail is cut on the next open)
        with locked_file(log_p) as fd:
            write_lines(fd, log_p, in_blocks(_hit_lines(hits, base, now_ts())))
        res.from_cache = len(hits)
    return todo


def auto_assign(root, source: str, settings: JudgeSettings, answers: list[Answer], nuggets: pd.DataFrame,
                batch: int = 10, stop_after: int | None = None, prompt: str = ASSIGN_PROMPT,
                prompt_version: str = ASSIGN_PROMPT_VERSION,
                progress: Callable[[int, int, AutoResult], None] | None = None, dry_run: bool = False) -> AutoResult:
    """Assign every nugget of each answer's topic through the endpoint into source `source`."""
    if batch < 1:
        raise CranfieldError("--batch must be at least 1")
    log_p = assign_path(root, source)
    base = {"op": "assign", "assessor": source, "kind": "llm", "model": settings.model,
            "prompt_version": prompt_version, "endpoint": settings.endpoint}
    by_topic: dict = {}
    for t, n, nt in zip(nuggets["topic"].tolist(), nuggets["nugget"].tolist(), nuggets["text"].tolist()):
        g = by_topic.setdefault(t, ([], []))
        g[0].append(n)
        g[1].append(nt)
    res = AutoResult(items=sum(len(by_topic[a.topic][0]) for a in answers if a.topic in by_topic))
    if dry_run:
        return res
    ids = ("run", "topic", "nugget", "sentence", "doc")
    done = {(r.get("key"),) + tuple(r.get(c) for c in ids) for r in read_records(log_p, _check_assign)}
    cache = _cached(root)
    hit = _assign_hit_line(base, now_ts())
    lines, tasks = [], []
    encoded = {t: _encoded_texts(g[1]) if all(isinstance(x, str) for x in g[1]) else None
               for t, g in by_topic.items()}
    for a in answers:                                 # each answer's labels: done, cached, or asked in batches
        g = by_topic.get(a.topic)
        if g is None:
            continue
        ask: list[int] = []
        line = hit(a.run, a.topic)
        text = a.text                                 # joined from the sentences at each use: once here
        keys = _assign_keys(a.topic, text, g[1], prompt, settings.model, encoded[a.topic])
        for i, (k, n) in enumerate(zip(keys, g[0])):
            if done and (k, a.run, a.topic, n, None, None) in done:
                res.already += 1
                continue
            lab = cache.get(k)
            if lab is None:
                ask.append(i)
            else:
                lines.append(line(n, lab, k))
        for j in range(0, len(ask), batch):
            part = ask[j:j + batch]
            tasks.append(_Task([keys[i] for i in part], [{"run": a.run, "topic": a.topic, "nugget": g[0][i]}
                                                         for i in part],
                               functools.partial(prompts.assign, prompt, a.query or a.topic, text,
                                                 [g[1][i] for i in part])))
    if lines:                        # one write of complete lines (a torn tail is cut on the next open)
        with locked_file(log_p) as fd:
            write_lines(fd, log_p, in_blocks(lines))
        res.from_cache = len(lines)
    return _execute(root, tasks, log_p, settings, base, res, stop_after, progress)


def _assign_hit_line(base: dict, ts: str):
    """hit(run, topic) -> line(nugget, label, key): the log line of a label taken from the cache, byte for
    byte `_hit_lines` of ({run, topic, nugget}, label, key), with no meta dict (`_Lines`' parts)."""
    mk = _Lines(base)
    if not mk.plain or any(n in base for n in ("run", "topic", "nugget")):
        return lambda run, topic: lambda n, lab, k: _hit_lines([({"run": run, "topic": topic, "nugget": n}, lab, k)],
                                                               base, ts)[0]

    def js(v) -> str:
        return _enc(v) if type(v) is str else _dumps(v)
    tail = '"' + mk.tail(ts, None)
    labels = {lab: f', "label": {_enc(lab)}, {mk.mid}, "key": "' for lab in LABELS}
    texts = mk.texts

    def hit(run, topic):
        head = f'{{"run": {js(run)}, "topic": {js(topic)}, "nugget": '

        def line(n, lab: str, k: str) -> bytes:       # k: a key of this module's (32 hex digits)
            e = texts.get(n) if type(n) is str else None
            if e is None:
                e = js(n)
                if type(n) is str:
                    texts[n] = e
            return "".join((head, e, labels[lab], k, tail)).encode("utf-8")
        return line
    return hit


def auto_support(root, source: str, settings: JudgeSettings, answers: list[Answer], passages: dict[str, str],
                 stop_after: int | None = None, prompt: str = SUPPORT_PROMPT, prompt_version: str = SUPPORT_PROMPT_VERSION,
                 progress: Callable[[int, int, AutoResult], None] | None = None) -> AutoResult:
    """Label each (sentence, cited passage) as support / partial_support / not_support into `source`."""
    log_p = support_path(root, source)
    base = {"op": "support", "assessor": source, "kind": "llm", "model": settings.model,
            "prompt_version": prompt_version, "endpoint": settings.endpoint}
    keyed, texts = [], {}
    for a in answers:
        for i, s in enumerate(a.sentences):
            for c in s.citations:
                d = a.references[c]
                k = key_of("support", s.text, d, prompt, settings.model)
                keyed.append((k, {"run": a.run, "topic": a.topic, "sentence": i, "doc": d}))
                texts[k] = prompts.support(prompt, s.text, passages.get(d, ""))
    res = AutoResult(items=len(keyed))
    todo = _split_done(root, log_p, _check_support, keyed, res, base)
    tasks = [_Task([k], [m], texts[k]) for k, m in todo]
    return _execute(root, tasks, log_p, settings, base, res, stop_after, progress)
