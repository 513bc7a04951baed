"""Issue 34: the one model client against misbehaving endpoints on 127.0.0.1. Redirects are refused and
the key never reaches another host; replies are bounded in bytes while read; every transport error and
malformed reply is retried then returned as a failure; one deadline bounds a call and its retries; the
client stops after N failed requests in a row."""
from __future__ import annotations

import time
import tracemalloc

import pytest
from _fakeendpoint import (
    BROKEN,
    RawServer,
    answering,
    body_of,
    broken,
    endless_chunked,
    redirect_to,
    send_json,
)

from engine.errors import CranfieldError
from engine.util.modelclient import ModelClient, ReplyError, parse_reply


def client(url, **kw):
    base = {"api_key": "sekret", "timeout": 2.0, "retries": 1, "backoff": 0.0, "max_failures": 0}
    base.update(kw)
    return ModelClient(url, "m", **base)


def grade(answer):
    return 1 if "score: 1" in answer else None


def test_a_good_answer_with_its_usage():
    with RawServer(answering(lambda p: "##final score: 1")) as srv:
        out = client(srv.url).ask("hello <x>", grade)
    assert out.ok and out.value == 1 and out.requests == 1 and out.prompt_tokens == 10 and out.completion_tokens == 2
    req = srv.requests[0]
    assert req.path == "/v1/chat/completions" and req.prompt == "hello <x>"
    assert req.headers["authorization"] == "Bearer sekret"


def test_a_redirect_is_refused_and_the_key_never_reaches_the_other_host():
    with RawServer(answering(lambda p: "##final score: 1")) as other:
        with RawServer(redirect_to(other.url + "/chat/completions")) as first:
            out = client(first.url, retries=2).ask("p", grade)
        assert other.connections == 0 and other.requests == []
    assert not out.ok and out.requests == 3 and out.transport_failures == 3
    assert "redirect" in out.reason and f"{other.url}/chat/completions" in out.reason
    assert all(r.headers.get("authorization") == "Bearer sekret" for r in first.requests)


def test_an_endless_chunked_reply_is_cut_at_the_byte_limit_in_bounded_time_and_memory():
    ref = []
    srv = RawServer(None)
    ref.append(srv)
    srv.reply = endless_chunked(ref)
    with srv:
        c = client(srv.url, retries=0, timeout=10.0, max_bytes=1 << 20)
        tracemalloc.start()
        t0 = time.monotonic()
        out = c.ask("p", grade)
        took = time.monotonic() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        time.sleep(0.3)
        sent = srv.sent
    assert not out.ok and "--max-reply-bytes" in out.reason and "1048576" in out.reason
    assert took < 3, took                          # on main: 2.8 GB read within --timeout 2
    assert peak < 4 * (1 << 20), peak              # what the client held: about the 1 MiB it read
    assert sent < 64 * (1 << 20), sent             # the server stopped soon after the client hung up


def test_an_announced_length_over_the_limit_is_not_read():
    def big(conn, req):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n" + b" " * 1000)
    with RawServer(big) as srv:
        out = client(srv.url, retries=0, max_bytes=4096).ask("p", grade)
    assert not out.ok and "announces 999999999 bytes" in out.reason


@pytest.mark.parametrize("kind", BROKEN)
def test_every_transport_error_and_malformed_reply_is_retried_then_a_failure(kind):
    seen = []
    with RawServer(broken(kind)) as srv:
        out = client(srv.url, retries=1, timeout=1.0).ask("p", grade, lambda a, why, ans: seen.append((a, why)))
    assert not out.ok and out.requests == 2 and out.transport_failures == 2 and srv.connections == 2
    assert [a for a, _ in seen] == [1, 2] and all(why.startswith("request failed: ") for _, why in seen)
    assert out.prompt_tokens == 0                   # a malformed count is never added


