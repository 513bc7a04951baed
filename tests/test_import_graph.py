"""engine/'s import graph, built from the source (every import, also those inside functions), has no
cycle, and no engine module imports the TUI except the CLI command that launches it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUI_LAUNCHER = "engine.cli.cmd_tui"


def _modules(pkg: str = "engine") -> dict[str, Path]:
    out = {}
    for p in sorted((ROOT / pkg).rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of everything `path` imports (a `from pkg import sub` names the submodule)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            for a in node.names:
                found.add(f"{mod}.{a.name}")
                found.add(mod)
    return found


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    mods = _modules()
    graph, raw = {}, {}
    for name, path in mods.items():
        imps = _imports(name, path)
        raw[name] = imps
        deps = set()
        for imp in imps:
            if imp in mods and imp != name:
                deps.add(imp)
        # `from pkg import sub` depends on pkg.sub, not on pkg's __init__ (unless a name of __init__ is used)
        for imp in list(deps):
            subs = {d for d in deps if d.startswith(imp + ".")}
            if subs and not any(i.rpartition(".")[0] == imp and i not in mods for i in imps):
                deps.discard(imp)
        graph[name] = deps
    return graph, raw


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(g) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_are_resolved():
    graph, _ = _graph()
    assert "engine.errors" in graph["engine.campaign"]
    assert "engine.measures.registry" in graph["engine.measures"]


def test_engine_has_no_import_cycle():
    graph, _ = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles in engine/: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_engine_does_not_import_tui():
    _, raw = _graph()
    bad = sorted(name for name, imps in raw.items()
                 if name != TUI_LAUNCHER and any(i == "tui" or i.startswith("tui.") for i in imps))
    assert not bad, f"engine modules importing tui: {bad}"
