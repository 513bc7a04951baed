"""`judgments auto` against a small OpenAI-compatible server on 127.0.0.1 started by the test."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.judging.auto import (DEFAULT_PROMPT, JudgeSettings, parse_grade, pooled_pairs, render,
    run_auto_judge)
from engine.campaign.campaign import load_campaign
from engine.simulation.campaigns import simulate, write_campaign
from engine.judgments.sources import list_sources, source_judgments
from engine.util.prompts import read_blocks

ROOT = Path(__file__).resolve().parents[1]


def grade_of(prompt: str) -> int:
    """The fake model's grade: a hash of the passage (so the test can recompute it)."""
    passage = read_blocks(prompt, "passage")[0]
    return int(hashlib.md5(passage.encode()).hexdigest(), 16) % 4


class FakeLLM:
    """A chat-completions endpoint. `bad` docs answer nonsense on their first request; `delay` slows it."""

    def __init__(self, bad=(), delay=0.0, fail_first=()):
        self.calls = []
        self.bad = set(bad)
        self.fail_first = set(fail_first)
        self.delay = delay
        self.lock = threading.Lock()
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][0]["content"]
                doc = read_blocks(prompt, "passage")[0]
                with outer.lock:
                    outer.calls.append((self.path, body["model"], doc))
                    n_same = sum(1 for c in outer.calls if c[2] == doc)
                if outer.delay:
                    time.sleep(outer.delay)
                if doc in outer.fail_first and n_same == 1:
                    self.send_response(503)
                    self.end_headers()
                    return
                text = ("I think it is somewhat relevant." if doc in outer.bad and n_same == 1
                        else f"M: 2, T: 1\n##final score: {grade_of(prompt)}")
                out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                                  "usage": {"prompt_tokens": 100, "completion_tokens": 5}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def camp_dir(tmp_path):
    sim = simulate(n_runs=3, n_topics=2, depth=8, seed=3)
    d = write_campaign(sim, tmp_path / "c", pool_depth=5, docs=True)
    return d


def test_parse_grade_never_guesses():
    assert parse_grade("reasoning...\n##final score: 2") == 2
    assert parse_grade("##Final Score: **3**") == 3
    assert parse_grade(" 1 ") == 1
    assert parse_grade("maybe 2 or 3") is None
    assert parse_grade("##final score: 7") is None
    assert parse_grade("") is None


def test_auto_judge_records_source_reruns_free_and_retries_bad_answers(camp_dir):
    cfg = camp_dir / "campaign.yaml"            # the fake model grades 0-3: the campaign's scale gets a 3
    cfg.write_text(cfg.read_text().replace("  binary_threshold:", "    3:\n      label: perfect\n      gain: 7\n"
                                                                   "  binary_threshold:", 1))
    camp = load_campaign(camp_dir)
    assert sorted(camp.scale()) == [0, 1, 2, 3]
    pairs = pooled_pairs(camp, depth=3)
    docs = list(pairs["doc"])
    from engine.judging.auto import read_docs
    dd = read_docs(camp_dir)
    passage = {d: f"{dd[d].get('title', '')}\n{dd[d].get('text', '')}".strip() for d in docs}
    with FakeLLM(bad=[passage[d] for d in docs[:2]], fail_first=[passage[docs[2]]]) as srv:
        st = JudgeSettings(srv.url, "fake-1", backoff=0.01, concurrency=3)
        res = run_auto_judge(camp, "llm", st, pairs)
        assert res.judged == len(pairs) and not res.failed
        assert res.unparsed == 2 and res.http_errors == 1
        assert len(srv.calls) == len(pairs) + 3
        assert all(c[0] == "/v1/chat/completions" and c[1] == "fake-1" for c in srv.calls)
        # grades recorded with their source
        log = [json.loads(x) for x in (camp_dir / "judgments" / "sources" / "llm.jsonl").read_text().splitlines()]
        assert {(r["kind"], r["model"], r["prompt_version"], r["assessor"]) for r in log} == \
            {("auto", "fake-1", "umbrela-v2", "llm")}
        errs = [json.loads(x) for x in (camp_dir / "judgments" / "sources" / "llm.errors.jsonl").read_text().splitlines()]
        assert sorted(e["doc"] for e in errs if e["error"] == "unparseable answer") == sorted(docs[:2])
        q = source_judgments(camp, "llm")
        topics = {r["topic"]: r for r in camp.topics().to_dict("records")}
        for t, d, g in q.head(5).itertuples(index=False):
            assert g == grade_of(render(DEFAULT_PROMPT, topics[t], passage[d]))
        assert [s.kind for s in list_sources(camp) if s.name == "llm"] == ["auto"]
        # a rerun makes no call
        n = len(srv.calls)
        res2 = run_auto_judge(camp, "llm", st, pairs)
        assert len(srv.calls) == n and res2.already == len(pairs) and res2.judged == 0
        # another source with the same prompt and model: from the cache, no call
        res3 = run_auto_judge(camp, "llm-copy", st, pairs)
        assert len(srv.calls) == n and res3.from_cache == len(pairs)
        assert source_judgments(camp, "llm-copy").equals(q)
        # a grade map (model 0-3 -> campaign 0-2) applies when recording, the cache keeps the model's grade
        st2 = JudgeSettings(srv.url, "fake-1", backoff=0.01, grade_map={3: 2})
        run_auto_judge(camp, "llm-mapped", st2, pairs)
        assert len(srv.calls) == n
        mapped = source_judgments(camp, "llm-mapped")
        assert (q["grade"] == 3).any() and mapped["grade"].tolist() == q["grade"].clip(upper=2).tolist()


