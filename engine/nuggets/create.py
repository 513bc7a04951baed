"""Nugget creation by the endpoint, iteratively as AutoNuggetizer does: the topic's passages are read in
windows of `window`; for each window the model gets the question, the nuggets found so far and the
passages, and replies the updated list (at most `max_nuggets`); then the nuggets are labelled vital or
okay in batches of `batch`. Every reply is cached (`.cranfield-cache/nugget-create.jsonl`, keyed by the
prompt and the model), so a rerun or a resumed run replays the steps already answered without a request.
The nuggets go to the nugget store with provenance `llm` (model, prompt version), ready for people to
edit (they then become post-edited). A reply that does not parse is retried, never guessed. The calls go
through the one model client (`engine.util.modelclient`); after `max_failures` failed requests in a row
the run stops early and says why. The prompts are built by `engine.util.prompts` (every field a block)."""
from __future__ import annotations

import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CranfieldError
from ..judging.auto import JudgeSettings, check_settings, client_of, read_cache_lines
from ..util import prompts
from ..util.modelclient import tally
from ..judgments.log import append_records, now_ts
from .auto import key_of
from .store import add_nuggets, current_nuggets

CREATE_PROMPT_VERSION = prompts.CREATE_VERSION
CREATE_PROMPT = prompts.CREATE
IMPORTANCE_PROMPT = prompts.IMPORTANCE

CACHE_NAME = "nugget-create.jsonl"
_LIST_RE = re.compile(r"\[[^\[\]]*\]", re.S)


def parse_nugget_list(reply: str, max_nuggets: int) -> list[str] | None:
    """The last JSON list of non-empty one-line strings in the reply (at most `max_nuggets`), else None."""
    if not isinstance(reply, str):
        return None
    for m in reversed(_LIST_RE.findall(reply)):
        try:
            v = json.loads(m)
        except ValueError:
            continue
        if (isinstance(v, list) and len(v) <= max_nuggets and
                all(isinstance(x, str) and x.strip() and "\n" not in x for x in v)):
            return [x.strip() for x in v]
        return None
    return None


def parse_importance(reply: str, count: int) -> list[str] | None:
    """Exactly `count` labels vital / okay from the reply's last list, else None."""
    lists = re.findall(r"\[([^\[\]]*)\]", reply or "")
    if not lists:
        return None
    labels = re.findall(r"\b(vital|okay)\b", lists[-1])
    rest = re.sub(r"\b(vital|okay)\b", "", lists[-1])
    return labels if len(labels) == count and not re.sub(r"[\s,'\"]", "", rest) else None


@dataclass
class CreateResult:
    topics: int = 0
    created: dict = field(default_factory=dict)     # topic -> number of nuggets
    skipped: list = field(default_factory=list)     # topics that already had nuggets
    calls: int = 0
    from_cache: int = 0
    unparsed: int = 0
    failed: list = field(default_factory=list)      # (topic, reason)
    http_errors: int = 0
    stopped: str | None = None                      # why the run stopped early
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _cache(root) -> tuple[Path, dict]:
    from ..util.confine import campaign_path
    p = campaign_path(root, "cache", CACHE_NAME)
    return p, {r["key"]: r["reply"] for r in read_cache_lines(p) if "key" in r and isinstance(r.get("reply"), str)}


def create_nuggets(root, settings: JudgeSettings, passages: dict[str, list[str]], queries: dict[str, str],
                   window: int = 10, max_nuggets: int = 30, batch: int = 10,
                   prompt_version: str = CREATE_PROMPT_VERSION, redo: bool = False) -> CreateResult:
    """Create nuggets for each topic of `passages` (topic -> passage texts) and store them."""
    if window < 1 or batch < 1 or max_nuggets < 1:
        raise CranfieldError("--window, --batch and --max-nuggets must be at least 1")
    check_settings(settings)
    cache_p, cache = _cache(root)
    have = set(current_nuggets(root)["topic"])
    res = CreateResult(topics=len(passages))

    client = client_of(settings)
    lock = threading.Lock()

    def ask(prompt: str, parse):
        key = key_of("create", prompt, settings.model)
        if key in cache:
            got = parse(cache[key])
            if got is not None:
                with lock:
                    res.from_cache += 1
                return got
        out = client.ask(prompt, parse)
        with lock:
            tally(res, out)
        if not out.ok:
            raise CranfieldError(out.reason)
        append_records(cache_p, [{"key": key, "model": settings.model, "reply": out.text, "ts": now_ts()}])
        cache[key] = out.text
        return out.value

    def one(topic: str) -> None:
        if topic in have and not redo:
            res.skipped.append(topic)
            return
        q = queries.get(topic, topic)
        texts = passages[topic]
        nuggets: list[str] = []
        try:
            for i in range(0, len(texts), window):
                prompt = prompts.create(CREATE_PROMPT, q, nuggets, texts[i:i + window], max_nuggets)
                nuggets = ask(prompt, lambda r: parse_nugget_list(r, max_nuggets))
            nuggets = list(dict.fromkeys(nuggets))
            imps: list[str] = []
            for i in range(0, len(nuggets), batch):
                part = nuggets[i:i + batch]
                prompt = prompts.importance(IMPORTANCE_PROMPT, q, part)
                imps += ask(prompt, lambda r, k=len(part): parse_importance(r, k))
        except CranfieldError as exc:
            res.failed.append((topic, str(exc)))
            return
        if nuggets:
            add_nuggets(root, topic, list(zip(nuggets, imps)), by=f"llm:{settings.model}", provenance="llm",
                        model=settings.model, prompt_version=prompt_version)
        res.created[topic] = len(nuggets)

    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as ex:
        list(ex.map(one, sorted(passages)))
    res.stopped = client.stopped
    return res
