"""`cranfield serve` (issue 36, item 3): assessor tokens (made, listed, refused, revoked; stored hashed,
never read as judgments), the server bound to 127.0.0.1 by default and admitting nobody without a token,
a revoked token ending a running session, the trusted proxy header only on loopback, and the desk app
(tui.desk_app) reaching no organizer screen by any key while its judgments carry the assessor."""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from _cli import ROOT, assert_clean_refusal, cli
from _serve import Served
from tui.testing import deepen_demo_pool, private_copy, run_async, settle

DEMO = ROOT / "campaigns" / "demo"


def campaign(tmp_path: Path) -> Path:
    camp = private_copy(DEMO, tmp_path / "c", skip=("pools", "log.jsonl*"))
    deepen_demo_pool(camp, 60)
    return camp


# ---------------------------------------------------------------------- tokens
def test_tokens_are_stored_hashed_verified_and_revoked(tmp_path):
    from engine.campaign.campaign import load_campaign
    from engine.judging import tokens as tk
    camp = campaign(tmp_path)
    rec, token = tk.add_token(camp, "alice")
    assert token.startswith("cft_") and len(token) > 40
    text = (camp / "judgments" / "serve-tokens.json").read_text()
    assert token not in text and tk.digest(token) in text            # hashed, never the token itself
    assert tk.verify(camp, token).assessor == "alice"
    assert tk.verify(camp, token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert tk.verify(camp, "") is None and tk.verify(camp, None) is None
    _, t2 = tk.add_token(camp, "bob")
    assert tk.verify(camp, t2).assessor == "bob"
    assert [t.id for t in tk.revoke(camp, assessor="alice")] == [rec.id]
    assert tk.verify(camp, token) is None and tk.verify(camp, t2).assessor == "bob"
    assert not tk.token_active(camp, rec.id)
    with pytest.raises(Exception, match="no token in force"):
        tk.revoke(camp, assessor="alice")
    c = load_campaign(camp)                                   # a campaign file, never a judgment file
    assert all(p.name != "serve-tokens.json" for p in c.judgment_files())
    assert not [w for w in c.warnings if "serve-tokens" in str(w)]
    with pytest.raises(Exception, match="assessor"):
        tk.add_token(camp, "bad name\x1b[31m")


def test_token_commands_run_as_separate_processes(tmp_path):
    camp = campaign(tmp_path)
    r = cli("serve", "--help")
    assert r.rc == 0 and "--trust-header" in r.out and "127.0.0.1" in r.out
    r = cli("serve", "token", "add", camp, "--assessor", "alice")
    assert r.rc == 0, r.text
    token = r.out.strip()
    assert token.startswith("cft_") and "alice" in r.err and token not in r.err
    r = cli("serve", "token", "list", "--campaign", camp)
    assert r.rc == 0 and "alice" in r.out and "in force" in r.out and token not in r.out
    r = cli("serve", "token", "revoke", camp, "--assessor", "alice")
    assert r.rc == 0 and "revoked" in r.out
    r = cli("serve", "token", "list", camp)
    assert "revoked" in r.out and "in force" not in r.out
    assert_clean_refusal(cli("serve", "token", "revoke", camp, "--assessor", "alice"), "no token in force")
    assert_clean_refusal(cli("serve", "token", "add", camp), "--assessor")
    assert_clean_refusal(cli("serve", tmp_path / "nowhere"), "not a campaign")
    assert_clean_refusal(cli("serve", camp, "--host", "0.0.0.0", "--trust-header", "X-Remote-User"),
                         "--trust-header", "127.0.0.1")
    r = cli("status", camp)                                    # the token file is no bad judgment file
    assert r.rc == 0 and "serve-tokens" not in r.text


# ---------------------------------------------------------------------- the server
def listening(port: int) -> list[str]:
    """The local addresses listening on `port` (from /proc/net/tcp and tcp6)."""
    out = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for r in rows:
            f = r.split()
            addr, p = f[1].rsplit(":", 1)
            if int(p, 16) == port and f[3] == "0A":
                out.append(addr)
    return out


async def _http(port: int, path: str, **kw):
    import aiohttp
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as s:
        async with s.get(f"http://127.0.0.1:{port}{path}", allow_redirects=False, **kw) as r:
            return r.status, dict(r.headers), await r.text()


def test_server_binds_to_loopback_and_admits_only_tokens(tmp_path):
    from engine.judging import tokens as tk
    camp = campaign(tmp_path)
    _, token = tk.add_token(camp, "alice")
    srv = Served(camp)
    try:
        assert listening(srv.port) == ["0100007F"]           # 127.0.0.1 alone, by default
        status, _, body = asyncio.run(_http(srv.port, "/"))
        assert status == 401 and "Sign in" in body and "textual.js" not in body
        status, _, body = asyncio.run(_http(srv.port, "/?token=cft_wrong"))
        assert status == 403 and "not valid" in body
        status, h, _ = asyncio.run(_http(srv.port, f"/?token={token}"))
        assert status == 303 and h["Location"] == "/" and h["Referrer-Policy"] == "no-referrer"
        assert "HttpOnly" in h["Set-Cookie"] and "SameSite=Strict" in h["Set-Cookie"]
        status, h, body = asyncio.run(_http(srv.port, "/", headers={"Cookie": f"cranfield_desk={token}"}))
        assert status == 200 and "textual.js" in body and h["X-Frame-Options"] == "DENY"
        status, _, _ = asyncio.run(_http(srv.port, "/ws"))
        assert status == 403
        status, _, _ = asyncio.run(_http(srv.port, "/ws", headers={"Cookie": "cranfield_desk=cft_wrong"}))
        assert status == 403
        got = asyncio.run(_session_until_revoked(srv.port, camp, token))
        assert got["screen_bytes"] > 1000 and got["closed_after"] < 3.0, got
    finally:
        err = srv.stop()
    assert "alice: signed in" in err and "alice: session started" in err and "token revoked" in err
    assert token not in err                                   # no token in the server's log


async def _session_until_revoked(port: int, camp: Path, token: str) -> dict:
    """A websocket session as the browser opens it: the desk draws; revoking the token ends it."""
    import aiohttp
    from engine.judging import tokens as tk
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(f"http://127.0.0.1:{port}/ws?width=80&height=24",
                                headers={"Cookie": f"cranfield_desk={token}"}) as ws:
            n, t0 = 0, time.time()
            while n < 1000 and time.time() - t0 < 30:
                m = await ws.receive(timeout=30)
                if m.type == aiohttp.WSMsgType.BINARY:
                    n += len(m.data)
            await ws.send_json(["stdin", "s"])                # a keypress while the token is in force
            tk.revoke(camp, assessor="alice")
            t1 = time.time()
            while True:
                m = await ws.receive(timeout=10)
                if m.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                    break
            return {"screen_bytes": n, "closed_after": time.time() - t1}


def test_websocket_from_another_site_is_refused(tmp_path):
    from engine.judging import tokens as tk
    camp = campaign(tmp_path)
    _, token = tk.add_token(camp, "alice")
    srv = Served(camp)
    try:
        status, _, _ = asyncio.run(_http(srv.port, "/ws", headers={"Cookie": f"cranfield_desk={token}",
                                                                   "Origin": "http://evil.example"}))
        assert status == 403
    finally:
        srv.stop()


def test_trusted_header_names_the_assessor_only_when_asked(tmp_path):
    camp = campaign(tmp_path)
    srv = Served(camp, "--trust-header", "X-Remote-User")
    try:
        status, _, body = asyncio.run(_http(srv.port, "/"))
        assert status == 401 and "X-Remote-User" in body
        status, _, body = asyncio.run(_http(srv.port, "/", headers={"X-Remote-User": "carol"}))
        assert status == 200 and "carol" in body
        status, _, _ = asyncio.run(_http(srv.port, "/", headers={"X-Remote-User": "../bad name"}))
        assert status == 401
    finally:
        srv.stop()
    srv = Served(camp)                                        # without --trust-header the header is nothing
    try:
        status, _, _ = asyncio.run(_http(srv.port, "/", headers={"X-Remote-User": "carol"}))
        assert status == 401
    finally:
        srv.stop()


# ---------------------------------------------------------------------- the desk app
DESK_SCREENS = {"JudgeScreen", "DeskAssignScreen", "HelpScreen", "ChoiceScreen", "TextPrompt",
                "AssignModeScreen", "PassagesScreen", "Screen"}


def every_key() -> list[str]:
    """Every key bound anywhere in the TUI (the main app and every screen), plus every letter and digit."""
    import importlib
    import inspect
    import pkgutil

    from textual.binding import Binding
    from textual.dom import DOMNode

    import tui
    keys = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    keys |= {"ctrl+p", "ctrl+r", "ctrl+s", "ctrl+e", "ctrl+o", "ctrl+c", "ctrl+backslash", "tab", "enter",
             "question_mark", "slash", "colon", "left_square_bracket", "right_square_bracket"}
    mods = [importlib.import_module(f"tui.{m.name}") for m in pkgutil.walk_packages(tui.__path__)
            if m.name not in ("desk_app",) and not m.name.startswith("__")]
    mods += [importlib.import_module(f"tui.screens.{m.name}")
             for m in pkgutil.iter_modules([str(Path(tui.__file__).parent / "screens")])]
    for mod in mods:
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, DOMNode):
                for b in getattr(cls, "BINDINGS", []):
                    b = b if isinstance(b, Binding) else Binding(*b)
                    keys |= {k.strip() for k in b.key.split(",")}
    return sorted(keys - {"escape", "ctrl+q"})


