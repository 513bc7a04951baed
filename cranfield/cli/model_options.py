"""The options of every command that calls a model behind an OpenAI-compatible endpoint (`judgments auto`,
the `nuggets` commands that create or assign nuggets): defined once. The defaults are those of
engine.judging.auto.JudgeSettings (tests/test_model_options.py checks they match; the engine module is not
imported here so that `cranfield --help` stays light)."""
from __future__ import annotations

DEFAULTS = {"concurrency": 4, "retries": 3, "backoff": 1.0, "timeout": 60.0, "api_key_env": "OPENAI_API_KEY",
            "max_reply_bytes": 4 * 1024 * 1024, "deadline": 300.0, "max_failures": 10}


def add_model_options(p) -> None:
    """Add --endpoint, --model, --api-key-env, --timeout, --retries, --backoff, --concurrency and the model
    client's limits --max-reply-bytes, --deadline, --max-failures (docs/reliability.md) to parser `p`."""
    p.add_argument("--endpoint", required=True, help="base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", required=True, help="the model name the endpoint serves")
    p.add_argument("--api-key-env", default=DEFAULTS["api_key_env"],
                   help=f"environment variable holding the API key (default {DEFAULTS['api_key_env']})")
    p.add_argument("--timeout", type=float, default=DEFAULTS["timeout"],
                   help=f"seconds for one request: connect, send and the complete answer "
                        f"(default {DEFAULTS['timeout']:g})")
    p.add_argument("--retries", type=int, default=DEFAULTS["retries"],
                   help=f"extra attempts after a failed request (default {DEFAULTS['retries']})")
    p.add_argument("--backoff", type=float, default=DEFAULTS["backoff"],
                   help=f"seconds before the first retry, doubled each time (default {DEFAULTS['backoff']:g})")
    p.add_argument("--concurrency", type=int, default=DEFAULTS["concurrency"],
                   help=f"parallel requests (default {DEFAULTS['concurrency']})")
    p.add_argument("--deadline", type=float, default=DEFAULTS["deadline"],
                   help=f"seconds for one call with all its retries and waits (default {DEFAULTS['deadline']:g})")
    p.add_argument("--max-reply-bytes", type=int, default=DEFAULTS["max_reply_bytes"],
                   help=f"refuse a reply longer than this many bytes (default {DEFAULTS['max_reply_bytes']})")
    p.add_argument("--max-failures", type=int, default=DEFAULTS["max_failures"],
                   help=f"stop after this many failed requests in a row (default {DEFAULTS['max_failures']}; "
                        f"0: never stop)")


def model_settings(args) -> dict:
    """The JudgeSettings keywords these options give (the API key read from the named variable)."""
    import os
    return {"endpoint": args.endpoint, "model": args.model, "concurrency": args.concurrency,
            "retries": args.retries, "backoff": args.backoff, "timeout": args.timeout,
            "api_key": os.environ.get(args.api_key_env) or None, "deadline": args.deadline,
            "max_bytes": args.max_reply_bytes, "max_failures": args.max_failures}
