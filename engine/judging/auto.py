"""Automatic relevance judging through any OpenAI-compatible chat endpoint (vLLM, llama.cpp server,
Ollama, hosted APIs), through the one model client (`engine.util.modelclient`) with prompts built by
`engine.util.prompts` (every field a tagged block).

`run_auto_judge` sends each pooled (topic, document) of a campaign with a prompt (default: the
UMBRELA-style prompt below, grades 0-3), in parallel up to `concurrency` requests, retrying failed
requests with exponential backoff (the client bounds, retries and refuses; docs/reliability.md). Every answer is appended durably, as it arrives, to
- the cache `.cranfield-cache/autojudge.jsonl`, keyed by (topic, document, prompt, model), and
- the source's log `judgments/sources/NAME.jsonl` (kind auto, model, prompt version, cache key),
so a rerun costs nothing and a killed run resumes where it stopped, without duplicates. An answer
that does not parse is written to `NAME.errors.jsonl` and asked again (up to `retries` times); it is
never guessed. Documented in docs/judgment-sources.md.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import CranfieldError
from ..util import prompts
from ..util.parallel import in_parallel
from ..util.modelclient import (DEFAULT_DEADLINE, DEFAULT_MAX_BYTES, DEFAULT_MAX_FAILURES, ModelClient,
    check_client, tally)
from ..util import fs

# The default prompt (UMBRELA, grades 0-3, `##final score: N`) lives with the other prompts.
DEFAULT_PROMPT_VERSION = prompts.RELEVANCE_VERSION
DEFAULT_PROMPT = prompts.RELEVANCE

_FINAL_RE = re.compile(r"##\s*final\s+score\s*:\s*\**\s*(-?\d+)", re.I)
_BARE_RE = re.compile(r"^\s*\**\s*(-?\d+)\s*\**\s*\.?\s*$")
CACHE_NAME = "autojudge.jsonl"


@dataclass
class JudgeSettings:
    """How to reach the model and how hard to try."""

    endpoint: str
    model: str
    prompt: str = DEFAULT_PROMPT
    prompt_version: str = DEFAULT_PROMPT_VERSION
    concurrency: int = 4
    retries: int = 3                 # extra attempts after a failed request or an unparseable answer
    backoff: float = 1.0             # seconds before the first retry, doubled each time (capped at 30 s)
    timeout: float = 60.0            # seconds for one request (connect, send, answer), not per read
    max_tokens: int = 200
    temperature: float = 0.0
    api_key: str | None = None
    grades: tuple[int, ...] = (0, 1, 2, 3)
    grade_map: dict = field(default_factory=dict)   # the model's grade -> the campaign's (e.g. {3: 2})
    scale: tuple[int, ...] | None = None  # grades that may be stored (default: the campaign's scale)
    max_failures: int = DEFAULT_MAX_FAILURES  # stop after this many failed requests in a row (0: never)
    judge_empty: bool = False        # also ask for pairs whose document has no text
    deadline: float = DEFAULT_DEADLINE  # seconds for one call, its retries and waits included
    max_bytes: int = DEFAULT_MAX_BYTES  # a longer reply is refused while read


@dataclass
class AutoJudgeResult:
    total: int = 0                   # pooled pairs considered
    already: int = 0                 # already in the source's log (resume / rerun)
    from_cache: int = 0              # taken from the cache without a call
    calls: int = 0                   # HTTP requests made
    judged: int = 0                  # new grades written by calls
    unparsed: int = 0                # answers that did not parse (each retried)
    http_errors: int = 0
    failed: list = field(default_factory=list)   # (topic, doc, reason) given up after all retries
    empty: int = 0                   # pairs not asked: the document has no text (judge_empty off)
    stopped: bool = False            # stopped early: the endpoint failed max_failures times in a row
    stop_reason: str | None = None   # why, in a sentence
    not_tried: int = 0               # pairs left when the run stopped early
    prompt_tokens: int = 0
    completion_tokens: int = 0


def prompt_version_of(text: str, given: str | None = None) -> str:
    """The prompt's version: the given label, `umbrela-v2` for the default, else file:<sha256[:12]>."""
    if given:
        return given
    if text == DEFAULT_PROMPT:
        return DEFAULT_PROMPT_VERSION
    return "file:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def cache_key(topic: str, doc: str, prompt: str, model: str) -> str:
    """The cache key of one judgment: (topic, document, prompt text, model)."""
    return cache_keys([topic], [doc], prompt, model)[0]


