"""Nugget creation by the endpoint, iteratively as AutoNuggetizer does: the topic's passages are read in
windows of `window`; for each window the model gets the question, the nuggets found so far and the
passages, and replies the updated list (at most `max_nuggets`); then the nuggets are labelled vital or
okay in batches of `batch`. Every reply is cached (`.cranfield-cache/nugget-create.jsonl`, keyed by the
prompt and the model), so a rerun or a resumed run replays the steps already answered without a request.
The nuggets go to the nugget store with provenance `llm` (model, prompt version), ready for people to
edit (they then become post-edited). A reply that does not parse is retried, never guessed."""
from __future__ import annotations

import json
import re
import time
import urllib.error
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CranfieldError
from ..judging.auto import JudgeSettings, read_cache_lines, chat
from ..judgments.log import append_records, now_ts
from .auto import key_of
from .store import add_nuggets, current_nuggets

CREATE_PROMPT_VERSION = "nugget-create-v1"
CREATE_PROMPT = """Update a list of nuggets: atomic facts that a good answer to the question should contain.
Keep the nuggets found so far, add the new facts the passages state, at most {max} nuggets in all, each
one short sentence.

Question: {query}

Nuggets so far:
{nuggets}

Passages:
{passages}

Reply with only the updated list as a JSON list of strings."""

IMPORTANCE_PROMPT = """Label each nugget vital (a good answer must contain it) or okay (good to have).

Question: {query}

Nuggets:
{nuggets}

Reply with only a list of {count} labels, one per nugget in the order given, for example ["vital", "okay"]."""

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
    cache_p, cache = _cache(root)
    have = set(current_nuggets(root)["topic"])
    res = CreateResult(topics=len(passages))

    def ask(prompt: str, parse):
        key = key_of("create", prompt, settings.model)
        if key in cache:
            got = parse(cache[key])
            if got is not None:
                res.from_cache += 1
                return got
        reason = ""
        for attempt in range(settings.retries + 1):
            if attempt:
                time.sleep(min(30.0, settings.backoff * 2 ** (attempt - 1)))
            try:
                reply, usage = chat(settings, prompt)
            except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as exc:
                res.calls += 1
                reason = f"request failed: {exc}"[:300]
                continue
            res.calls += 1
            res.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            res.completion_tokens += int(usage.get("completion_tokens") or 0)
            got = parse(reply)
            if got is not None:
                append_records(cache_p, [{"key": key, "model": settings.model, "reply": reply, "ts": now_ts()}])
                cache[key] = reply
                return got
            res.unparsed += 1
            reason = "unparseable reply"
        raise CranfieldError(reason)

    def one(topic: str) -> None:
        if topic in have and not redo:
            res.skipped.append(topic)
            return
        q = queries.get(topic, topic)
        texts = passages[topic]
        nuggets: list[str] = []
        try:
            for i in range(0, len(texts), window):
                block = "\n".join(f"[{j + 1}] {t}" for j, t in enumerate(texts[i:i + window]))
                listing = "\n".join(f"- {n}" for n in nuggets) or "(none yet)"
                prompt = (CREATE_PROMPT.replace("{max}", str(max_nuggets)).replace("{query}", q)
                          .replace("{nuggets}", listing).replace("{passages}", block))
                nuggets = ask(prompt, lambda r: parse_nugget_list(r, max_nuggets))
            nuggets = list(dict.fromkeys(nuggets))
            imps: list[str] = []
            for i in range(0, len(nuggets), batch):
                part = nuggets[i:i + batch]
                prompt = (IMPORTANCE_PROMPT.replace("{query}", q).replace("{count}", str(len(part)))
                          .replace("{nuggets}", "\n".join(f"{j + 1}. {n}" for j, n in enumerate(part))))
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
    return res
