"""The one client for every model call (relevance judging, nugget creation, nugget assignment, citation
support): an OpenAI-compatible chat-completions endpoint over HTTP(S), standard library only. http.client
opens each thread's kept-alive connection (TLS, a proxy's CONNECT tunnel); each request is then written in
one send and its reply read here, in pieces, with http.client's errors and line and header limits.

What it bounds, retries and refuses (docs/reliability.md, "The network client"):
- a redirect is never followed: a 3xx is a failed request naming its Location, so the API key is sent
  only to the configured origin (scheme, host, port); an https endpoint behind a proxy is reached through
  a CONNECT tunnel, a plain http endpoint is always reached directly;
- a reply is read in pieces and refused past `max_bytes` (Content-Length checked first, chunked or
  unsized bodies counted while read);
- one request ends by `timeout` seconds (connect, send, headers, body; a watchdog shuts the socket), and
  one call, all its retries and waits included, by `deadline` seconds;
- every transport error (refused, reset, timeout, IncompleteRead, bad status line, TLS), every malformed
  reply (not JSON, missing fields, token counts that are not whole numbers in 0..10^9) and every answer
  the caller's `parse` refuses is retried with exponential backoff, then returned as a failure with its
  reason: `ask` never raises for what the endpoint does;
- after `max_failures` failed requests in a row (any call, any thread) the client stops: later calls
  return at once and `stopped` says why.
"""
from __future__ import annotations

import heapq
import http.client
import json
import math
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import CranfieldError

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_DEADLINE = 300.0
DEFAULT_MAX_FAILURES = 10
MAX_TOKEN_COUNT = 10 ** 9
_PIECE = 65536


class ReplyError(Exception):
    """One request that gave no usable reply; the message says why."""


@dataclass
class Outcome:
    """What one call (a request and its retries) gave."""

    ok: bool = False
    value: Any = None               # what `parse` made of the answer
    text: str = ""                  # the last answer text received (also of a refused answer)
    reason: str = ""                # why the call failed (the last failure)
    requests: int = 0
    transport_failures: int = 0     # requests without a usable reply
    parse_failures: int = 0         # answers `parse` refused
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0            # time of the request that succeeded
    stopped: bool = False           # the client had stopped early before this call finished


def chat_url(endpoint: str) -> str:
    """The chat-completions URL of an endpoint's base URL (…/v1 added when missing)."""
    e = endpoint.rstrip("/")
    if e.endswith("/chat/completions"):
        return e
    if not e.endswith("/v1"):
        e += "/v1"
    return e + "/chat/completions"


def _positive(v, flag: str, what: str) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise CranfieldError(f"{flag} {v}: give a positive number of {what}")


