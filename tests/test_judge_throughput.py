"""Issue 39, item 4: the model client keeps its connection between requests (and replaces one the
endpoint dropped without counting a failure), one watchdog thread bounds every request, answers are
written in group commits that acknowledge only what is on disk, and the worker pool takes its items
lazily."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from _fakeendpoint import RawServer, body_of

from engine.judgments.commit import GroupCommit
from engine.util.modelclient import ModelClient
from engine.util.parallel import in_parallel


def grade(answer):
    return 1 if "score: 1" in answer else None


class KeepAlive:
    """An HTTP/1.1 endpoint that keeps connections open; counts connections; `slow` requests sleep."""

    def __init__(self, slow: set[int] = frozenset()):
        self.connections, self.requests, self.slow = 0, 0, slow
        outer = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                super().setup()
                outer.connections += 1

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests += 1
                if outer.requests in outer.slow:
                    time.sleep(1.5)
                out = body_of("##final score: 1")
                self.send_response(200)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()


def client(url, **kw):
    base = {"timeout": 1.0, "retries": 1, "backoff": 0.0, "max_failures": 0}
    base.update(kw)
    return ModelClient(url, "m", **base)


def test_one_connection_serves_a_threads_requests():
    with KeepAlive() as srv:
        c = client(srv.url)
        outs = [c.ask(f"p{i}", grade) for i in range(6)]
    assert all(o.ok and o.value == 1 and o.requests == 1 for o in outs)
    assert srv.requests == 6 and srv.connections == 1


def test_each_thread_keeps_its_own_connection():
    with KeepAlive() as srv:
        c = client(srv.url)
        outs: list = []
        ths = [threading.Thread(target=lambda: outs.extend(c.ask("p", grade) for _ in range(5))) for _ in range(3)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
    assert len(outs) == 15 and all(o.ok for o in outs)
    assert srv.requests == 15 and srv.connections == 3


def test_a_connection_the_endpoint_dropped_is_replaced_without_a_failure():
    # a reply without "Connection: close", then the server hangs up: the client holds a dead connection
    def reply(conn, req):
        b = body_of("##final score: 1")
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(b) + b)
        time.sleep(0.05)
    with RawServer(reply) as srv:
        c = client(srv.url, max_failures=1)
        outs = []
        for _ in range(4):
            outs.append(c.ask("p", grade))
            time.sleep(0.1)                     # the server has closed it by now
    assert all(o.ok and o.requests == 1 and o.transport_failures == 0 for o in outs), outs
    assert srv.connections == 4 and len(srv.requests) == 4 and c.stopped is None


def test_the_deadline_holds_on_a_kept_connection():
    with KeepAlive(slow={2}) as srv:
        c = client(srv.url, timeout=0.5, retries=0)
        first = c.ask("p", grade)
        t0 = time.monotonic()
        second = c.ask("p", grade)
        took = time.monotonic() - t0
        third = c.ask("p", grade)
    assert first.ok and not second.ok and "no complete reply within 0.5 s" in second.reason and took < 1.2
    assert third.ok and srv.connections == 2            # the timed-out connection is not reused


def test_group_commit_writes_in_order_and_acknowledges_after_the_write(tmp_path):
    a, b = tmp_path / "cache.jsonl", tmp_path / "log.jsonl"
    acked: list[int] = []
    seen_on_disk: list[bool] = []
    gc = GroupCommit()

    def then(i):
        def ack():
            on_disk = {json.loads(x)["i"] for x in b.read_bytes().splitlines()}
            seen_on_disk.append(i in on_disk)
            acked.append(i)
        return ack

    def worker(k):
        for i in range(k * 100, k * 100 + 100):
            gc.submit([(a, [{"i": i}]), (b, [{"i": i}])], then(i))
    ths = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    gc.close()
    for p in (a, b):
        got = [json.loads(x)["i"] for x in p.read_bytes().splitlines()]
        assert sorted(got) == list(range(400))
        for k in range(4):                      # each thread's records in the order it gave them
            mine = [i for i in got if i // 100 == k]
            assert mine == sorted(mine)
    assert sorted(acked) == list(range(400)) and all(seen_on_disk)
    assert 1 <= gc.groups <= 400


def test_group_commit_raises_a_failed_write_and_acknowledges_nothing_of_it(tmp_path):
    acked = []
    gc = GroupCommit()
    (tmp_path / "log.jsonl").mkdir()                  # not a file: the open fails
    gc.submit([(tmp_path / "log.jsonl", [{"x": 1}])], lambda: acked.append(1))
    with pytest.raises(OSError):
        gc.close()
    assert acked == []
    with pytest.raises(OSError):
        gc.submit([(tmp_path / "log.jsonl", [{"x": 2}])])


def test_in_parallel_takes_items_lazily_and_raises_the_first_error():
    taken = []
    gate = threading.Event()

    def items():
        for i in range(1000):
            taken.append(i)
            yield i

    def fn(i):
        gate.wait(5)
    th = threading.Thread(target=in_parallel, args=(fn, items(), 2))
    th.start()
    time.sleep(0.3)
    assert len(taken) == 2                      # one item a worker while they are busy
    gate.set()
    th.join()
    assert len(taken) == 1000
    done = []
    with pytest.raises(ValueError, match="bad 7"):
        in_parallel(lambda i: (_ for _ in ()).throw(ValueError(f"bad {i}")) if i == 7 else None, range(20), 2,
                    done.append)


def test_cached_lines_are_record_lines_byte_for_byte():
    from engine.judging.auto import cached_lines
    from engine.judgments.log import record_lines
    base = {"assessor": "llm-ü", "source": "llm-ü", "kind": "auto", "model": "m \"q\"", "prompt_version": "umbrela-v2",
            "endpoint": "http://127.0.0.1:1/v1", "op": "judge"}
    cached = [("401", "D1", "k1", 3, "a"), ("täst", "doc\\x", "k2", 0, ""), ("7", "𝔡", "k3", 2, "")]
    gm = {3: 2}
    want = record_lines([{"topic": t, "doc": d, "grade": gm.get(g, g), **base, "key": k, "ts": "T",
                          "seconds": None, "cached": True} for t, d, k, g, _ in cached])
    assert cached_lines(cached, gm, base, "T") == want
    odd = {**base, "endpoint": None}                 # a value that is not text: the general path
    assert cached_lines(cached, gm, odd, "T") == record_lines(
        [{"topic": t, "doc": d, "grade": gm.get(g, g), **odd, "key": k, "ts": "T", "seconds": None, "cached": True}
         for t, d, k, g, _ in cached])


def test_a_reset_on_a_new_connection_keeps_its_own_name():
    import socket
    import struct

    def reset(conn, req):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with RawServer(reset) as srv:
        out = client(srv.url, retries=0).ask("p", grade)
    assert not out.ok and out.transport_failures == 1 and srv.connections == 1
    assert "ConnectionResetError" in out.reason or "RemoteDisconnected" in out.reason, out.reason


def test_block_cache_keys_are_the_keys_of_one_pair_at_a_time():
    import hashlib

    from engine.judging.auto import _text_hash, cache_key, cache_keys

    def by_json(t, d, p, m):                 # the key as written by every earlier version
        return hashlib.sha256(json.dumps([str(t), str(d), _text_hash(p), m]).encode()).hexdigest()[:32]
    topics, docs = ["1", "tö", 'a"b', "x\\y", "\u2028", "\U0001F600", 7], ["D1", "é", "q\nz", "\t", "𝔘", 3, "x"]
    for model in ("bench", "gpt-ö", 'q"'):
        want = [by_json(t, d, "prompt é", model) for t, d in zip(topics, docs)]
        assert cache_keys(topics, docs, "prompt é", model) == want
        assert [cache_key(t, d, "prompt é", model) for t, d in zip(topics, docs)] == want


def test_the_one_pass_cache_reader_reads_what_the_line_reader_reads(tmp_path):
    import random

    from engine.formats.safeload import json_line
    from engine.judging.auto import _plain_lines, read_cache_lines

    def line_by_line(raw):
        out = []
        for ln, line in enumerate(raw.split(b"\n"), 1):
            if line.strip():
                try:
                    r = json_line(line, "p", ln)
                except ValueError:
                    continue
                if isinstance(r, dict):
                    out.append(r)
        return out
    kinds = ['{"key": "a", "grade": 1}', "", "   ", ' {"key": "b"}', '{"key": "c"} ', '{"key": "c"}\r',
             '{"key": "d"}\x0c', '{"key": "e", "x": [1,', "2]}", "[1]", "3", '{"key": "f"} {"key": "g"}',
             '{"key": "h", "s": "é\u2028"}', '{"a": NaN}', '{"a": 1}}', '\ufeff{"key": "bom"}', '{"key": "torn']
    rng = random.Random(5)
    for _ in range(2000):
        raw = ("\n".join(rng.choices(kinds, k=rng.randint(0, 9))) + rng.choice(["", "\n", "\n\n"])).encode()
        assert _plain_lines(raw) == line_by_line(raw), raw
        p = tmp_path / "c.jsonl"
        p.write_bytes(raw)
        assert read_cache_lines(p) == line_by_line(raw)
    assert _plain_lines(b'{"key": "\\ud800"}\n') is None and _plain_lines(b'{"k": "\xff"}\n') is None


def _raw(payload: bytes):
    def reply(conn, req):
        conn.sendall(payload)
    return reply


def test_the_hand_read_reply_takes_every_framing_http_allows():
    """The client writes and reads HTTP/1.1 itself: a chunked body (with an extension and a trailer), an
    interim 100 Continue, a body that ends with the connection, and a Content-Length body all give the
    answer; the request carries Host, Content-Length and the key, and nothing but the body."""
    from _fakeendpoint import RawServer, body_of
    b = body_of("##final score: 1")
    half = len(b) // 2
    framings = {
        "chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + b"%x;ext=1\r\n" % half + b[:half] + b"\r\n" + b"%X\r\n" % (len(b) - half) + b[half:]
                    + b"\r\n0\r\nX-Trailer: t\r\n\r\n"),
        "continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(b) + b,
        "to-close": b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + b,
        "length": b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nConnection: close\r\n\r\n" % len(b) + b,
    }
    for name, payload in framings.items():
        with RawServer(_raw(payload)) as srv:
            out = ModelClient(srv.url, "m", api_key="sk-1", timeout=2.0, retries=0).ask("p ü", grade)
        assert out.ok and out.value == 1 and out.prompt_tokens == 10, (name, out.reason)
        req = srv.requests[0]
        assert req.path == "/v1/chat/completions" and req.headers["host"] == f"127.0.0.1:{srv.port}"
        assert req.headers["authorization"] == "Bearer sk-1" and req.prompt == "p ü"


def test_hand_read_replies_that_break_off_are_failures_with_their_reason():
    from _fakeendpoint import RawServer
    cases = {
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc": "IncompleteRead: 3 bytes read, 13 more",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n": "IncompleteRead",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n": "longer than 4096 bytes",
        b"HTTP/1.0 200 OK\r\n\r\n" + b"x" * 5000: "longer than 4096 bytes",
        b"HTTP/1.1 2x0 OK\r\n\r\n": "BadStatusLine",
        b"HTTP/1.1 200 OK\r\n" + b"X-A: 1\r\n" * 101 + b"\r\n": "more than 100 headers",
        b"HTTP/1.1 301 Moved\r\nLocation: http://elsewhere/v1\r\nContent-Length: 0\r\n\r\n": "redirect to http://elsewhere/v1",
        b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 4\r\n\r\nslow": "HTTP 429 Too Many Requests: slow",
    }
    for payload, why in cases.items():
        with RawServer(_raw(payload)) as srv:
            out = client(srv.url, retries=0, max_bytes=4096).ask("p", grade)
        assert not out.ok and out.transport_failures == 1 and why in out.reason, (payload[:40], out.reason)


def test_a_key_that_cannot_be_a_header_is_never_sent():
    from _fakeendpoint import RawServer, answering
    for key in ("sk\r\nX-Evil: 1", "sk-€"):
        with RawServer(answering(lambda p: "##final score: 1")) as srv:
            out = client(srv.url, api_key=key, retries=0).ask("p", grade)
        assert not out.ok and "Invalid header value" in out.reason and srv.requests == []


def test_nugget_keys_and_cached_lines_built_in_blocks_equal_one_at_a_time():
    from engine.judgments.log import record_lines
    from engine.nuggets.auto import _assign_keys, _hit_lines, key_of
    for nts in (["a", 'ü\n"x', "\u2028", ""], ["y"]):
        text = 'answer é \\ "q"'
        assert _assign_keys("t1", text, nts, "prompt {x}", "m") == [key_of("t1", text, nt, "prompt {x}", "m") for nt in nts]
    base = {"op": "assign", "assessor": "s", "kind": "llm", "model": "mö", "prompt_version": "v", "endpoint": "http://x"}
    hits = [({"run": "r1", "topic": "t", "nugget": "n1"}, "support", "k1"),
            ({"run": 'r"2\n', "topic": "t", "sentence": 3, "doc": "d"}, "not_support", "k2")]
    want = record_lines([{**m, "label": lab, **base, "key": k, "ts": "TS", "seconds": None, "cached": True}
                         for m, lab, k in hits])
    assert _hit_lines(hits, base, "TS") == want


def test_the_one_pattern_cache_reader_reads_what_the_line_reader_reads(tmp_path):
    """The nugget cache read by one regular expression (every line a plain line of the module's) gives
    the line reader's key -> label, and any other text falls back to that reader."""
    import random

    from engine.judging.auto import read_cache_lines
    from engine.nuggets.auto import _canonical_cache
    from engine.nuggets.scores import LABELS

    def by_lines(raw):
        p = tmp_path / "c.jsonl"
        p.write_bytes(raw)
        return {str(r["key"]): r["label"] for r in read_cache_lines(p) if r.get("label") in LABELS and "key" in r}
    k = "0123456789abcdef" * 2
    plain = [f'{{"key": "{k[:31]}{c}", "label": "{lab}", "model": "m-1 x/y", "ts": "2026-11-28T11:39:54.2Z"}}'
             for c in "0a" for lab in LABELS]
    odd = [plain[0][:-1], plain[1] + " ", '{"key": "%s", "label": "maybe", "model": "m", "ts": "t"}' % k,
           plain[2].replace('"m-1', '"m\\u00e9'), plain[3].replace("m-1", "mé"), "", plain[4].upper(),
           '{"label": "support", "key": "%s", "model": "m", "ts": "t"}' % k, plain[5].replace("m-1", 'm\\"')]
    rng = random.Random(7)
    fast = 0
    for _ in range(1500):
        lines = rng.choices(plain, k=rng.randint(0, 8)) + (rng.choices(odd, k=rng.randint(1, 2)) if rng.random() < 0.5 else [])
        rng.shuffle(lines)
        raw = "\n".join(lines).encode() + rng.choice([b"", b"\n"])
        got = _canonical_cache(raw)
        if got is not None:
            fast += 1
            assert got == by_lines(raw), raw
        else:
            assert any(ln in odd for ln in lines) or not lines or not raw.endswith(b"\n"), raw
    assert fast > 300
    assert _canonical_cache(b"") == {} and _canonical_cache((plain[0] + "\n" + plain[1]).encode()) is None


def test_assign_hit_lines_equal_record_lines_byte_for_byte():
    from engine.judgments.log import record_lines
    from engine.nuggets.auto import _assign_hit_line, _assign_keys, _encoded_texts
    for base in ({"op": "assign", "assessor": "s", "kind": "llm", "model": "m%s ö", "prompt_version": "v",
                  "endpoint": "http://x/%20"}, {"op": "assign", "model": None}, {"run": "shadow"}, {}):
        rows = [("r1", "t", "n1", "support"), ('r"2\n', "tö", "n\\2", "partial_support"), ("r1", "t", 7, "not_support"),
                ("r1", "t", "n1", "not_support")]
        want = record_lines([{"run": r, "topic": t, "nugget": n, "label": lab, **base, "key": "f" * 32, "ts": "TS%",
                              "seconds": None, "cached": True} for r, t, n, lab in rows])
        hit = _assign_hit_line(base, "TS%")
        assert [hit(r, t)(n, lab, "f" * 32) for r, t, n, lab in rows] == want, base
    texts = ["a", 'ü\n"x', "\u2028", ""]
    assert _assign_keys("t", "x", texts, "p", "m", _encoded_texts(texts)) == _assign_keys("t", "x", texts, "p", "m")


def test_asked_label_lines_equal_record_lines_byte_for_byte():
    from engine.judgments.log import record_lines
    from engine.nuggets.auto import _cache_lines, _Lines
    base = {"op": "assign", "assessor": "s", "kind": "llm", "model": "mö", "prompt_version": "v%", "endpoint": "http://x"}
    metas = [{"run": "r1", "topic": "t", "nugget": "n1"}, {"run": 'r"2\n', "topic": "tö", "sentence": 3, "doc": "d\\"}]
    for secs in (0.003, 1.0, 12.345, 0.0):
        mk = _Lines(base)
        tail = mk.tail("TS", secs)
        got = [mk.line(m, lab, "k" + str(i), tail) for i, (m, lab) in enumerate(zip(metas, ["support", "not_support"]))]
        assert got == record_lines([{**m, "label": lab, **base, "key": "k" + str(i), "ts": "TS", "seconds": secs}
                                    for i, (m, lab) in enumerate(zip(metas, ["support", "not_support"]))])
    assert _Lines(base).line({"run": "r", "key": "x"}, "support", "k", "") is None      # a reserved name: record_lines
    assert _Lines({"label": "x"}).line(metas[0], "support", "k", "") is None
    for model in ("bench", "mö \"q\"", None):
        assert _cache_lines(["a" * 32, "b" * 32], ["support", "partial_support"], model, "TS") == record_lines(
            [{"key": k, "label": lab, "model": model, "ts": "TS"} for k, lab in (("a" * 32, "support"),
                                                                                ("b" * 32, "partial_support"))])


def test_the_benchmark_endpoint_by_schedule_never_serves_above_its_capacity():
    """The loopback endpoint of benchmarks/judge_throughput.py, by schedule: 12 requests sent at once to
    2 slots of 50 ms take at least 6 x 50 ms from the first start to the last end (never more than
    slots / latency a second), each is answered, and its slot-time is all answering when it was kept full."""
    import sys
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import judge_throughput as jt
    with jt.Endpoint(2, 0.05) as ep:
        c = client(ep.url, timeout=10.0)
        with ThreadPoolExecutor(12) as ex:
            outs = list(ex.map(lambda i: c.ask(f"p{i}"), range(12)))
        st = ep.stats()
    assert st["requests"] == 12 and st["timer"] is False
    assert all(o.text.startswith("##final score:") for o in outs)
    assert st["last"] - st["first"] >= 6 * 0.05 - 1e-9
    assert abs(st["busy_s"] - 12 * 0.05) < 1e-9
    slot = jt._slot_time(st, 2, 0.05)
    assert abs(slot["answering"] + slot["starved"] - 1) < 1e-9 and slot["answering"] <= 1 + 1e-9


def test_the_one_pattern_reply_cache_reader_reads_what_the_line_reader_reads(tmp_path):
    """`judgments auto`'s cache read by one regular expression when every line is a reply line as written
    (any JSON text in the strings, escapes included): the line reader's (grade, answer) by key; any other
    text (a torn line, another layout, a lone surrogate, bad UTF-8, a control character) is left to it."""
    import random

    from engine.judging.auto import _plain_replies, read_cache_lines
    from engine.judgments.log import record_lines
    rng = random.Random(11)
    texts = ["a", "é", '"', "\\", "\n", "\t", "\u2028", "𝔘", "##final score: 2", "\x7f", " ", "{}", "\\u00e9"]

    def rec(i):
        return {"key": f"{i % 7:032x}", "topic": rng.choice(texts), "doc": "".join(rng.choices(texts, k=3)),
                "model": rng.choice(["m", 'm"q', "mö"]), "prompt_version": "umbrela-v2", "grade": rng.randint(-1, 3),
                "answer": "".join(rng.choices(texts, k=rng.randint(0, 8))), "ts": "2026-11-28T12:00:00.1Z"}
    odd = [b'{"key": "%032x", "grade": 1}\n' % 1, b'{"key": "%032x", "topic": "t"' % 2,
           b'{"key": "%032x", "topic": "t", "doc": "d", "model": "m", "prompt_version": "v", "grade": 1.0, '
           b'"answer": "", "ts": "t"}\n' % 3, b'{"key": "%032x", "topic": "\\ud800", "doc": "d", "model": "m", '
           b'"prompt_version": "v", "grade": 1, "answer": "", "ts": "t"}\n' % 4, b"\n", b'{"x": "\xff"}\n',
           b'{"key": "%032x", "topic": "\x01", "doc": "d", "model": "m", "prompt_version": "v", "grade": 1, '
           b'"answer": "", "ts": "t"}\n' % 5]
    fast = 0
    for _ in range(800):
        lines = record_lines([rec(i) for i in range(rng.randint(0, 9))])
        if rng.random() < 0.4:
            lines.insert(rng.randint(0, len(lines)), rng.choice(odd))
        raw = b"".join(lines)
        got = _plain_replies(raw)
        if got is None:
            assert any(o in lines for o in odd), raw
            continue
        p = tmp_path / "c.jsonl"
        p.write_bytes(raw)
        want = {r["key"]: r for r in read_cache_lines(p) if "key" in r}
        fast += 1
        assert got == {k: (int(r["grade"]), r.get("answer", "")) for k, r in want.items()}, raw
    assert fast > 400 and _plain_replies(b"") == {}
