"""The import graph of engine/, tui/ and cranfield/, built from the source (every import, also those inside
functions): modules have no cycle, engine packages import only what docs/architecture.md allows (a DAG,
written there once), no engine module imports a user interface (tui, the command line, textual, rich), the
TUI never imports the command line, and the command line imports the TUI only where it launches it."""
from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCH = ROOT / "docs" / "architecture.md"
UI = ("tui", "cranfield", "textual", "textual_plotext", "rich")
FACES = ("engine", "tui", "cranfield")
LAUNCHERS = {"cranfield.cli.cmd_tui": {"tui.app"}, "cranfield.cli.cmd_nuggets": {"tui.nuggets"}}
"""The command-line modules that launch a TUI app, and the TUI modules each may import (docs/architecture.md)."""


def _modules(pkg: str = "engine", root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for p in sorted((root / pkg).rglob("*.py")):
        parts = p.relative_to(root).with_suffix("").parts
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


def _graph(root: Path = ROOT, pkgs: tuple[str, ...] = ("engine",)) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    mods = {name: path for pkg in pkgs for name, path in _modules(pkg, root).items()}
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


def _package(module: str) -> str:
    """engine.formats.runs -> formats; engine.errors -> errors; engine -> engine."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _allowed() -> dict[str, set[str]]:
    """docs/architecture.md's table: package -> the packages it may import."""
    rows = {}
    for line in ARCH.read_text().splitlines():
        m = re.match(r"^\| ([a-z_]+) \| .* \|\s*([a-z_, ]*?)\s*\|$", line)
        if m and m.group(1) != "package":
            rows[m.group(1)] = {x.strip() for x in m.group(2).split(",") if x.strip()}
    return rows


def _violations(graph: dict[str, set[str]], allowed: dict[str, set[str]]) -> list[str]:
    out = []
    for mod, deps in sorted(graph.items()):
        a = _package(mod)
        if a not in allowed:
            out.append(f"{mod}: package '{a}' is not in docs/architecture.md")
            continue
        for d in sorted(deps):
            b = _package(d)
            if b != a and b not in allowed[a]:
                out.append(f"{mod} imports {d}: '{a}' may not import '{b}'")
    return out


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(g) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_are_resolved():
    graph, _ = _graph()
    assert "engine.errors" in graph["engine.campaign.campaign"]
    assert "engine.judgments.log" in graph["engine.pooling.files"]      # `from ..judgments.log import` in a function
    assert "engine.measures.registry" in graph["engine.measures"]


def test_engine_has_no_module_import_cycle():
    graph, _ = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles in engine/: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_written_order_is_a_dag_and_covers_every_package():
    allowed = _allowed()
    assert len(allowed) >= 19 and {"formats", "ranking", "evaluation", "judging", "campaign"} <= set(allowed)
    assert not _cycles(allowed), "docs/architecture.md's package order has a cycle"
    assert all(b in allowed for deps in allowed.values() for b in deps)
    present = {_package(m) for m in _modules()}
    assert present == set(allowed), f"packages without a row / rows without a package: {present ^ set(allowed)}"


def test_packages_import_only_what_the_architecture_allows():
    graph, _ = _graph()
    bad = _violations(graph, _allowed())
    assert not bad, "\n".join(bad)


def test_a_planted_back_import_fails(tmp_path):
    """A copy of engine/ with one back-import (the kernel importing the campaign) is caught."""
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "engine" / "ranking" / "order.py"
    target.write_text(target.read_text() + "\n\ndef _planted():\n    from ..campaign.campaign import load_campaign\n"
                      "    return load_campaign\n")
    graph, _ = _graph(tmp_path)
    bad = _violations(graph, _allowed())
    assert bad == ["engine.ranking.order imports engine.campaign.campaign: 'ranking' may not import 'campaign'"]
    assert not _violations(_graph()[0], _allowed())


def test_root_holds_at_most_four_modules_and_every_package_says_what_it_is_for():
    root_files = sorted(p.name for p in (ROOT / "engine").glob("*.py"))
    assert len(root_files) <= 4, root_files
    for init in sorted((ROOT / "engine").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and len(doc) > 40, f"{init.relative_to(ROOT)} needs a docstring saying what it is for"


def test_engine_imports_no_user_interface():
    _, raw = _graph()
    bad = sorted(f"{name} imports {i}" for name, imps in raw.items() for i in imps
                 if i.split(".")[0] in UI)
    assert not bad, f"engine modules importing a user interface: {bad}"


# ---------------------------------------------------------------------- the faces: tui/ and cranfield/

def _face_violations(root: Path = ROOT) -> list[str]:
    """Breaks of the faces' rules: a module cycle anywhere in engine/, tui/, cranfield/; a TUI import of
    the command line; a command-line import of the TUI outside LAUNCHERS (or at module level there)."""
    graph, raw = _graph(root, FACES)
    out = [f"import cycle: {' <-> '.join(c)}" for c in _cycles(graph)]
    for name, imps in sorted(raw.items()):
        imps = {i for i in imps if i.rpartition(".")[0] not in imps}   # `from m import x`: name m once
        top = name.split(".")[0]
        if top == "tui":
            out += [f"{name} imports {i}: the TUI never imports the command line" for i in sorted(imps)
                    if i.split(".")[0] == "cranfield"]
        elif top == "cranfield":
            tui = {i for i in imps if i.split(".")[0] == "tui"}
            allowed = LAUNCHERS.get(name, set())
            out += [f"{name} imports {i}: only {', '.join(sorted(LAUNCHERS))} import the TUI (to launch it)"
                    for i in sorted(tui) if not any(i == a or i.startswith(a + ".") for a in allowed)]
            if tui and name in LAUNCHERS:
                out += [f"{name} imports {i} at module level: import the TUI in the function that launches it"
                        for i in sorted(_module_level_imports(name, _path_of(root, name))) if i.split(".")[0] == "tui"]
    return out


def _path_of(root: Path, name: str) -> Path:
    p = root.joinpath(*name.split("."))
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def _module_level_imports(name: str, path: Path) -> set[str]:
    """The absolute names a module imports at its top level (not inside a function)."""
    tree = ast.parse(path.read_text(), str(path))
    top = ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], type_ignores=[])
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in top.body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif node.level:
            parts = package.split(".")
            found.add(".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else [])))
        else:
            found.add(node.module or "")
    return found


def test_tui_and_cli_follow_the_faces_rules():
    graph, _ = _graph(ROOT, FACES)
    assert {"tui.app", "tui.model.core", "tui.screens.leaderboard", "cranfield.cli.cmd_tui"} <= set(graph)
    assert "tui.model.core" in graph["tui.model"] and "tui.work" in graph["tui.app"]
    bad = _face_violations()
    assert not bad, "\n".join(bad)


def test_engine_imports_neither_face():
    _, raw = _graph(ROOT, FACES)
    bad = sorted(f"{n} imports {i}" for n, imps in raw.items() if n.split(".")[0] == "engine" for i in imps
                 if i.split(".")[0] in ("tui", "cranfield"))
    assert not bad, bad


def _copy_faces(tmp_path: Path) -> Path:
    for pkg in FACES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_planted_face_breaks_fail(tmp_path):
    """A TUI import of the CLI, a CLI import of the TUI outside its launchers, a module-level import in a
    launcher and a cycle inside tui/ are each caught."""
    root = _copy_faces(tmp_path)
    plant = "\n\ndef _planted():\n    from cranfield.cli.cmd_init import init_campaign\n"
    (root / "tui" / "testing.py").write_text((root / "tui" / "testing.py").read_text() + plant)
    (root / "cranfield" / "cli" / "cmd_eval.py").write_text((root / "cranfield" / "cli" / "cmd_eval.py").read_text()
                                                             + "\n\ndef _planted():\n    import tui.model\n")
    launcher = root / "cranfield" / "cli" / "cmd_tui.py"
    launcher.write_text("import tui.app\n" + launcher.read_text())
    (root / "tui" / "work.py").write_text((root / "tui" / "work.py").read_text()
                                          + "\n\ndef _planted():\n    from .app import CranfieldApp\n")
    bad = _face_violations(root)
    assert "tui.testing imports cranfield.cli.cmd_init: the TUI never imports the command line" in bad
    assert any(b.startswith("cranfield.cli.cmd_eval imports tui.model: only") for b in bad)
    assert ("cranfield.cli.cmd_tui imports tui.app at module level: import the TUI in the function that "
            "launches it") in bad
    assert any(b.startswith("import cycle:") and "tui.app" in b and "tui.work" in b for b in bad)
    assert len(bad) == 4, bad