@run_async
async def test_no_organizer_screen_is_reachable_by_any_key_from_the_desk(tmp_path):
    from tui.desk_app import DeskApp
    camp = campaign(tmp_path)
    keys = every_key()
    assert {"h", "l", "p", "m", "v", "c", "x", "o", "g", "k", "ctrl+r", "e"} <= set(keys)
    app = DeskApp(camp, "alice")
    seen = set()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for mode in ("j", "N"):
            for k in keys:
                await pilot.press(mode, k)
                await pilot.pause()
                names = {type(s).__name__ for s in app.screen_stack}
                seen |= names
                assert names <= DESK_SCREENS, (mode, k, names)
                assert app.current_mode in ("judge", "assign"), (mode, k)
                for _ in range(4):
                    if len(app.screen_stack) == 1:
                        break
                    await pilot.press("escape")
                    await pilot.pause()
        await settle(pilot, 1, errors_ok=True)
        assert {type(s).__name__ for s in app.screen_stack} <= DESK_SCREENS
        assert not [w for w in app.workers if w.is_running and w.group == "campaign"]
    assert {"JudgeScreen", "DeskAssignScreen", "HelpScreen"} <= seen
    assert not (camp / "exports").exists()                   # `e` exported nothing


@run_async
async def test_desk_judgments_and_leases_carry_the_assessor_in_the_terminal_form(tmp_path):
    from engine.judging.sessions import read_leases
    from engine.judging.sessions import record_action
    from tui.desk_app import DeskApp
    camp = campaign(tmp_path)
    app = DeskApp(camp, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        scr = app.screen
        topic, doc = scr.topic, scr.doc
        assert doc is not None
        await pilot.press("1")
        await settle(pilot, 1)
        nxt = scr.doc
    held = [r for r in read_leases(camp) if r.get("op") == "lease"]
    assert {r["assessor"] for r in held} == {"alice"}
    assert any(r["doc"] == nxt for r in held)
    kept = [r for r in read_leases(camp) if r["doc"] == nxt and r["op"] != "lease"]
    assert kept == []                                          # the session's end kept alice's lease
    record_action(camp, topic, "D401-1", 0, "term", 2.0, "depth")   # what the terminal's Judging screen writes
    lines = [json.loads(x) for x in (camp / "judgments" / "log.jsonl").read_text().splitlines()]
    mine, theirs = lines[0], lines[-1]
    assert (mine["topic"], mine["doc"], mine["grade"], mine["assessor"]) == (topic, doc, 1, "alice")
    assert set(mine) == set(theirs) and mine["action"] == theirs["action"] == "judge"   # one form
    assert type(mine["ts"]) is type(theirs["ts"]) and mine["strategy"] == theirs["strategy"]


@run_async
async def test_desk_assigns_nuggets_under_the_assessor_and_cannot_author_them(tmp_path):
    from engine.nuggets.simulate import simulate_rag, write_rag_campaign
    from engine.nuggets.store import add_nuggets, current_nuggets, read_assignments
    from tui.desk_app import DeskApp
    camp = write_rag_campaign(simulate_rag(3, 2, nuggets=(2, 3), seed=4), tmp_path / "r", with_nuggets=False)
    add_nuggets(camp, "q1", [("fact one", "vital"), ("fact two", "okay")], by="organizer")
    app = DeskApp(camp, "alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, errors_ok=True)
        await pilot.press("N")
        await settle(pilot, 1)
        assert type(app.screen).__name__ == "DeskAssignScreen" and app.screen.topics == ["q1"]
        assert "0/6 assessed" in str(app.screen.query_one("OptionList").get_option_at_index(0).prompt)
        for k in ("a", "r", "i", "d"):                         # the Nuggets screen's authoring keys: nothing
            await pilot.press(k)
            await settle(pilot, 1, errors_ok=True)
        await pilot.press("enter")
        await settle(pilot, 1)
        assert type(app.screen).__name__ == "AssignModeScreen"
        await pilot.press("s")
        await settle(pilot, 1)
        await pilot.press("escape")
        await settle(pilot, 1)
        assert "1/6 assessed" in str(app.screen.query_one("OptionList").get_option_at_index(0).prompt)
    a = read_assignments(camp, "human")
    assert len(a) == 1 and list(a["assessor"]) == ["alice"] and list(a["label"]) == ["support"]
    assert list(current_nuggets(camp, "q1")["text"]) == ["fact one", "fact two"]     # no nugget authored
