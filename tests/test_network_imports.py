"""Issue 34: one client for every model call. No engine module but engine/util/modelclient.py reaches the
network (the simulation's loopback endpoint may serve with http.server): an AST check over engine/ of
every import, also inside functions, `from http import client`, a bare `import urllib`, and
`importlib.import_module("socket")` / `__import__("ssl")` with a literal name. The checker itself is
tested on planted bypasses."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NETWORK = ("socket", "ssl", "http", "urllib.request", "urllib.error", "socketserver", "asyncio", "requests",
           "httpx", "aiohttp", "urllib3", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc",
           "websocket", "websockets", "pycurl")
ALLOWED = {"engine/util/modelclient.py": NETWORK, "engine/nuggets/simulate.py": ("http.server",)}


def _hits(name: str, allowed=()) -> bool:
    def under(prefixes):
        return any(name == p or name.startswith(p + ".") for p in prefixes)
    return (under(NETWORK) or name == "urllib") and not under(allowed)


def network_imports(root: Path = ROOT) -> list[str]:
    """`file:line: name` for every network import in root/engine outside the allowed places."""
    out = []
    for p in sorted((root / "engine").rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        allowed = ALLOWED.get(rel, ())
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"), rel)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                # `from urllib import parse` is fine: for a package that is only a namespace, the names say
                names = ([f"{node.module}.{a.name}" for a in node.names] if node.module in ("http", "urllib")
                         else [node.module])
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                f = node.func
                fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if fname in ("import_module", "__import__"):
                    names = [node.args[0].value]
            out += [f"{rel}:{node.lineno}: {n}" for n in names if _hits(n, allowed)]
    return out


def test_no_engine_module_but_the_client_reaches_the_network():
    assert network_imports() == []


def test_the_client_is_where_the_network_is():
    src = (ROOT / "engine" / "util" / "modelclient.py").read_text()
    assert "import http.client" in src and "import socket" in src


@pytest.mark.parametrize("code, name", [
    ("import socket\n", "socket"),
    ("def f():\n    import urllib.request\n", "urllib.request"),
    ("from http import client\n", "http.client"),
    ("from http.client import HTTPConnection\n", "http.client"),
    ("import urllib\n", "urllib"),
    ("import ssl as s\n", "ssl"),
    ("import importlib\nimportlib.import_module('socket')\n", "socket"),
    ("__import__('requests')\n", "requests"),
    ("from urllib import request\n", "urllib.request"),
])
def test_the_checker_finds_a_planted_bypass(tmp_path, code, name):
    (tmp_path / "engine" / "judging").mkdir(parents=True)
    (tmp_path / "engine" / "judging" / "sneaky.py").write_text(code)
    (tmp_path / "engine" / "judging" / "fine.py").write_text("import urllib.parse\nfrom urllib import parse\n")
    found = network_imports(tmp_path)
    assert len(found) == 1 and found[0].startswith("engine/judging/sneaky.py:") and found[0].endswith(f": {name}")


def test_the_allowed_places_are_allowed_only_what_they_need(tmp_path):
    (tmp_path / "engine" / "util").mkdir(parents=True)
    (tmp_path / "engine" / "nuggets").mkdir(parents=True)
    (tmp_path / "engine" / "util" / "modelclient.py").write_text("import socket\nimport ssl\nimport http.client\n")
    (tmp_path / "engine" / "nuggets" / "simulate.py").write_text("from http.server import HTTPServer\nimport socket\n")
    assert network_imports(tmp_path) == ["engine/nuggets/simulate.py:2: socket"]
