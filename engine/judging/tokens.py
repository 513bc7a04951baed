"""Assessor tokens of `cranfield serve`: the organizer makes one per assessor (shown once), lists and
revokes them; the browser desk admits a request only with a token in force, and the token names the
assessor every judgment, lease and log line of that session carries.

Tokens live in `judgments/serve-tokens.json` (engine.util.confine CAMPAIGN_PATHS["serve_tokens"], never
read as judgments): per token its id, assessor, the sha256 of the token (the token itself is never
stored), when it was made and, once revoked, when. Changes are written whole (atomic replace) under the
campaign lock; `verify` re-reads the file whenever it changed, so a revocation counts at the next request.
"""
from __future__ import annotations

from ..util import fs

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import CranfieldError

TOKENS_NAME = "serve-tokens.json"        # engine.util.confine CAMPAIGN_PATHS["serve_tokens"]
PREFIX = "cft_"                           # what a Cranfield token looks like (found by secret scanners)
MAX_ASSESSOR_CHARS = 64


@dataclass(frozen=True)
class Token:
    """One assessor token as stored (its hash, never the token)."""
    id: str
    assessor: str
    sha256: str
    created: float
    revoked: float | None = None

    @property
    def active(self) -> bool:
        return self.revoked is None


def tokens_path(root) -> Path:
    """judgments/serve-tokens.json of the campaign, confined."""
    from ..util.confine import campaign_path
    return campaign_path(root, "serve_tokens")


def check_assessor(name: object) -> str:
    """`name` when it may name an assessor of the browser desk (1 to 64 characters: letters, digits,
    `.`, `_`, `-`, `@`), else a CranfieldError stating the rule."""
    ok = isinstance(name, str) and 0 < len(name) <= MAX_ASSESSOR_CHARS and name[0] not in ".-" and all(
        c.isascii() and (c.isalnum() or c in "._-@") for c in name)
    if not ok:
        from ..util.names import shown
        raise CranfieldError(f"assessor '{shown(str(name)[:80])}': an assessor of the browser desk is 1 to "
                             f"{MAX_ASSESSOR_CHARS} characters: ASCII letters, digits, '.', '_', '-', '@' "
                             f"(not starting with '.' or '-')")
    return name


def digest(token: str) -> str:
    """The sha256 (hex) a token is stored and compared as."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def _parse(path: Path, data: bytes) -> list[Token]:
    try:
        doc = json.loads(data.decode("utf-8")) if data.strip() else {"tokens": []}
        rows = doc["tokens"]
        return [Token(str(r["id"]), str(r["assessor"]), str(r["sha256"]), float(r["created"]),
                      None if r.get("revoked") is None else float(r["revoked"])) for r in rows]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise CranfieldError(f"{path}: not a token file of cranfield serve ({type(exc).__name__}: {exc}); "
                             f"move it aside and make the tokens again (cranfield serve token add)") from None


def read_tokens(root) -> list[Token]:
    """Every token of the campaign (revoked ones included), oldest first; [] without a token file."""
    p = tokens_path(root)
    try:
        data = fs.read_bytes(p)
    except FileNotFoundError:
        return []
    return _parse(p, data)


def _write(root, tokens: list[Token]) -> None:
    from ..util.atomic import atomic_write
    rows = [{"id": t.id, "assessor": t.assessor, "sha256": t.sha256, "created": t.created, "revoked": t.revoked}
            for t in tokens]
    p = tokens_path(root)
    fs.makedirs(p.parent)
    atomic_write(p, (json.dumps({"tokens": rows}, indent=1) + "\n").encode("utf-8"))


def add_token(root, assessor: str, now: float | None = None) -> tuple[Token, str]:
    """Make a token for `assessor`: (its stored record, the token itself, to hand over once)."""
    from ..util.atomic import campaign_lock
    check_assessor(assessor)
    token = PREFIX + secrets.token_urlsafe(32)
    with campaign_lock(root):
        have = read_tokens(root)
        ids = {t.id for t in have}
        h = digest(token)
        tid = next(h[:n] for n in range(8, 65) if h[:n] not in ids)
        rec = Token(tid, assessor, h, time.time() if now is None else now)
        _write(root, have + [rec])
    return rec, token


def revoke(root, *, assessor: str | None = None, token_id: str | None = None, now: float | None = None) -> list[Token]:
    """Revoke the tokens in force of `assessor`, or the one with id `token_id`: the records revoked
    (a CranfieldError when none matches)."""
    from ..util.atomic import campaign_lock
    if (assessor is None) == (token_id is None):
        raise CranfieldError("revoke: give --assessor NAME or --id ID (one of the two)")
    t = time.time() if now is None else now
    with campaign_lock(root):
        have = read_tokens(root)
        hit = [x for x in have if x.active and (x.assessor == assessor if assessor is not None else x.id == token_id)]
        if not hit:
            from ..util.names import shown
            what = f"assessor {shown(assessor)}" if assessor is not None else f"id {shown(token_id)}"
            raise CranfieldError(f"no token in force for {what} in {tokens_path(root)} "
                                 f"(cranfield serve token list shows them)")
        gone = {x.id for x in hit}
        _write(root, [Token(x.id, x.assessor, x.sha256, x.created, t) if x.id in gone else x for x in have])
    return [x for x in read_tokens(root) if x.id in gone]


_CACHE: dict[str, tuple[tuple, list[Token]]] = {}


def verify(root, token: str | None) -> Token | None:
    """The token record in force that `token` matches, else None (also for a missing, malformed or
    revoked token). The file is read again whenever its size or time changed."""
    if not token or not isinstance(token, str) or len(token) > 200:
        return None
    h = digest(token)
    for t in _current(root):
        if t.active and hmac.compare_digest(t.sha256, h):
            return t
    return None


def _current(root) -> list[Token]:
    """read_tokens(root), read again only when the file's time, size or inode changed."""
    p = tokens_path(root)
    try:
        st = p.stat()
    except FileNotFoundError:
        return []
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _CACHE.get(str(p))
    if hit is None or hit[0] != stamp:
        hit = _CACHE[str(p)] = (stamp, read_tokens(root))
    return hit[1]


def token_active(root, token_id: str) -> bool:
    """The token with id `token_id` is in force (not revoked, still in the file)."""
    return any(t.id == token_id and t.active for t in _current(root))