def check_client(endpoint: str, timeout: float, deadline: float, retries: int, backoff: float,
                 max_bytes: int, max_failures: int) -> tuple[str, str, int]:
    """Refuse settings no call can work with (naming the option); the endpoint's origin."""
    _positive(timeout, "--timeout", "seconds for one request")
    _positive(deadline, "--deadline", "seconds for one call with all its retries")
    if not isinstance(retries, int) or retries < 0:
        raise CranfieldError("--retries must be 0 or more")
    if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not (math.isfinite(backoff) and backoff >= 0):
        raise CranfieldError("--backoff must be a number of seconds >= 0")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1024:
        raise CranfieldError(f"--max-reply-bytes {max_bytes}: give a whole number of bytes, at least 1024")
    if isinstance(max_failures, bool) or not isinstance(max_failures, int) or max_failures < 0:
        raise CranfieldError("--max-failures must be 0 (never stop) or more")
    parts = urllib.parse.urlsplit(chat_url(str(endpoint)))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CranfieldError(f"--endpoint {endpoint!r}: give an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    if parts.username is not None or parts.password is not None:
        raise CranfieldError("--endpoint: no user or password in the URL (it is recorded with every "
                             "judgment); put the key in the variable named by --api-key-env")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise CranfieldError(f"--endpoint {endpoint!r}: the port is not a number from 0 to 65535") from None
    return parts.scheme, parts.hostname, port


def _count(usage: dict, name: str) -> int:
    v = usage.get(name)
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_TOKEN_COUNT:
        raise ReplyError(f"usage.{name} {str(v)[:40]!r} is not a whole number from 0 to {MAX_TOKEN_COUNT}")
    return v


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_reply(raw: bytes) -> tuple[str, int, int]:
    """(answer text, prompt tokens, completion tokens) of a chat-completions reply body; ReplyError
    when it is not one."""
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReplyError(f"the reply is not JSON ({type(exc).__name__}: {str(exc)[:120]})") from None
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ReplyError("the reply has no choices[0].message.content") from None
    if not isinstance(text, str):
        raise ReplyError(f"choices[0].message.content is {type(text).__name__}, not text")
    usage = data.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise ReplyError("usage is not an object")
    return text, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")


class _Stale(Exception):
    """The endpoint closed the connection without answering (a kept-alive one it had dropped)."""


class _Watchdog:
    """One thread per client that calls each armed function at its time (time.monotonic()), unless
    disarmed first: the deadline of every request without a thread of its own."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list = []
        self._armed: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def arm(self, when: float, fn: Callable[[], None]) -> int:
        with self._cv:
            self._next += 1
            token = self._next
            self._armed[token] = fn
            heapq.heappush(self._heap, (when, token))
            if len(self._heap) > 4 * len(self._armed) + 1024:       # drop the disarmed (bounded memory)
                self._heap = [e for e in self._heap if e[1] in self._armed]
                heapq.heapify(self._heap)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="modelclient-watchdog", daemon=True)
                self._thread.start()
            elif self._heap[0][1] == token:
                self._cv.notify()
        return token

    def disarm(self, token: int) -> None:
        with self._cv:
            self._armed.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)                # disarmed: dropped lazily
                if not self._heap:
                    self._cv.wait()
                    continue
                when, token = self._heap[0]
                left = when - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                heapq.heappop(self._heap)
                fn = self._armed.pop(token, None)
            if fn is not None:
                fn()


_MAXLINE = 65536                # as http.client: a longer status or header line is refused
_MAXHEADERS = 100


class _Wire:
    """The reply to one request, read from its socket in pieces of up to 64 KiB, each read bounded by the
    request's deadline; errors are http.client's (their names are the reasons recorded)."""

    __slots__ = ("sock", "buf", "until", "late")

    def __init__(self, sock, until: float, late: str) -> None:
        self.sock, self.buf, self.until, self.late = sock, bytearray(), until, late

    def _more(self) -> bool:
        left = self.until - time.monotonic()
        if left <= 0:
            raise ReplyError(self.late)
        self.sock.settimeout(left)
        piece = self.sock.recv(_PIECE)
        self.buf += piece
        return bool(piece)

    def line(self, what: str) -> bytes:
        """The next line with its end (what is left at the end of the stream: maybe empty)."""
        seen = 0
        while True:
            i = self.buf.find(b"\n", seen)
            if i >= 0:
                if i >= _MAXLINE:
                    raise http.client.LineTooLong(what)
                out = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                return out
            if len(self.buf) > _MAXLINE:
                raise http.client.LineTooLong(what)
            seen = len(self.buf)
            if not self._more():
                out = bytes(self.buf)
                self.buf.clear()
                return out

    def take(self, n: int) -> bytes:
        """The next `n` bytes (fewer only when the stream ends)."""
        while len(self.buf) < n and self._more():
            pass
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def head(self) -> tuple[str, int, str, dict[str, str]]:
        """(version, status, reason, headers with lower-case names) of the reply, interim 1xx skipped."""
        while True:
            raw = self.line("status line")
            if not raw:
                raise http.client.RemoteDisconnected("Remote end closed connection without response")
            line = str(raw, "iso-8859-1")
            parts = line.split(None, 2)
            version = parts[0] if parts else ""
            if not version.startswith("HTTP/") or len(parts) < 2:
                raise http.client.BadStatusLine(line)
            try:
                status = int(parts[1])
            except ValueError:
                raise http.client.BadStatusLine(line) from None
            if not 100 <= status <= 999:
                raise http.client.BadStatusLine(line)
            headers: dict[str, str] = {}
            count = 0
            while True:
                h = self.line("header line")
                if h in (b"\r\n", b"\n", b""):
                    break
                count += 1
                if count > _MAXHEADERS:
                    raise http.client.HTTPException(f"got more than {_MAXHEADERS} headers")
                name, _, value = str(h, "iso-8859-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            if 100 <= status < 200 and status != 101:
                continue                          # 100 Continue and the like: the reply follows
            return version, status, (parts[2].strip() if len(parts) > 2 else ""), headers

    def body(self, status: int, headers: dict[str, str], max_bytes: int) -> tuple[bytes, bool]:
        """(the body, whether the stream was read to its end), refused past `max_bytes`: an announced
        length first, a chunked or unsized body while read."""
        longer = (f"the reply is longer than {max_bytes} bytes (--max-reply-bytes); stopped reading")
        if status in (204, 304) or status < 200:
            return b"", False
        if headers.get("transfer-encoding", "").lower() == "chunked":
            pieces, got = [], 0
            while True:
                size_line = self.line("chunk size")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise http.client.IncompleteRead(b"".join(pieces)) from None
                if size < 0:
                    raise http.client.IncompleteRead(b"".join(pieces))
                if size == 0:
                    while self.line("trailer line") not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(pieces), False
                if got + size > max_bytes:
                    raise ReplyError(longer)
                piece = self.take(size)
                if len(piece) < size:
                    raise ReplyError(f"IncompleteRead: {got + len(piece)} bytes read, {size - len(piece)} more expected")
                pieces.append(piece)
                got += size
                self.take(2)                      # the chunk's CRLF
        length = None
        try:
            length = int(headers["content-length"])
        except (KeyError, ValueError):
            pass
        if length is not None and length >= 0:
            if length > max_bytes:
                raise ReplyError(f"the reply announces {length} bytes, more than {max_bytes} "
                                 f"(--max-reply-bytes); not read")
            out = self.take(length)
            if len(out) < length:                 # the connection closed before Content-Length bytes
                raise ReplyError(f"IncompleteRead: {len(out)} bytes read, {length - len(out)} more expected")
            return out, False
        while len(self.buf) <= max_bytes and self._more():     # no length: the body ends with the stream
            pass
        if len(self.buf) > max_bytes:
            raise ReplyError(longer)
        out = bytes(self.buf)
        self.buf.clear()
        return out, True


class ModelClient:
    """Chat completions from one endpoint; thread-safe; one instance per run (its early stop is shared)."""

    def __init__(self, endpoint: str, model: str, *, api_key: str | None = None, timeout: float = 60.0,
                 deadline: float = DEFAULT_DEADLINE, retries: int = 3, backoff: float = 1.0,
                 max_bytes: int = DEFAULT_MAX_BYTES, max_failures: int = DEFAULT_MAX_FAILURES,
                 max_tokens: int = 200, temperature: float = 0.0):
        self.origin = check_client(endpoint, timeout, deadline, retries, backoff, max_bytes, max_failures)
        self.url = chat_url(endpoint)
        parts = urllib.parse.urlsplit(self.url)
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.model, self.api_key = model, api_key
        self.timeout, self.deadline, self.retries, self.backoff = float(timeout), float(deadline), retries, backoff
        self.max_bytes, self.max_failures = max_bytes, max_failures
        self.max_tokens, self.temperature = max_tokens, temperature
        self.stopped: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._in_a_row = 0
        self._local = threading.local()           # each thread's open connection
        self._watchdog = _Watchdog()
        self._head = self._request_head(parts.hostname or "", self.origin[0], self.origin[2])

    def _request_head(self, host: str, scheme: str, port: int) -> bytes | None:
        """The request line and headers of every POST, `%d` for the body's length (None: the API key
        holds a line break, so no request is sent)."""
        try:
            name = host.encode("ascii").decode()
        except UnicodeEncodeError:
            name = host.encode("idna").decode()
        if ":" in name:
            name = f"[{name}]"
        if port != (443 if scheme == "https" else 80):
            name += f":{port}"
        lines = [f"POST {self.target} HTTP/1.1", f"Host: {name}", "Accept-Encoding: identity",
                 "Content-Type: application/json", "Accept: application/json"]
        if self.api_key:
            if any(c in self.api_key for c in "\r\n\0"):
                return None
            lines.append(f"Authorization: Bearer {self.api_key}")
        try:
            return ("\r\n".join(lines) + "\r\nContent-Length: ").encode("latin-1").replace(b"%", b"%%") + b"%d\r\n\r\n"
        except UnicodeEncodeError:
            return None

    # ------------------------------------------------------------------ one request
    def _connection(self, timeout: float):
        scheme, host, port = self.origin
        if scheme == "http":                      # never through a proxy: the key would travel in clear
            return http.client.HTTPConnection(host, port, timeout=timeout)
        ctx = ssl.create_default_context()
        proxy = urllib.request.getproxies().get("https")
        if proxy and not urllib.request.proxy_bypass(host):
            p = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
            conn = http.client.HTTPSConnection(p.hostname, p.port or 80, timeout=timeout, context=ctx)
            conn.set_tunnel(host, port)           # TLS end to end: only the endpoint reads the key
            return conn
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=ctx)

    def request(self, body: bytes, until: float) -> tuple[str, int, int]:
        """One POST that ends by `until` (time.monotonic()): (answer, prompt tokens, completion tokens).
        Raises ReplyError for anything but a usable reply. The thread's connection is kept open for its
        next request when the endpoint allows (HTTP/1.1 keep-alive); one the endpoint closed while it was
        idle is replaced once, without counting a failure."""
        conn, reused = getattr(self._local, "conn", None), True
        if conn is None:
            conn, reused = self._connection(max(until - time.monotonic(), 0.001)), False
        self._local.conn = None
        try:
            raw = self._request_on(conn, body, until)
        except _Stale as stale:
            conn.close()
            if not reused:
                raise ReplyError(str(stale)) from None
            conn = self._connection(max(until - time.monotonic(), 0.001))
            try:
                raw = self._request_on(conn, body, until)
            except _Stale as again:
                conn.close()
                raise ReplyError(str(again)) from None
            except BaseException:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        if conn.sock is not None:                 # the endpoint keeps it open: the thread's next request
            self._local.conn = conn
        return parse_reply(raw)

    def _request_on(self, conn, body: bytes, until: float) -> bytes:
        """The reply body of one exchange on `conn` by `until`, under the client's watchdog (which shuts
        the socket at `until`); _Stale when the endpoint closed the connection before answering."""
        left = until - time.monotonic()
        if left <= 0:
            raise ReplyError("no time left within --deadline")
        late = f"no complete reply within {min(left, self.timeout):.3g} s (--timeout / --deadline)"
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            try:
                if conn.sock is not None:
                    conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        conn.timeout = left
        token = self._watchdog.arm(until, expire)
        try:
            if conn.sock is None:
                conn.connect()
                if expired.is_set():
                    raise ReplyError(late)
            else:
                conn.sock.settimeout(left)
            return self._exchange(conn, conn.sock, body, until, late)
        except ReplyError:
            if expired.is_set():
                raise ReplyError(late) from None
            raise
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
            if expired.is_set():
                raise ReplyError(late) from None
            raise _Stale(f"{type(exc).__name__}: {str(exc)[:200]}".rstrip(": ")) from None
        except (OSError, http.client.HTTPException, ssl.SSLError, ValueError) as exc:
            if expired.is_set() or isinstance(exc, TimeoutError):
                raise ReplyError(late) from None
            raise ReplyError(f"{type(exc).__name__}: {str(exc)[:200]}".rstrip(": ")) from None
        finally:
            self._watchdog.disarm(token)

    def _exchange(self, conn, sock, body: bytes, until: float, late: str) -> bytes:
        """One POST and its reply on the connection's socket (HTTP/1.1, written and read here: one send,
        reads of up to 64 KiB, no header objects); the connection is closed when it cannot serve the next."""
        if self._head is None:
            raise ValueError("Invalid header value: the API key holds a line break or a character outside Latin-1")
        sock.sendall(self._head % len(body) + body)
        wire = _Wire(sock, until, late)
        version, status, reason, headers = wire.head()
        if 300 <= status < 400:
            loc = headers.get("location") or "(none)"
            raise ReplyError(f"HTTP {status} redirect to {loc[:300]} refused: redirects are not followed "
                             f"(the key goes only to {self.origin[0]}://{self.origin[1]}:{self.origin[2]}); "
                             f"give the final URL as --endpoint")
        raw, to_close = wire.body(status, headers, self.max_bytes)
        conn_hdr = headers.get("connection", "").lower()
        if (to_close or wire.buf or "close" in conn_hdr
                or (version != "HTTP/1.1" and "keep-alive" not in conn_hdr)):
            conn.close()                          # the endpoint ends it (or sent more than asked): not reused
        if not 200 <= status < 300:
            snippet = raw[:200].decode("utf-8", "replace").replace("\n", " ")
            raise ReplyError(f"HTTP {status} {reason}: {snippet}".rstrip(": "))
        return raw

    # ------------------------------------------------------------------ one call
    def _result(self, ok: bool, reason: str = "") -> None:
        with self._lock:
            self._in_a_row = 0 if ok else self._in_a_row + 1
            if not ok and self.max_failures and self._in_a_row >= self.max_failures and not self._stop.is_set():
                self.stopped = (f"{self._in_a_row} requests in a row failed (the last: {reason}); the endpoint "
                                f"seems down or its answers do not parse: stopped early (--max-failures "
                                f"{self.max_failures}); rerun to resume")
                self._stop.set()

    def ask(self, prompt: str, parse: Callable[[str], Any] | None = None,
            on_failure: Callable[[int, str, str | None], None] | None = None) -> Outcome:
        """Ask `prompt`; `parse(answer)` gives the value or None (an unparseable answer, retried).
        `on_failure(attempt, reason, answer or None)` hears each failed request. Never raises for what
        the endpoint does."""
        out = Outcome()
        call_end = time.monotonic() + self.deadline
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": prompt}],
                           "temperature": self.temperature, "max_tokens": self.max_tokens}).encode("utf-8")
        attempt = 0
        while True:
            if self._stop.is_set():
                out.stopped = True
                out.reason = out.reason or f"not asked: {self.stopped}"
                return out
            t0 = time.monotonic()
            out.requests += 1
            answer = None
            try:
                answer, ptok, ctok = self.request(body, min(call_end, t0 + self.timeout))
            except ReplyError as exc:
                out.transport_failures += 1
                reason = f"request failed: {exc}"
            else:
                out.prompt_tokens += ptok
                out.completion_tokens += ctok
                out.text = answer
                try:
                    value = parse(answer) if parse else answer
                except (ValueError, TypeError, KeyError, IndexError):
                    value = None
                if value is not None:
                    self._result(True)
                    out.ok, out.value, out.reason = True, value, ""
                    out.seconds = round(time.monotonic() - t0, 3)
                    return out
                out.parse_failures += 1
                reason = "unparseable answer"
            out.reason = reason[:500]
            self._result(False, out.reason)
            if on_failure:
                on_failure(attempt + 1, out.reason, answer)
            attempt += 1
            if attempt > self.retries:
                return out
            wait = min(30.0, self.backoff * 2 ** (attempt - 1))
            if time.monotonic() + wait >= call_end:
                out.reason += f"; no time left to retry within --deadline {self.deadline:g} s"
                return out
            if self._stop.wait(wait):
                out.stopped = True
                return out


def tally(res, out) -> None:
    """Add one call's counts (requests, transport and parse failures, tokens) to a command's running result,
    whose fields are calls, http_errors, unparsed, prompt_tokens and completion_tokens."""
    res.calls += out.requests
    res.http_errors += out.transport_failures
    res.unparsed += out.parse_failures
    res.prompt_tokens += out.prompt_tokens
    res.completion_tokens += out.completion_tokens