def test_the_reasons_name_what_went_wrong():
    want = {"incomplete": "IncompleteRead", "badstatus": "BadStatusLine", "disconnect": "RemoteDisconnected",
            "timeout": "no complete reply within", "notjson": "not JSON", "nested": "not JSON",
            "nocontent": "no choices[0].message.content", "nullcontent": "NoneType, not text",
            "1e400": "usage.prompt_tokens 'inf'", "NaN": "not JSON", '"abc"': "usage.prompt_tokens 'abc'",
            "http500": "HTTP 500", "hugeheader": "LineTooLong"}
    for kind, text in want.items():
        with RawServer(broken(kind)) as srv:
            out = client(srv.url, retries=0, timeout=1.0).ask("p", grade)
        assert text in out.reason, (kind, out.reason)


def test_an_unparseable_answer_is_retried_and_counted_apart():
    with RawServer(answering(lambda p: "I think it is relevant")) as srv:
        out = client(srv.url, retries=2).ask("p", grade)
    assert not out.ok and out.requests == 3 and out.parse_failures == 3 and out.transport_failures == 0
    assert out.reason == "unparseable answer" and out.text == "I think it is relevant"


def test_one_deadline_bounds_a_call_and_all_its_retries():
    with RawServer(broken("timeout")) as srv:
        c = client(srv.url, retries=10, timeout=1.0, deadline=2.5)
        t0 = time.monotonic()
        out = c.ask("p", grade)
        took = time.monotonic() - t0
    assert not out.ok and took < 3.5, took
    assert out.requests == 3 and srv.connections == 3          # 1 s, 1 s, then the 0.5 s left


def test_a_dead_endpoint_stops_the_client_after_n_failures_in_a_row():
    with RawServer(broken("disconnect")) as srv:
        c = client(srv.url, retries=1, max_failures=3)
        outs = [c.ask("p", grade) for _ in range(5)]
    assert srv.connections == 3
    assert [o.requests for o in outs] == [2, 1, 0, 0, 0]
    assert c.stopped and "3 requests in a row failed" in c.stopped and "RemoteDisconnected" in c.stopped
    assert all(o.stopped for o in outs[1:]) and not outs[0].stopped


def test_a_success_resets_the_count_of_failures_in_a_row():
    state = {"n": 0}

    def flaky(conn, req):
        state["n"] += 1
        if state["n"] % 2:
            return                                      # every other request: a disconnect
        send_json(conn, body_of("##final score: 1"))
    with RawServer(flaky) as srv:
        c = client(srv.url, retries=1, max_failures=2)
        outs = [c.ask("p", grade) for _ in range(4)]
    assert all(o.ok for o in outs) and c.stopped is None and srv.connections == 8


@pytest.mark.parametrize("bad, flag", [
    ({"timeout": 0}, "--timeout"), ({"timeout": float("nan")}, "--timeout"), ({"deadline": -1}, "--deadline"),
    ({"max_bytes": 10}, "--max-reply-bytes"), ({"max_failures": -1}, "--max-failures"),
    ({"retries": -1}, "--retries"), ({"backoff": float("inf")}, "--backoff")])
def test_settings_no_call_can_work_with_are_refused(bad, flag):
    with pytest.raises(CranfieldError, match=flag):
        client("http://127.0.0.1:9/v1", **bad)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/v1", "http://user:pw@127.0.0.1/v1",
                                 "http:///v1", "http://127.0.0.1:99999/v1"])
def test_endpoints_that_are_not_plain_http_urls_are_refused(url):
    with pytest.raises(CranfieldError, match="--endpoint"):
        client(url)


def test_parse_reply_takes_only_whole_token_counts():
    assert parse_reply(body_of("x")) == ("x", 10, 2)
    assert parse_reply(b'{"choices": [{"message": {"content": "x"}}]}') == ("x", 0, 0)
    assert parse_reply(b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": null}}') == ("x", 0, 0)
    for bad in (b"true", b"1e400", b"-1", b"3.0", b"1000000001", b"Infinity"):
        with pytest.raises(ReplyError):
            parse_reply(b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": %s}}' % bad)


def test_a_tls_error_is_a_recorded_failure():
    """An https:// endpoint that answers in plain text: an SSL error, retried, then a failure."""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    def serve():
        for _ in range(2):
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            conn.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        out = client(f"https://127.0.0.1:{port}/v1", retries=1).ask("p", grade)
    finally:
        srv.close()
    assert not out.ok and out.requests == 2 and out.transport_failures == 2
    assert "SSL" in out.reason, out.reason
