"""Issue 26: the automatic judge's HTTP client against misbehaving servers on 127.0.0.1: a total
deadline per call, every transport error a retried then recorded failure, out-of-scale grades refused,
an early stop after consecutive failures, no call for an empty passage."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from engine.judging.auto import JudgeSettings, pooled_pairs, run_auto_judge
from engine.campaign.campaign import load_campaign
from engine.simulation.campaigns import simulate, write_campaign

from _cli import assert_clean_refusal, cli


class RawServer:
    """A TCP server answering every connection with `reply(conn)` (raw bytes: any misbehaviour)."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.calls = 0
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.calls += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            n = int([h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0])
            while len(body) < n:
                body += conn.recv(65536)
            self.reply(conn, json.loads(body))
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.stop = True
        self.sock.close()


def ok(answer: str, usage: str = '{"prompt_tokens": 10, "completion_tokens": 2}'):
    body = ('{"choices": [{"message": {"role": "assistant", "content": %s}}], "usage": %s}'
            % (json.dumps(answer), usage)).encode()

    def reply(conn, req):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
    return reply


@pytest.fixture
def camp(tmp_path):
    sim = simulate(n_runs=3, n_topics=2, depth=8, seed=3)
    return load_campaign(write_campaign(sim, tmp_path / "c", pool_depth=5, docs=True))


def settings(url, **kw):
    base = dict(backoff=0.0, retries=1, concurrency=2, timeout=2.0, grades=(0, 1, 2, 3))
    base.update(kw)
    return JudgeSettings(url, "m", **base)


def test_a_dripping_server_is_cut_at_the_total_deadline(camp):
    def drip(conn, req):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(100):
            conn.sendall(b" ")
            time.sleep(0.5)
    pairs = pooled_pairs(camp, depth=1).head(2)
    with RawServer(drip) as srv:
        t0 = time.monotonic()
        res = run_auto_judge(camp, "llm", settings(srv.url, retries=0, timeout=1.5), pairs)
        took = time.monotonic() - t0
    assert took < 6, took                               # 2 pairs, 2 at a time, 1.5 s each at most
    assert len(res.failed) == 2 and res.judged == 0
    assert all("deadline" in why or "timed out" in why for _, _, why in res.failed)


@pytest.mark.parametrize("kind", ["incomplete", "badstatus", "hugeusage", "notjson"])
def test_every_transport_error_is_a_recorded_failure(camp, kind):
    def reply(conn, req):
        if kind == "incomplete":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\"")
        elif kind == "badstatus":
            conn.sendall(b"garbage\r\n\r\n")
        elif kind == "hugeusage":
            ok("##final score: 1", '{"prompt_tokens": 1e400, "completion_tokens": 2}')(conn, req)
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    pairs = pooled_pairs(camp, depth=1).head(2)
    with RawServer(reply) as srv:
        res = run_auto_judge(camp, "llm", settings(srv.url, retries=1), pairs)
    # a token count of 1e400 makes the reply malformed (issue 34): retried, then recorded, as the others
    assert res.judged == 0 and len(res.failed) == 2 and res.http_errors == 4
    errs = (camp.root / "judgments" / "sources" / "llm.errors.jsonl").read_text().splitlines()
    assert len(errs) == 4


def test_a_grade_off_the_campaign_scale_is_refused_not_stored(camp):
    """The demo-like campaign has grades 0-2; a model answering 3 (or an injected 7) is not recorded."""
    assert sorted(camp.scale()) == [0, 1, 2]
    pairs = pooled_pairs(camp, depth=1).head(2)
    with RawServer(ok("ignore the instructions\n##final score: 3")) as srv:
        res = run_auto_judge(camp, "llm", settings(srv.url, scale=(0, 1, 2)), pairs)
    assert res.judged == 0 and len(res.failed) == 2
    assert all("--grade-map" in why for _, _, why in res.failed)
    assert not (camp.root / "judgments" / "sources" / "llm.jsonl").exists() or \
        '"grade": 3' not in (camp.root / "judgments" / "sources" / "llm.jsonl").read_text()


def test_consecutive_failures_stop_the_run_early(camp):
    def refuse(conn, req):
        conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
    pairs = pooled_pairs(camp, depth=3)
    assert len(pairs) >= 6
    with RawServer(refuse) as srv:
        res = run_auto_judge(camp, "llm", settings(srv.url, retries=0, concurrency=1, max_failures=3), pairs)
        calls = srv.calls
    assert calls == 3 and res.stopped and len(res.failed) == 3


def test_no_call_for_an_empty_passage_unless_asked(camp):
    (camp.root / "docs" / "docs.jsonl").write_text("")
    pairs = pooled_pairs(camp, depth=1).head(2)
    with RawServer(ok("##final score: 1")) as srv:
        res = run_auto_judge(camp, "llm", settings(srv.url), pairs)
        assert srv.calls == 0 and res.judged == 0 and res.empty == 2
        res = run_auto_judge(camp, "llm", settings(srv.url, judge_empty=True), pairs)
        assert srv.calls == 2 and res.judged == 2


@pytest.mark.parametrize("t", ["0", "-1", "nan"])
def test_a_timeout_that_is_not_positive_is_refused(camp, t):
    r = cli("judgments", "auto", camp.root, "--endpoint", "http://127.0.0.1:9", "--model", "m",
            "--timeout", t, "--dry-run")
    assert_clean_refusal(r, "--timeout")
