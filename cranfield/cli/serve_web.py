"""The web server of `cranfield serve`: textual-serve's aiohttp server with the assessor's identity.

Each browser session runs the assessor-only judging desk (`python -m tui.desk_app DIR --assessor NAME`,
started without a shell) and relays its screen over a websocket (textual-serve's protocol). A request is
admitted only with an assessor token in force (engine.judging.tokens; given once as `?token=` or on the
sign-in form, then kept in an HttpOnly, SameSite=Strict cookie) or, with `--trust-header H`, with the
identity a reverse proxy put in header H. A revoked token ends its sessions within a second and at the
next keypress. No downloads, no URLs opened, no access log (a token in a query must not reach a log).
"""
from __future__ import annotations

import asyncio
import html
import json
import logging
import sys
import time
from pathlib import Path

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from engine.judging import tokens as tk
from engine.util.names import shown

COOKIE = "cranfield_desk"
COOKIE_SECONDS = 24 * 3600
log = logging.getLogger("cranfield.serve")

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/css/xterm.css">
<script src="/static/js/textual.js"></script>
<style>
 html, body {{ margin: 0; height: 100%; background: #0c181f; color: #eee; font-family: monospace; }}
 #terminal {{ position: absolute; inset: 0; }}
 #ended {{ display: none; position: absolute; inset: 0; align-items: center; justify-content: center; }}
 body.-closed #ended {{ display: flex; background: #0c181fe0; z-index: 10; }}
 button {{ padding: 12px 24px; margin: 12px; font-family: monospace; }}
</style></head>
<body>
<div id="terminal" class="textual-terminal" data-font-size="{font}"></div>
<div id="ended"><div>The judging session ended (signed out, token revoked, or the server stopped).
 <button onclick="location.reload()">Reconnect</button></div></div>
<script>
 document.getElementById("terminal").dataset.sessionWebsocketUrl =
   (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
</script>
</body></html>
"""

SIGN_IN = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Cranfield judging desk: sign in</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>Cranfield judging desk</h1>
<p>{message}</p>
<form method="post" action="/login"><label>Your assessor token
<input name="token" type="password" size="50" autocomplete="off" autofocus></label>
<button type="submit">Sign in</button></form>
<p>The organizer of the campaign makes tokens (<code>cranfield serve token add DIR --assessor NAME</code>).</p>
</body></html>
"""


class DeskSession(AppService):
    """One desk process for one assessor: started without a shell; no files delivered, no URLs opened."""

    def __init__(self, argv: list[str], **kw):
        super().__init__(" ".join(argv), **kw)
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24):
        env = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env)
        self._stdin = process.stdin
        return process

    async def on_meta(self, data: bytes) -> None:
        meta = json.loads(data)
        if meta.get("type") == "exit":
            await self.remote_close()


class DeskServer(Server):
    """textual-serve's Server for one campaign's judging desk, with assessor authentication."""

    def __init__(self, root: Path, *, host: str = "127.0.0.1", port: int = 8000, trust_header: str | None = None,
                 secure_cookie: bool = False, quiet: bool = False):
        super().__init__("cranfield desk", host=host, port=port, title="Cranfield judging desk")
        self.root = Path(root).resolve()
        self.trust_header = trust_header
        self.secure_cookie = secure_cookie
        self.quiet = quiet
        self.sessions: dict[int, dict] = {}

    # ------------------------------------------------------------------ identity
    def identify(self, request: web.Request) -> tuple[str, str | None] | None:
        """(assessor, token id or None) of a request, or None when it is not admitted."""
        if self.trust_header:
            who = request.headers.get(self.trust_header, "").strip()
            try:
                return (tk.check_assessor(who), None) if who else None
            except Exception:            # noqa: BLE001 - a malformed name from the proxy admits nobody
                return None
        t = tk.verify(self.root, request.cookies.get(COOKIE))
        return (t.assessor, t.id) if t is not None else None

    def still_admitted(self, token_id: str | None) -> bool:
        return token_id is None or tk.token_active(self.root, token_id)

    def say(self, text: str) -> None:
        """One line of the server's log (stderr), with the time."""
        if not self.quiet:
            print(time.strftime("%Y-%m-%dT%H:%M:%S ") + text, file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ routes
    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._headers])
        app.add_routes([web.get("/", self.handle_index), web.post("/login", self.handle_login),
                        web.get("/logout", self.handle_logout), web.get("/ws", self.handle_websocket),
                        web.static("/static", self.statics_path)])
        return app

    @web.middleware
    async def _headers(self, request: web.Request, handler):
        try:
            resp = await handler(request)
        except web.HTTPException as exc:          # redirects and refusals get the same headers
            self._secure(request, exc)
            raise
        if not isinstance(resp, web.WebSocketResponse):
            self._secure(request, resp)
        return resp

    @staticmethod
    def _secure(request: web.Request, resp) -> None:
        resp.headers.setdefault("X-Frame-Options", "DENY")          # no framing: keys cannot be tricked in
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        if not request.path.startswith("/static"):
            resp.headers.setdefault("Cache-Control", "no-store")

    def _sign_in(self, message: str, status: int) -> web.Response:
        return web.Response(text=SIGN_IN.format(message=html.escape(message)), status=status,
                            content_type="text/html")

    def _admit(self, token: str | None) -> web.Response:
        t = tk.verify(self.root, token)
        if t is None:
            self.say("sign-in refused: unknown or revoked token")
            return self._sign_in("That token is not valid (unknown or revoked). Ask the organizer for one.", 403)
        resp = web.HTTPSeeOther("/")            # the token leaves the address bar and the history
        resp.set_cookie(COOKIE, token, max_age=COOKIE_SECONDS, httponly=True, samesite="Strict",
                        secure=self.secure_cookie, path="/")
        self.say(f"{shown(t.assessor)}: signed in (token {t.id})")
        return resp

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self.trust_header and "token" in request.query:
            return self._answer(self._admit(request.query["token"]))
        who = self.identify(request)
        if who is None:
            if self.trust_header:
                return web.Response(text=f"no assessor identity in header {self.trust_header} from the proxy\n",
                                    status=401)
            return self._sign_in("Sign in with the token the organizer gave you.", 401)
        font = tk_int(request.query.get("fontsize", "16"), 16)
        return web.Response(text=PAGE.format(title=html.escape(f"Judging desk: {who[0]}"), font=font),
                            content_type="text/html")

    async def handle_login(self, request: web.Request) -> web.StreamResponse:
        if self.trust_header:
            raise web.HTTPNotFound()
        form = await request.post()
        token = form.get("token")
        return self._answer(self._admit(str(token).strip() if isinstance(token, str) else None))

    @staticmethod
    def _answer(resp: web.Response) -> web.Response:
        if isinstance(resp, web.HTTPException):
            raise resp
        return resp

    async def handle_logout(self, request: web.Request) -> web.StreamResponse:
        resp = self._sign_in("Signed out.", 200)
        resp.del_cookie(COOKIE, path="/")
        return resp

    def _same_origin(self, request: web.Request) -> bool:
        """A browser's websocket comes from this server's own page (no other site may open one with the
        assessor's cookie); clients that are not browsers send no Origin."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        host = origin.split("://", 1)[-1].rstrip("/")
        return host == request.host or host == request.headers.get("X-Forwarded-Host", "")

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        who = self.identify(request)
        if who is None or not self._same_origin(request):
            self.say("websocket refused: " + ("not signed in" if who is None else "another site's page"))
            raise web.HTTPForbidden(text="not signed in\n")
        assessor, token_id = who
        ws = web.WebSocketResponse(heartbeat=15)
        width = tk_int(request.query.get("width", "80"), 80)
        height = tk_int(request.query.get("height", "24"), 24)
        argv = [sys.executable, "-m", "tui.desk_app", str(self.root), "--assessor", assessor]
        session: DeskSession | None = None
        watch = None
        try:
            await ws.prepare(request)
            session = DeskSession(argv, write_bytes=ws.send_bytes, write_str=ws.send_str, close=ws.close,
                                  download_manager=self.download_manager)
            await session.start(width, height)
            self.say(f"{shown(assessor)}: session started ({width}x{height})")

            async def watch_token() -> None:      # a revoked token ends the session within a second
                while not ws.closed:
                    await asyncio.sleep(1.0)
                    if not self.still_admitted(token_id):
                        self.say(f"{shown(assessor)}: token revoked, session ended")
                        await ws.close(code=4401, message=b"token revoked")
                        return
            watch = asyncio.create_task(watch_token()) if token_id is not None else None
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                if not self.still_admitted(token_id):
                    self.say(f"{shown(assessor)}: token revoked, session ended")
                    await ws.close(code=4401, message=b"token revoked")
                    break
                await self._relay(ws, session, msg.json())
        except asyncio.CancelledError:
            await ws.close()
        except Exception as exc:          # noqa: BLE001 - one session's failure must not stop the server
            log.exception(exc)
        finally:
            if watch is not None:
                watch.cancel()
            if session is not None:
                await session.stop()
                self.say(f"{shown(assessor)}: session ended")
        return ws

    @staticmethod
    async def _relay(ws, session: DeskSession, env) -> None:
        if not isinstance(env, list) or not env:
            return
        kind = env[0]
        if kind == "stdin" and isinstance(env[1], str):
            await session.send_bytes(env[1].encode("utf-8"))
        elif kind == "resize" and isinstance(env[1], dict):
            await session.set_terminal_size(tk_int(str(env[1].get("width")), 80),
                                            tk_int(str(env[1].get("height")), 24))
        elif kind == "ping":
            await ws.send_json(["pong", env[1]])
        elif kind == "blur":
            await session.blur()
        elif kind == "focus":
            await session.focus()

    async def on_startup(self, app: web.Application) -> None:
        pass

    def serve(self, debug: bool = False) -> None:
        """Serve until interrupted (SIGINT / SIGTERM end every session)."""
        import signal
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(s, self.request_exit)
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=None, access_log=None)


def tk_int(value: str, default: int) -> int:
    """`value` as a terminal dimension (1 to 1000), else `default`."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return default
    return v if 1 <= v <= 1000 else default


def is_loopback(host: str) -> bool:
    """`host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