def test_cli_gives_up_after_retries_and_reports(camp_dir):
    camp = load_campaign(camp_dir)
    pairs = pooled_pairs(camp, depth=1)
    from engine.judging.auto import read_docs
    dd = read_docs(camp_dir)
    with FakeLLM(bad=[f"{dd[d].get('title', '')}\n{dd[d].get('text', '')}".strip() for d in pairs["doc"]]) as srv:
        st = JudgeSettings(srv.url, "m", backoff=0.0, retries=0)
        res = run_auto_judge(camp, "x", st, pairs)
    assert len(res.failed) == len(pairs) and res.judged == 0


def test_kill_mid_way_resumes_without_duplicates(camp_dir):
    camp = load_campaign(camp_dir)
    pairs = pooled_pairs(camp, depth=5)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = camp_dir / "judgments" / "sources" / "llm-m.jsonl"
    with FakeLLM(delay=0.05) as srv:
        cmd = [sys.executable, "-m", "cranfield.cli", "judgments", "auto", str(camp_dir), "--endpoint", srv.url,
               "--model", "m", "--depth", "5", "--concurrency", "1", "--backoff", "0",
               "--grade-map", "3=2"]     # the fake model answers 0-3; the campaign's scale is 0-2
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if log.is_file() and len(log.read_text().splitlines()) >= 3:
                break
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.wait()
        n_before = len(log.read_text().splitlines())
        assert 3 <= n_before < len(pairs)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "estimate:" in r.stderr and f"{len(pairs) - n_before} to ask" in r.stderr
    keys = [json.loads(x)["key"] for x in log.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == len(pairs)
    assert len(srv.calls) <= len(pairs) + 1     # at most the one request in flight at the kill is repeated


def test_the_plans_token_estimate_is_that_of_the_rendered_prompts(camp_dir):
    """The plan counts each prompt's length without rendering it: the same estimate as rendering every
    prompt, for the default prompt and a template with {passage} twice, on passages with & < >."""
    from engine.judging.auto import estimate_tokens, plan, read_docs
    docs = camp_dir / "docs" / "docs.jsonl"
    recs = [json.loads(x) for x in docs.read_text().splitlines()]
    for i, r in enumerate(recs):
        r["text"] = r.get("text", "") + " & <b>" * (i % 3) + "é>" * (i % 2)
    docs.write_text("".join(json.dumps(r) + "\n" for r in recs))
    camp = load_campaign(camp_dir)
    pairs = pooled_pairs(camp, depth=8)
    dd = read_docs(camp_dir)
    topics = {str(r["topic"]): r for r in camp.topics().to_dict("records")}
    for template in (DEFAULT_PROMPT, "Q {query} & {topic}\n{passage}\n--\n{passage} {other} {narrative}"):
        st = JudgeSettings("http://127.0.0.1:9/v1", "m", prompt=template)
        pl = plan(camp, "x", st, pairs)
        want = sum(estimate_tokens(render(template, topics[t], f"{dd[d].get('title', '')}\n{dd[d].get('text', '')}".strip()))
                   for t, d, _k, _p in pl.pairs)
        assert len(pl.pairs) > 10 and pl.prompt_tokens == want


def test_judged_lines_are_record_lines_byte_for_byte(camp_dir):
    """The cache's and the source log's lines of asked pairs are json.dumps of their records, in the
    records' key order (the lines are encoded directly), with a model name that needs escapes and a grade
    map (model_grade)."""
    camp = load_campaign(camp_dir)
    pairs = pooled_pairs(camp, depth=3)
    with FakeLLM() as srv:
        st = JudgeSettings(srv.url, 'fäke "1"', backoff=0.01, concurrency=3, grade_map={3: 2}, scale=(0, 1, 2))
        res = run_auto_judge(camp, "llm", st, pairs)
    assert res.judged > 5
    order = {"autojudge.jsonl": ["key", "topic", "doc", "model", "prompt_version", "grade", "answer", "ts"],
             "llm.jsonl": ["topic", "doc", "grade", "assessor", "source", "kind", "model", "prompt_version",
                           "endpoint", "op", "key", "ts", "seconds", "prompt_tokens", "completion_tokens"]}
    mapped = 0
    for p in (camp_dir / ".cranfield-cache" / "autojudge.jsonl", camp_dir / "judgments" / "sources" / "llm.jsonl"):
        lines = p.read_bytes().splitlines(keepends=True)
        assert len(lines) == res.judged
        for ln in lines:
            rec = json.loads(ln)
            assert (json.dumps(rec, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode() == ln
            keys = list(rec)
            if "model_grade" in rec:
                mapped += 1
                assert keys[-1] == "model_grade" and rec["model_grade"] == 3 and rec["grade"] == 2
                keys = keys[:-1]
            assert keys == order[p.name] and rec["model"] == 'fäke "1"'
    assert mapped > 0


def test_the_one_pass_documents_reader_reads_what_the_line_reader_reads(tmp_path):
    """docs/docs.jsonl read in one pass equals the line reader's records wherever it is used, and every
    file it does not read as that reader would (other line ends, a byte-order mark, a line that is not one
    object, a lone surrogate, bad UTF-8) is left to the line reader."""
    import random

    from engine.judging.auto import _plain_docs
    from engine.formats.safeload import json_line
    rng = random.Random(5)
    good = [json.dumps({"id": f"d{i}", "title": t, "text": x}, ensure_ascii=a) for i, (t, x, a) in
            enumerate([("T", "plain", True), ("é", "ü\u2028x", False), ("", 'q"\\', True), ("x", "\x85", False)])]
    odd = ['{"id": "d9"', "[1]", "7", '\ufeff{"id": "b"}', '{"id": "s", "text": "\\ud800"}', "x\ry", '{"id": 1}\x0c']
    used = 0
    for _ in range(1500):
        lines = rng.choices(good, k=rng.randint(0, 6)) + rng.choices(["", "  "], k=rng.randint(0, 2))
        if rng.random() < 0.4:
            lines.append(rng.choice(odd))
        rng.shuffle(lines)
        raw = "\n".join(lines).encode() + rng.choice([b"", b"\n", b"\r\n"])
        got = _plain_docs(raw)
        if got is None:
            continue
        used += 1
        want = [json_line(x, "p", 1) for x in raw.decode().splitlines() if x.strip()]
        assert got == want, raw
        assert not any(o in lines for o in odd) and b"\r" not in raw
    assert used > 50 and _plain_docs(b"\xff\n") is None
