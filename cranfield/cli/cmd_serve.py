"""`cranfield serve DIR`: the judging desk (relevance judging and nugget assignment, nothing else) in a
browser, one session per assessor, through textual-serve; `cranfield serve token add|list|revoke DIR`:
the assessors' tokens (docs/serve.md)."""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError

USAGE = "cranfield serve DIR [--host H] [--port P] [--trust-header HEADER] | serve token {add,list,revoke} DIR"


def register(sub) -> None:
    p = sub.add_parser(
        "serve", help="the judging desk in a browser for assessors (tokens: serve token add|list|revoke DIR)",
        usage=USAGE,
        description="Serve the judging desk (relevance judging and nugget assignment only: never a shell, "
                    "never the organizer's screens) to assessors' browsers. Each assessor signs in with a "
                    "token the organizer makes (`cranfield serve token add DIR --assessor NAME`, shown once, "
                    "stored hashed in judgments/serve-tokens.json; `token list`, `token revoke --assessor NAME "
                    "| --id ID`), or a reverse proxy names them in a header (--trust-header). Bound to "
                    "127.0.0.1 unless --host says otherwise; put a TLS proxy in front for other machines "
                    "(docs/serve.md).")
    p.add_argument("args", nargs="*", metavar="DIR | token {add,list,revoke} DIR",
                   help="the campaign directory to serve, or `token add|list|revoke DIR`")
    p.add_argument("--campaign", metavar="DIR", help="the campaign directory (the same as DIR)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--trust-header", metavar="HEADER",
                   help="take the assessor's name from this header, set by an authenticating reverse proxy "
                        "(e.g. X-Remote-User); tokens are then not used. Only with a loopback --host")
    p.add_argument("--secure-cookie", action="store_true",
                   help="mark the sign-in cookie Secure (the proxy in front serves HTTPS)")
    p.add_argument("--assessor", help="token add / revoke: the assessor")
    p.add_argument("--id", dest="token_id", help="token revoke: the token's id (from token list)")
    p.set_defaults(func=run)


def _campaign(d: str) -> Path:
    from engine.campaign.campaign import CONFIG_NAME
    root = Path(d)
    if not (root / CONFIG_NAME).is_file():
        raise CranfieldError(f"{d}: not a campaign directory (no {CONFIG_NAME}); give the campaign to serve")
    return root


def run(args) -> int:
    a = list(args.args) + ([args.campaign] if args.campaign else [])
    if not a:
        raise CranfieldError(f"serve: give the campaign directory; usage: {USAGE}")
    if a[0] == "token" and len(a) >= 2 and a[1] in ("add", "list", "revoke"):
        if len(a) != 3:
            raise CranfieldError(f"serve token {a[1]}: give the campaign directory, e.g. "
                                 f"cranfield serve token {a[1]} DIR" + (" --assessor NAME" if a[1] == "add" else ""))
        return _token(a[1], _campaign(a[2]), args)
    if len(a) != 1:
        raise CranfieldError(f"serve: expected one campaign directory, got {len(a)} arguments; usage: {USAGE}")
    return _serve(_campaign(a[0]), args)


def _token(op: str, root: Path, args) -> int:
    from engine.judging import tokens as tk
    from engine.util.names import shown
    if op == "add":
        if not args.assessor:
            raise CranfieldError("serve token add: give --assessor NAME (the name their judgments carry)")
        rec, token = tk.add_token(root, args.assessor)
        print(token)
        print(f"token {rec.id} for assessor {shown(rec.assessor)}: shown this once, stored hashed in "
              f"{tk.tokens_path(root)}; the assessor opens http://HOST:PORT/?token=TOKEN or pastes it "
              f"when signing in", file=sys.stderr)
        return 0
    if op == "list":
        import time
        from engine.formats.text_tables import format_table
        rows = [{"id": t.id, "assessor": shown(t.assessor),
                 "made": time.strftime("%Y-%m-%d %H:%M", time.localtime(t.created)),
                 "state": "in force" if t.active else
                 "revoked " + time.strftime("%Y-%m-%d %H:%M", time.localtime(t.revoked))}
                for t in tk.read_tokens(root)]
        if not rows:
            print(f"no tokens yet ({tk.tokens_path(root)}); make one with cranfield serve token add "
                  f"{root} --assessor NAME", file=sys.stderr)
            return 0
        import pandas as pd
        print(format_table(pd.DataFrame(rows)))
        return 0
    gone = tk.revoke(root, assessor=args.assessor, token_id=args.token_id)
    for t in gone:
        print(f"revoked token {t.id} of assessor {shown(t.assessor)}: its browser sessions end now")
    return 0


def _serve(root: Path, args) -> int:
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        raise CranfieldError("cranfield serve needs textual-serve: pip install 'cranfield[serve]' "
                             "(or pip install textual-serve)") from None
    from engine.judging import tokens as tk
    from .serve_web import DeskServer, is_loopback
    if args.trust_header and not is_loopback(args.host):
        raise CranfieldError(f"--trust-header {args.trust_header} with --host {args.host}: anyone reaching the port "
                             f"could name themselves; bind to 127.0.0.1 behind the proxy (docs/serve.md)")
    if not (1 <= args.port <= 65535):
        raise CranfieldError(f"--port {args.port}: give a port from 1 to 65535")
    if not args.trust_header and not any(t.active for t in tk.read_tokens(root)):
        print(f"no assessor token in force: make one with cranfield serve token add {root} --assessor NAME "
              f"(nobody can sign in until then)", file=sys.stderr)
    if not is_loopback(args.host):
        print(f"listening on {args.host}: without a TLS proxy in front, tokens and judgments travel in clear "
              f"(docs/serve.md)", file=sys.stderr)
    server = DeskServer(root, host=args.host, port=args.port, trust_header=args.trust_header,
                        secure_cookie=args.secure_cookie)
    print(f"serving the judging desk of {root} on http://{args.host}:{args.port}/ "
          f"({'identity from header ' + args.trust_header if args.trust_header else 'assessor tokens'}); "
          f"ctrl+c stops", file=sys.stderr, flush=True)
    server.serve()
    return 0
