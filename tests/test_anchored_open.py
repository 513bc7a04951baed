"""Issue 34, item 1 (static): engine.util.fs is the one module that opens files. Any other module of
engine/, cranfield/ or tui/ that opens, writes, renames, removes, lists or creates a file by its name
(builtin open, Path.read_text/write_text/read_bytes/write_bytes/open/mkdir/unlink/glob/iterdir, os.open,
os.replace/rename/unlink/remove/mkdir/makedirs/listdir/scandir, shutil's file operations,
sqlite3.connect, pyarrow/pandas/numpy readers and writers given a name) fails this test, unless the
call is on the short allowlist below (file, function, why it is no campaign file). A library call is
fine when what it gets comes from fs (`with fs.open(...) as fh`, `fs.proc_path`, an in-memory buffer)."""
from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "cranfield", "tui")
FS = "engine/util/fs/"

# (file, function) -> why it is not a campaign file
ALLOWLIST: dict[tuple[str, str], str] = {
    ("engine/util/confine.py", "person_roots"): "the person's own config ($XDG_CONFIG_HOME/cranfield), read to "
                                                "learn the grants the anchors come from",
    ("tui/testing.py", "private_copy"): "the test harness copies a campaign into a fresh temporary folder",
    ("cranfield/cli/cmd_demo.py", "user_demo"): "the person's own $XDG_DATA_HOME/cranfield/demo, copied from the "
                                                "bundled demo beside it and renamed into place",
    ("engine/evaluation/store/parts.py", "_PartWriter"): "writes to the /proc/self/fd path of the anchored "
                                                         "temporary file fs.atomic_proc_path gave its caller",
    ("engine/evaluation/store/heads.py", "HeadWriter"): "writes to the /proc/self/fd path of the anchored "
                                                        "temporary file fs.atomic_proc_path gave it",
}

PATH_METHODS = {"read_text", "write_text", "read_bytes", "write_bytes", "mkdir", "unlink", "rmdir", "iterdir",
                "glob", "rglob", "touch", "symlink_to", "hardlink_to", "rename", "replace", "open"}
OS_CALLS = {"open", "replace", "rename", "renames", "unlink", "remove", "mkdir", "makedirs", "rmdir",
            "removedirs", "link", "symlink", "truncate", "listdir", "scandir", "walk"}
SHUTIL_CALLS = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree", "copymode", "copystat"}
OPENER_MODULES = {"io", "builtins", "gzip", "bz2", "lzma", "tarfile", "zipfile", "codecs", "webbrowser"}
# module alias -> functions that take a name to open (allowed only on something fs gave)
LIB_CALLS = {
    "pq": {"read_table", "write_table", "ParquetFile", "ParquetWriter", "read_metadata", "read_schema",
           "write_to_dataset", "read_pandas"},
    "pa": {"memory_map", "OSFile", "input_stream", "output_stream", "create_memory_map"},
    "pd": {"read_csv", "read_parquet", "read_json", "read_table", "read_feather", "read_pickle", "read_excel"},
    "np": {"load", "save", "savez", "savez_compressed", "fromfile", "memmap", "loadtxt", "savetxt", "genfromtxt"},
    "sqlite3": {"connect"},
    "pacsv": {"CSVWriter", "write_csv", "read_csv", "open_csv"},
    "feather": {"read_table", "write_feather", "read_feather"},
}
SECOND_ARG = {"write_table", "write_csv", "write_feather", "write_to_dataset"}
WRITER_METHODS = {"to_csv", "to_parquet", "to_json", "to_feather", "to_pickle", "tofile", "write_csv"}
SAFE_RECEIVERS = {"fs", "self", "cls", "super", "DocStore", "RunStore", "str", "re"}
STRING_METHODS_ON = (ast.Constant, ast.JoinedStr)


def _is_fs_call(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "fs")


def _in_memory(node) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in (":memory:", None)
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in {"StringIO", "BytesIO", "BufferReader", "BufferOutputStream", "open_stream"}
    return False


