"""One set of model endpoint options (issue 35) and one assessor default: `judgments auto`, `nuggets
create` and `nuggets auto` take the same flags with the same defaults, those of the engine's JudgeSettings."""
from __future__ import annotations

import dataclasses

from _cli import cli

from cranfield.cli.model_options import DEFAULTS

COMMANDS = (("judgments", "auto"), ("nuggets", "create"), ("nuggets", "auto"))
FLAGS = ("--endpoint", "--model", "--api-key-env", "--timeout", "--retries", "--backoff", "--concurrency",
         "--deadline", "--max-reply-bytes", "--max-failures")


def test_defaults_are_the_engines():
    from engine.judging.auto import JudgeSettings
    fields = {f.name: f.default for f in dataclasses.fields(JudgeSettings)}
    for k in ("concurrency", "retries", "backoff", "timeout", "deadline", "max_reply_bytes", "max_failures"):
        assert DEFAULTS[k] == fields["max_bytes" if k == "max_reply_bytes" else k], k


def _parsed(cmd: tuple[str, str], *extra: str):
    from cranfield.cli.parser import build_parser
    p = build_parser(cmd[0])
    args = p.parse_args([*cmd, "camp", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", *extra])
    return {k: getattr(args, k) for k in ("endpoint", "model", "api_key_env", "timeout", "retries", "backoff",
                                          "concurrency", "deadline", "max_reply_bytes", "max_failures")}


def test_every_model_command_parses_the_same():
    want = {"endpoint": "http://127.0.0.1:9/v1", "model": "m", **DEFAULTS}
    for cmd in COMMANDS:
        assert _parsed(cmd) == want, cmd
        got = _parsed(cmd, "--timeout", "5", "--retries", "0", "--backoff", "0.5", "--concurrency", "2",
                      "--api-key-env", "MY_KEY")
        assert got == {**want, "timeout": 5.0, "retries": 0, "backoff": 0.5, "concurrency": 2,
                       "api_key_env": "MY_KEY"}, cmd


def test_help_of_every_model_command_lists_the_flags():
    for cmd in COMMANDS:
        r = cli(*cmd, "--help")
        assert r.rc == 0, r.text
        for flag in FLAGS:
            assert flag in r.out, (cmd, flag)


def test_one_assessor_default(monkeypatch):
    from engine.judging.checks import default_assessor
    monkeypatch.setenv("CRANFIELD_ASSESSOR", "ann")
    monkeypatch.setenv("USER", "bob")
    assert default_assessor() == "ann" and default_assessor("cy") == "cy"
    monkeypatch.delenv("CRANFIELD_ASSESSOR")
    assert default_assessor() == "bob"
    monkeypatch.delenv("USER")
    assert default_assessor() == ""