def cache_keys(topics, docs, prompt: str, model: str) -> list[str]:
    """`cache_key` of each (topic, document) pair: sha256 of the JSON list [topic, doc, sha256(prompt),
    model] (as json.dumps writes it), the constant tail encoded once for the block."""
    from json.encoder import encode_basestring_ascii as enc
    tail = f", {enc(_text_hash(prompt))}, {enc(model)}]".encode("ascii")
    sha = hashlib.sha256
    return [sha(b"".join((b"[", enc(str(t)).encode("ascii"), b", ", enc(str(d)).encode("ascii"), tail)))
            .hexdigest()[:32] for t, d in zip(topics, docs)]


@functools.lru_cache(maxsize=8)
def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def render(template: str, topic: dict, passage: str) -> str:
    """The prompt: the template's {query}, {description}, {narrative}, {passage}, {topic} as tagged
    blocks, filled in one pass (other braces are kept)."""
    return prompts.relevance(template, topic, passage)


def parse_grade(answer: str, grades=(0, 1, 2, 3)) -> int | None:
    """The grade in an answer: the last `##final score: N`, or an answer that is only a number.
    None when there is none or it is not on the scale (never guessed)."""
    if not isinstance(answer, str):
        return None
    hits = _FINAL_RE.findall(answer)
    if hits:
        g = int(hits[-1])
    else:
        m = _BARE_RE.match(answer)
        if not m:
            return None
        g = int(m.group(1))
    return g if g in grades else None


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), for the estimate printed before a run."""
    return max(1, (len(text) + 3) // 4)


def client_of(settings: JudgeSettings, max_failures: int | None = None) -> ModelClient:
    """The model client for these settings (one per run: its early stop is shared by the run's calls)."""
    return ModelClient(settings.endpoint, settings.model, api_key=settings.api_key, timeout=settings.timeout,
                       deadline=settings.deadline, retries=settings.retries, backoff=settings.backoff,
                       max_bytes=settings.max_bytes,
                       max_failures=settings.max_failures if max_failures is None else max_failures,
                       max_tokens=settings.max_tokens, temperature=settings.temperature)


def check_settings(settings: JudgeSettings) -> None:
    """Refuse settings no run can work with (a clear message naming the option)."""
    if settings.concurrency < 1:
        raise CranfieldError("--concurrency must be at least 1")
    check_client(settings.endpoint, settings.timeout, settings.deadline, settings.retries, settings.backoff,
                 settings.max_bytes, settings.max_failures)


# ---------------------------------------------------------------------------- campaign side

# in UTF-8: \r \v \f \x1c-\x1e, U+0085, U+2028, U+2029 and U+FEFF (a byte-order mark)
_OTHER_LINE_ENDS = re.compile(rb"[\r\x0b\x0c\x1c\x1d\x1e]|\xc2\x85|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf")
_NOT_AN_OBJECT = re.compile(rb"^[^{\n]", re.M)        # a line that is neither empty nor starts an object


def _plain_docs(raw: bytes) -> list[dict] | None:
    """The records of a documents file read in one pass (`_plain_lines`) when that reads it as the line
    reader does: every line empty or one JSON object, no line end but \\n, no byte-order mark; else None."""
    if _OTHER_LINE_ENDS.search(raw) or _NOT_AN_OBJECT.search(raw):
        return None
    fast = _plain_lines(raw)
    if fast is None:
        return None
    return fast if len(fast) == raw.count(b"\n{") + raw.startswith(b"{") else None


def read_docs(root) -> dict[str, dict]:
    """docs/docs.jsonl as id -> record (title, text); empty when absent."""
    from engine.util.confine import campaign_path

    from ..formats.safeload import json_line
    p = campaign_path(root, "docs", "docs.jsonl")
    out: dict[str, dict] = {}
    if fs.is_file(p):
        raw = fs.read_bytes(p)
        fast = _plain_docs(raw)
        if fast is not None:
            for rec in fast:
                out[str(rec.get("id"))] = rec
            return out
        for ln, line in enumerate(fs.read_text(p, encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rec = json_line(line, p, ln)
                except json.JSONDecodeError:
                    raise CranfieldError(f"{p}:{ln}: not valid JSON (one document object per line)") from None
                out[str(rec.get("id"))] = rec
    return out


def pooled_pairs(camp, pool: str | None = None, depth: int | None = None, topics=None) -> pd.DataFrame:
    """The (topic, doc) pairs to judge: the named pool (pools/pool-NAME.tsv), else the newest pool,
    else the depth pool (pool.depth, default 100) of the pooled runs. Columns topic, doc."""
    from ..pooling import list_pools, pool_path, read_pool
    path = None
    if pool:
        path = pool_path(camp.root, pool)
    elif depth is None:
        files = list_pools(camp.root)
        path = files[-1] if files else None
    if path is not None:
        t = read_pool(path)
        t = t[t["order"] > 0].sort_values(["topic", "order"], kind="mergesort") if "order" in t else t
        pairs = t[["topic", "doc"]].astype(str)
    else:
        from ..ranking.join import ranked_rows
        k = int(depth or camp.pool()["depth"])
        runs = camp.runs()
        meta = camp.run_meta()
        pooled = set(meta.loc[meta["pooled"], "run"])
        r = runs[runs["run"].astype(str).isin(pooled)] if pooled else runs
        rows, rank = ranked_rows(r, k)
        sel = r.iloc[rows]
        pairs = pd.DataFrame({"topic": sel["topic"].astype(str).to_numpy(object),
                              "doc": sel["doc"].astype(str).to_numpy(object), "rank": rank})
        pairs = pairs.sort_values(["topic", "rank"], kind="mergesort")[["topic", "doc"]]
    if topics:
        pairs = pairs[pairs["topic"].isin(set(map(str, topics)))]
    return pairs.drop_duplicates().reset_index(drop=True)


_DECODE = json.JSONDecoder().raw_decode


def _plain_lines(raw: bytes) -> list[dict] | None:
    """The JSON objects of the lines of `raw`, decoded in one pass over the whole text (one raw_decode a
    line, no per-line decoding or surrogate scan); None when the text is not UTF-8 or holds a surrogate
    escape, for the line-by-line reader to word. A line that is not exactly one JSON value is skipped,
    as that reader skips it."""
    from ..formats.safeload import _SURROGATE_ESCAPE
    if _SURROGATE_ESCAPE.search(raw):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    out, i, n = [], 0, len(text)
    while i < n:
        j = text.find("\n", i)
        if j < 0:
            j = n
        if text[i] != "{":                       # blank, indented or not an object: the careful way
            line = text[i:j]
            if line.strip():
                try:
                    obj = json.loads(line.encode("utf-8"))   # as the line reader reads it (a BOM too)
                except ValueError:
                    obj = None
                if isinstance(obj, dict):
                    out.append(obj)
        else:
            try:
                obj, end = _DECODE(text, i)
            except ValueError:
                obj, end = None, j
            if end > j or text[end:j].strip(" \t\r"):   # ran past its line, or more after it: not one value
                obj = None
            if isinstance(obj, dict):
                out.append(obj)
        i = j + 1
    return out


def read_cache_lines(path: Path, raw: bytes | None = None) -> list[dict]:
    """The JSON objects of a reply cache (`raw`: its bytes, already read); lines that do not parse (a torn
    last line) are skipped, since a cached reply that is lost is asked again."""
    from ..formats.safeload import json_line
    out = []
    if raw is not None or fs.is_file(path):
        raw = fs.read_bytes(path) if raw is None else raw
        fast = _plain_lines(raw)
        if fast is not None:
            return fast
        for ln, line in enumerate(raw.split(b"\n"), start=1):
            if line.strip():
                try:
                    rec = json_line(line, path, ln)
                except ValueError:
                    continue           # a torn last line: the writer died; that judgment is redone
                if isinstance(rec, dict):
                    out.append(rec)
    return out


_JSON_TEXT = r'"(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+"'   # possessive: linear time'
_REPLY_LINE = re.compile(r'^\{"key": "([0-9a-f]{32})", "topic": %s, "doc": %s, "model": %s, "prompt_version": %s, '
                         r'"grade": (-?(?:0|[1-9][0-9]*)), "answer": (%s), "ts": %s\}\n'
                         % ((_JSON_TEXT,) * 4 + (_JSON_TEXT,) * 2), re.M)


def _plain_replies(raw: bytes) -> dict[str, tuple[int, str]] | None:
    """key -> (grade, answer) of a reply cache whose every line is a reply line as `run_auto_judge` writes
    it (strings in JSON's own grammar, no surrogate escape), read by one regular expression; None for any
    other text (read line by line then)."""
    from ..formats.safeload import _SURROGATE_ESCAPE, every_line
    found = None if _SURROGATE_ESCAPE.search(raw) else every_line(raw, _REPLY_LINE)
    if found is None:
        return None
    return {k: (int(g), json.loads(a) if "\\" in a else a[1:-1]) for k, g, a in found}


@dataclass
class Plan:
    """What a run would do, before any call: pairs, how many are done, cached, to ask; token estimate."""

    source: str
    pairs: list            # (topic, doc, key, prompt) still to ask
    cached: list           # (topic, doc, key, grade, answer) in the cache, not yet in the source log
    already: int
    total: int
    prompt_tokens: int
    max_completion_tokens: int
    empty: int = 0         # pairs not asked: no document text
    prompt_for: Callable[[str, str], str] | None = None   # (topic, doc) -> prompt, for pairs whose prompt is None


def plan(camp, source: str, settings: JudgeSettings, pairs: pd.DataFrame) -> Plan:
    """Sort the pairs into done (in the source log), cached and to ask; estimate the tokens."""
    from ..judgments.sources import check_name, sources_dir
    check_name(source)
    docs_box: list = []               # docs/docs.jsonl, read when a pair is first asked (a rerun from the cache never does)

    def docs_() -> dict:
        if not docs_box:
            docs = read_docs(camp.root)
            from ..judgments.canaries import read_canaries        # canaries planted in pools: judged as any document
            for c in read_canaries(camp.root).to_dict("records"):
                docs.setdefault(c["doc"], {"id": c["doc"], "title": c["title"], "text": c["text"]})
            docs_box.append(docs)
        return docs_box[0]
    tt = camp.topics()
    topics = {str(r["topic"]): r for r in tt.to_dict("records")} if len(tt) else {}
    done = {r.get("key") for r in read_cache_lines(sources_dir(camp.root) / f"{source}.jsonl") if r.get("op", "judge") == "judge"}
    cache_p = camp.path("cache", CACHE_NAME)
    raw = fs.read_bytes(cache_p) if fs.is_file(cache_p) else b""
    plain = _plain_replies(raw)          # key -> (grade, answer) when every line is a plain reply line
    cache = plain if plain is not None else {r["key"]: r for r in read_cache_lines(cache_p, raw) if "key" in r}
    todo, cached, already, ptok = [], [], 0, 0
    missing_docs = empty = 0

    def prompt_for(t: str, d: str) -> str:
        doc = docs_().get(d)
        passage = (f"{doc.get('title', '')}\n{doc.get('text', '')}".strip() if doc else "")
        return render(settings.prompt, topics.get(t, {"topic": t, "title": t}), passage)
    # a prompt's length without rendering it (for the token estimate): the topic's prompt with an empty
    # passage, plus the escaped passage at each {passage} placeholder
    passages_in = prompts.placeholders(settings.prompt, "passage")
    empty_len: dict = {}

    def prompt_len(t: str, passage: str) -> int:
        n = empty_len.get(t)
        if n is None:
            n = empty_len[t] = len(render(settings.prompt, topics.get(t, {"topic": t, "title": t}), ""))
        return n + passages_in * prompts.escaped_length(passage)
    tops, dcs = pairs["topic"].tolist(), pairs["doc"].tolist()
    for t, d, key in zip(tops, dcs, cache_keys(tops, dcs, settings.prompt, settings.model)):
        if key in done:
            already += 1
            continue
        if key in cache:
            c = cache[key]
            cached.append((t, d, key, *c) if plain is not None else (t, d, key, int(c["grade"]), c.get("answer", "")))
            continue
        doc = docs_().get(d)
        if doc is None:
            missing_docs += 1
        passage = (f"{doc.get('title', '')}\n{doc.get('text', '')}".strip() if doc else "")
        if not passage and not settings.judge_empty:
            empty += 1
            continue
        ptok += max(1, (prompt_len(t, passage) + 3) // 4)       # estimate_tokens of the rendered prompt
        todo.append((t, d, key, None))   # rendered again when asked: the prompts are never all held
    if missing_docs and docs_box and docs_box[0]:
        camp.warnings.add(str(camp.root / "docs" / "docs.jsonl"), None,
                          f"{missing_docs} pooled document(s) have no text in the document store; "
                          + ("judged on an empty passage" if settings.judge_empty
                             else "not sent (--judge-empty sends them)"))
    return Plan(source, todo, cached, already, len(pairs), ptok, settings.max_tokens * len(todo), empty,
                prompt_for)


def in_blocks(lines: list[bytes], size: int = 8192):
    """Complete lines joined `size` at a time, for one write() a block (one block held at a time)."""
    for i in range(0, len(lines), size):
        yield b"".join(lines[i:i + size])


def cached_lines(cached: list, gm: dict, base: dict, ts: str) -> list[bytes]:
    """The source-log lines of replies taken from the cache, written at `ts`: byte for byte
    `record_lines` of {topic, doc, grade, **base, key, ts, seconds: None, cached: True} (built from one
    encoded middle part, not one json.dumps a record)."""
    from json.encoder import encode_basestring
    from ..judgments.log import record_lines
    if not all(isinstance(v, str) for v in base.values()):
        return record_lines([{"topic": t, "doc": d, "grade": gm.get(int(g), int(g)), **base, "key": k, "ts": ts,
                              "seconds": None, "cached": True} for t, d, k, g, _ in cached])
    mid = json.dumps(base, ensure_ascii=False, separators=(", ", ": "))[1:-1]
    tail = f', "ts": {encode_basestring(ts)}, "seconds": null, "cached": true}}\n'
    out = []
    for t, d, k, g, _ in cached:
        line = (f'{{"topic": {encode_basestring(str(t))}, "doc": {encode_basestring(str(d))}, '
                f'"grade": {int(gm.get(int(g), int(g)))}, {mid}, "key": {encode_basestring(str(k))}{tail}')
        out.append(line.encode("utf-8"))
    return out


def run_auto_judge(camp, source: str, settings: JudgeSettings, pairs: pd.DataFrame | None = None,
                   progress: Callable[[int, int, AutoJudgeResult], None] | None = None,
                   the_plan: Plan | None = None) -> AutoJudgeResult:
    """Judge the pooled pairs with the model; returns counts. Grades go to the source's log."""
    from ..judgments.commit import GroupCommit
    from ..judgments.log import append_records, locked_file, now_ts, write_lines
    from ..judgments.sources import sources_dir
    check_settings(settings)

    def append_lines(path, lines: list[bytes]) -> None:
        with locked_file(path) as fd:            # one write of complete lines (a torn tail is cut on the next open)
            write_lines(fd, path, in_blocks(lines))
    pl = the_plan or plan(camp, source, settings, pairs if pairs is not None else pooled_pairs(camp))
    res = AutoJudgeResult(total=pl.total, already=pl.already, empty=pl.empty)
    log_p = sources_dir(camp.root) / f"{source}.jsonl"
    err_p = sources_dir(camp.root) / f"{source}.errors.jsonl"
    cache_p = camp.path("cache", CACHE_NAME)
    lock = threading.Lock()
    client = client_of(settings)
    base = {"assessor": source, "source": source, "kind": "auto", "model": settings.model,
            "prompt_version": settings.prompt_version, "endpoint": settings.endpoint, "op": "judge"}

    gm = {int(k): int(v) for k, v in settings.grade_map.items()}

    scale = tuple(settings.scale) if settings.scale is not None else tuple(sorted(camp.scale()))

    def off_scale(g: int) -> str | None:
        mapped = gm.get(int(g), int(g))
        if not scale or mapped in scale:
            return None
        top = max(scale)
        return (f"grade {mapped} is not on the campaign's scale ({', '.join(map(str, scale))}); "
                f"not recorded: map the model's grades with --grade-map {mapped}={top}")

    def record(t, d, key, g, seconds=None, tokens=(None, None), ts=None) -> dict:
        rec = {"topic": t, "doc": d, "grade": gm.get(int(g), int(g)), **base, "key": key, "ts": ts or now_ts(),
               "seconds": seconds, "prompt_tokens": tokens[0], "completion_tokens": tokens[1]}
        if int(g) in gm:
            rec["model_grade"] = int(g)
        return rec

    from json.encoder import encode_basestring as enc
    plain = all(type(v) is str for v in (*base.values(), settings.model, settings.prompt_version))
    mid = json.dumps(base, ensure_ascii=False, separators=(", ", ": "))[1:-1]
    cache_mid = f'"model": {enc(settings.model)}, "prompt_version": {enc(settings.prompt_version)}' if plain else ""

    def model_grade(g: int) -> str:
        return f', "model_grade": {int(g)}' if int(g) in gm else ""

    def judged() -> None:            # in the writer thread, once the grade is on disk
        with lock:
            res.judged += 1

    why_of = {g: off_scale(g) for g in {c[3] for c in pl.cached}}      # each grade checked once
    res.failed.extend((t, d, why_of[g]) for t, d, _k, g, _a in pl.cached if why_of[g])
    pl_cached = [c for c in pl.cached if not why_of[c[3]]] if any(why_of.values()) else pl.cached
    if pl_cached:
        append_lines(log_p, cached_lines(pl_cached, gm, base, now_ts()))
        res.from_cache = len(pl_cached)

    def one(item):
        t, d, key, prompt = item
        if prompt is None:
            prompt = pl.prompt_for(t, d)

        def failure(attempt: int, reason: str, answer: str | None) -> None:
            rec = {"topic": t, "doc": d, "key": key, "model": settings.model, "attempt": attempt,
                   "error": reason[:500], "ts": now_ts()}
            if answer is not None:
                rec["answer"] = answer[-2000:]
            append_records(err_p, [rec])

        out = client.ask(prompt, lambda a: parse_grade(a, settings.grades), failure)
        with lock:
            tally(res, out)
        if not out.ok:
            with lock:
                if out.stopped and not out.requests:
                    res.not_tried += 1
                else:
                    res.failed.append((t, d, out.reason))
            return
        g = out.value
        why = off_scale(g)
        if why:                      # a refusal, not retried: the model answered, off the campaign's scale
            failure(out.requests, why, out.text)
            with lock:
                res.failed.append((t, d, why))
            return
        ts = now_ts()
        if plain and type(t) is str and type(d) is str:     # the lines, encoded here (byte for byte record_lines)
            commit.submit_lines([(cache_p, [f'{{"key": {enc(key)}, "topic": {enc(t)}, "doc": {enc(d)}, {cache_mid}, '
                                            f'"grade": {int(g)}, "answer": {enc(out.text[-2000:])}, "ts": {enc(ts)}}}\n'
                                            .encode("utf-8")]),
                                 (log_p, [f'{{"topic": {enc(t)}, "doc": {enc(d)}, "grade": {gm.get(int(g), int(g))}, '
                                          f'{mid}, "key": {enc(key)}, "ts": {enc(ts)}, "seconds": {out.seconds!r}, '
                                          f'"prompt_tokens": {int(out.prompt_tokens)}, "completion_tokens": '
                                          f'{int(out.completion_tokens)}{model_grade(g)}}}\n'.encode("utf-8")])],
                                judged)
            return
        commit.submit([(cache_p, [{"key": key, "topic": t, "doc": d, "model": settings.model,
                                   "prompt_version": settings.prompt_version, "grade": g,
                                   "answer": out.text[-2000:], "ts": ts}]),
                       (log_p, [record(t, d, key, g, out.seconds, (out.prompt_tokens, out.completion_tokens), ts)])],
                      judged)

    n = len(pl.pairs)
    if progress:
        progress(0, n, res)
    if n:
        commit = GroupCommit()
        try:
            in_parallel(one, pl.pairs, settings.concurrency,
                        lambda done: progress and done < n and progress(done, n, res))
        finally:
            commit.close()
        if progress:
            progress(n, n, res)
    res.stopped = client.stopped is not None
    res.stop_reason = client.stopped
    return res