class _Checker(ast.NodeVisitor):
    def __init__(self, rel: str):
        self.rel = rel
        self.stack: list[str] = []
        self.fs_names: list[set[str]] = [set()]
        self.found: list[tuple[str, str, int, str]] = []

    def _func(self, node):
        self.stack.append(node.name)
        names = set()
        for sub in ast.walk(node):                  # names bound from fs: with fs.x(...) as N / N = fs.x(...)
            if isinstance(sub, ast.withitem) and _is_fs_call(sub.context_expr) and \
                    isinstance(sub.optional_vars, ast.Name):
                names.add(sub.optional_vars.id)
            if isinstance(sub, ast.Assign) and (_is_fs_call(sub.value) or isinstance(sub.value, ast.ListComp)
                                                and _is_fs_call(sub.value.elt)):
                names.update(t.id for t in sub.targets if isinstance(t, ast.Name))
        for sub in ast.walk(node):                  # ... and what a comprehension draws from them
            if isinstance(sub, ast.comprehension) and isinstance(sub.iter, ast.Name) and sub.iter.id in names \
                    and isinstance(sub.target, ast.Name):
                names.add(sub.target.id)
        self.fs_names.append(names)
        self.generic_visit(node)
        self.fs_names.pop()
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _func

    def visit_ClassDef(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def _from_fs(self, node) -> bool:
        if node is None or _is_fs_call(node) or _in_memory(node):
            return True
        return isinstance(node, ast.Name) and any(node.id in s for s in self.fs_names)

    def _hit(self, node, form: str) -> None:
        func = self.stack[0] if self.stack else "<module>"
        fn = next((s for s in self.stack if (self.rel, s) in ALLOWLIST), func)
        self.found.append((self.rel, fn, node.lineno, form))

    def visit_Call(self, node):
        f = node.func
        first = node.args[0] if node.args else None
        if isinstance(f, ast.Name) and f.id == "open":
            self._hit(node, "open()")
        elif isinstance(f, ast.Attribute):
            recv = f.value
            rname = recv.id if isinstance(recv, ast.Name) else None
            if rname == "os" and f.attr in OS_CALLS and not (f.attr == "open" and _devnull(first)):
                self._hit(node, f"os.{f.attr}()")
            elif rname == "shutil" and f.attr in SHUTIL_CALLS:
                self._hit(node, f"shutil.{f.attr}()")
            elif rname in LIB_CALLS and f.attr in LIB_CALLS[rname]:
                if f.attr in SECOND_ARG:                    # write_table(table, where): where is second
                    first = node.args[1] if len(node.args) > 1 else next(
                        (k.value for k in node.keywords if k.arg in ("where", "output_file", "dest")), None)
                if not self._from_fs(first):
                    self._hit(node, f"{rname}.{f.attr}() on a name")
            elif rname in OPENER_MODULES and f.attr == "open":
                if not self._from_fs(first):
                    self._hit(node, f"{rname}.open()")
            elif f.attr in WRITER_METHODS:
                target = first if first is not None else next(
                    (k.value for k in node.keywords if k.arg in ("path_or_buf", "path", "file")), None)
                if not self._from_fs(target):
                    self._hit(node, f".{f.attr}() on a name")
            elif f.attr in PATH_METHODS and rname not in SAFE_RECEIVERS and rname not in OPENER_MODULES \
                    and rname not in LIB_CALLS and not isinstance(recv, STRING_METHODS_ON):
                if f.attr in ("replace", "rename", "open") and not _pathish(recv):
                    pass                                    # str.replace, DataFrame.rename, a screen's open
                else:
                    self._hit(node, f"Path.{f.attr}()")
        self.generic_visit(node)


def _devnull(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "devnull"


def _pathish(node) -> bool:
    """An expression that is plainly a path: Path(...), a / join, .parent, .with_name/.with_suffix."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("Path", "PurePath"):
            return True
        if isinstance(f, ast.Attribute) and f.attr in ("with_name", "with_suffix", "joinpath", "resolve",
                                                       "absolute", "expanduser"):
            return True
    if isinstance(node, ast.Attribute) and node.attr in ("parent", "path", "dir", "root"):
        return True
    return isinstance(node, ast.Name) and node.id in ("p", "path", "root", "tmp", "d", "folder", "dest", "out",
                                                      "target", "src", "dst", "cfg", "cfg_path", "log", "part")


def bypasses(root: Path = ROOT) -> list[tuple[str, str, int, str]]:
    """Every call that goes around engine.util.fs: (file, function, line, form), the allowlist excluded."""
    out = []
    for pkg in PACKAGES:
        for py in sorted((root / pkg).rglob("*.py")):
            rel = py.relative_to(root).as_posix()
            if rel.startswith(FS):
                continue
            c = _Checker(rel)
            c.visit(ast.parse(py.read_text(encoding="utf-8"), rel))
            out += c.found
    return out


def test_nothing_goes_around_the_anchored_open():
    found = [b for b in bypasses() if (b[0], b[1]) not in ALLOWLIST]
    assert not found, "opens outside engine.util.fs:\n" + "\n".join(f"{f}:{ln} {fn}: {form}"
                                                                   for f, fn, ln, form in found)


def test_every_allowlist_entry_is_still_needed():
    used = {(f, fn) for f, fn, _, _ in bypasses()}
    assert set(ALLOWLIST) <= used, f"stale allowlist entries: {sorted(set(ALLOWLIST) - used)}"


PLANTED = {
    "open": "open(p, 'a').write('x')",
    "write_text": "(Path(p) / 'log.jsonl').write_text('x')",
    "read_text": "p.read_text()",
    "read_bytes": "p.read_bytes()",
    "write_bytes": "p.write_bytes(b'x')",
    "path_open": "Path(p).open('w')",
    "mkdir": "p.mkdir(parents=True)",
    "unlink": "p.unlink()",
    "glob": "p.glob('*.txt')",
    "iterdir": "p.iterdir()",
    "os.open": "os.open(p, os.O_RDONLY)",
    "os.replace": "os.replace(p, q)",
    "os.rename": "os.rename(p, q)",
    "os.unlink": "os.unlink(p)",
    "os.remove": "os.remove(p)",
    "os.mkdir": "os.mkdir(p)",
    "os.makedirs": "os.makedirs(p, exist_ok=True)",
    "os.listdir": "os.listdir(p)",
    "path_replace": "Path(p).replace(q)",
    "shutil.move": "shutil.move(p, q)",
    "shutil.copyfile": "shutil.copyfile(p, q)",
    "shutil.rmtree": "shutil.rmtree(p)",
    "sqlite3": "sqlite3.connect(str(p))",
    "pq.read_table": "pq.read_table(p)",
    "pq.write_table": "pq.write_table(t, p)",
    "pq.ParquetFile": "pq.ParquetFile(p)",
    "pd.read_csv": "pd.read_csv(p, sep='\\t')",
    "to_csv": "df.to_csv(p)",
    "gzip.open": "gzip.open(p)",
    "np.load": "np.load(p)",
}


@pytest.mark.parametrize("form", sorted(PLANTED))
def test_a_planted_bypass_fails_the_check(tmp_path, form):
    """Each form of going around fs, planted in a copy of a real module, is found (file, function, line)."""
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    victim = "engine/judgments/log.py"
    (tmp_path / victim).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / victim, tmp_path / victim)
    assert [b for b in bypasses(tmp_path) if (b[0], b[1]) not in ALLOWLIST] == []
    src = (tmp_path / victim).read_text()
    src += textwrap.dedent(f"""

        def _planted(p, q, t, df):
            return {PLANTED[form]}
        """)
    (tmp_path / victim).write_text(src)
    found = [b for b in bypasses(tmp_path) if (b[0], b[1]) not in ALLOWLIST]
    assert len(found) == 1 and found[0][:2] == (victim, "_planted"), found
    assert found[0][2] == len(src.splitlines()), found


def test_what_fs_gives_passes_the_check(tmp_path):
    """The same libraries given what fs opened are not bypasses (so the check is not merely a grep)."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "cranfield").mkdir()
    (tmp_path / "tui").mkdir()
    (tmp_path / "engine" / "ok.py").write_text(textwrap.dedent("""
        def fine(p, t, df):
            with fs.open(p, "rb") as fh:
                pq.read_table(fh)
            with fs.proc_path(p) as name:
                pq.ParquetFile(name)
            with fs.atomic_file(p) as out:
                pq.write_table(t, out)
                df.to_csv(out)
            conn = sqlite3.connect(":memory:")
            pd.read_csv(io.StringIO("a"))
            "x".replace("a", "b")
            df.rename(columns={})
            return fs.read_text(p)
        """))
    assert bypasses(tmp_path) == []
