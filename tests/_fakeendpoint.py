"""Misbehaving chat endpoints on 127.0.0.1 for the model client's tests (issue 34): a raw TCP server whose
`reply(conn, req)` writes any bytes, and the replies the tests need (a good answer, a redirect, an endless
chunked body, broken transports, a literal reader of the tagged prompts)."""
from __future__ import annotations

import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Self


@dataclass
class Request:
    path: str
    headers: dict                       # lower-case name -> value
    body: dict
    prompt: str = ""


@dataclass
class RawServer:
    """Answers each connection on 127.0.0.1 with `reply(conn, request)`; records every request."""

    reply: object
    requests: list = field(default_factory=list)
    connections: int = 0
    sent: int = 0                       # bytes the replies counted as sent

    def __post_init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.lock = threading.Lock()
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.settimeout(20)
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
            n = int(headers.get("content-length", 0))
            while len(body) < n:
                body += conn.recv(65536)
            req = Request(lines[0].split(" ")[1], headers, json.loads(body))
            req.prompt = req.body["messages"][0]["content"]
            with self.lock:
                self.requests.append(req)
            self.reply(conn, req)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def add_sent(self, n: int) -> None:
        with self.lock:
            self.sent += n

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *a) -> None:
        self.closed = True
        self.sock.close()


def body_of(answer: str, usage: str = '{"prompt_tokens": 10, "completion_tokens": 2}') -> bytes:
    return (f'{{"choices": [{{"message": {{"role": "assistant", "content": {json.dumps(answer)}}}}}], "usage": {usage}}}').encode()


def send_json(conn, body: bytes, status: str = "200 OK") -> None:
    conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n\r\n".encode() + body)


def answering(fn):
    """A reply giving `fn(prompt)` as the answer text."""
    def reply(conn, req):
        send_json(conn, body_of(fn(req.prompt)))
    return reply


def redirect_to(url: str):
    def reply(conn, req):
        conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {url}\r\nContent-Length: 0\r\n\r\n".encode())
    return reply


def endless_chunked(server_ref: list):
    """A 200 reply whose chunked body never ends (64 KiB chunks until the client hangs up)."""
    def reply(conn, req):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b" " * 65536 + b"\r\n"
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            conn.sendall(chunk)
            server_ref[0].add_sent(len(chunk))
    return reply


def broken(kind: str):
    """Replies that break the transport or the reply's shape in one way each."""
    def reply(conn, req):
        if kind == "incomplete":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\"")
        elif kind == "badstatus":
            conn.sendall(b"garbage\r\n\r\n")
        elif kind == "disconnect":
            pass                                            # closes without a word: RemoteDisconnected
        elif kind == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif kind == "timeout":
            time.sleep(3)
        elif kind == "notjson":
            send_json(conn, b"hello")
        elif kind == "nested":
            send_json(conn, b"[" * 200000 + b"]" * 200000)
        elif kind == "nocontent":
            send_json(conn, b'{"choices": []}')
        elif kind == "nullcontent":
            send_json(conn, b'{"choices": [{"message": {"content": null}}]}')
        elif kind in ("1e400", "NaN", '"abc"', "-5", "2.5", "1e12"):
            send_json(conn, body_of("##final score: 1", f'{{"prompt_tokens": {kind}, "completion_tokens": 2}}'))
        elif kind == "http500":
            send_json(conn, b'{"error": "overloaded"}', "500 Internal Server Error")
        elif kind == "hugeheader":
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
        else:
            raise AssertionError(kind)
    return reply


BROKEN = ("incomplete", "badstatus", "disconnect", "reset", "timeout", "notjson", "nested", "nocontent",
          "nullcontent", "1e400", "NaN", '"abc"', "-5", "2.5", "1e12", "http500", "hugeheader")
