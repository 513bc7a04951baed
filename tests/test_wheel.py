"""The wheel holds what an installed Cranfield needs: every module, the TUI's styles and the bundled demo
(package data `cranfield/_demo`, mapped by pyproject.toml onto campaigns/demo, the one copy in the repository);
an installed layout finds the demo and makes the user's copy from it. The full install (a fresh venv, `cranfield
demo`, eval, the first frame) is CI's `.ci/wheel-smoke`."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import DEMO_CACHES, DEMO_SOURCE, ROOT, tree_hash

SOURCES = ("pyproject.toml", "setup.py", "README.md", "engine", "tui", "cranfield", "campaigns/demo")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of the sources (no build/ or *.egg-info is written into the tree); under
    CI, the one `.ci/wheel-smoke` built from this checkout and installed (left in CRANFIELD_TEST_WHEEL_DIR)."""
    ready = sorted(Path(os.environ.get("CRANFIELD_TEST_WHEEL_DIR") or "/nonexistent").glob("cranfield-*.whl"))
    if len(ready) == 1:
        return ready[0]
    tmp = tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        src, dst = ROOT / name, tmp / "src" / name
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", *DEMO_CACHES))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"),
                           str(tmp / "src")], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (tmp / "dist").glob("cranfield-*.whl")
    return built


def test_the_wheel_holds_every_module_the_styles_and_the_demo(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        demo = {n.removeprefix("cranfield/_demo/"): hashlib.sha256(z.read(n)).hexdigest()
                for n in names if n.startswith("cranfield/_demo/")}
    modules = {p.relative_to(ROOT).as_posix() for pkg in ("engine", "tui", "cranfield")
               for p in (ROOT / pkg).rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(modules - names)
    assert not missing, f"modules missing from the wheel (setup.py finds every engine*, tui*, cranfield* package): {missing}"
    styles = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tui").rglob("*.tcss")}
    assert styles and styles <= names
    # the demo campaign, byte for byte, and nothing else (no cache, no stray file)
    assert demo == tree_hash(DEMO_SOURCE)
    assert {"campaign.yaml", "judgments/qrels.txt", "topics/topics.tsv"} <= set(demo)
    assert len([n for n in demo if n.startswith("runs/")]) == 12


def _installed(site: Path, *argv: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """`python -S -c ...` with only the unpacked wheel on sys.path (-S: no site-packages, so neither the source
    tree nor an editable install of it can be imported)."""
    return subprocess.run([sys.executable, "-S", *argv], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**env, "PYTHONPATH": str(site)}, check=False)


def test_an_installed_layout_finds_the_demo_and_copies_it_for_the_user(wheel, tmp_path):
    site = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"XDG_DATA_HOME": str(tmp_path / "data")}
    probe = ("import cranfield\nfrom cranfield.cli import demo_campaign\n"
             "print(cranfield.__file__)\nprint(demo_campaign())")
    out = _installed(site, "-c", probe, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(site / "cranfield" / "__init__.py"), str(site / "cranfield" / "_demo")]
    # `cranfield demo` (the command, from the installed package) copies the bundled demo for the user
    out = _installed(site, "-m", "cranfield.cli", "demo", env=env, cwd=tmp_path)
    user = tmp_path / "data" / "cranfield" / "demo"
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(user) and tree_hash(user) == tree_hash(DEMO_SOURCE)
    # without its demo the installed package says so in one line (no traceback)
    shutil.rmtree(site / "cranfield" / "_demo")
    shutil.rmtree(user)
    out = _installed(site, "-m", "cranfield.cli", "demo", env=env, cwd=tmp_path)
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert out.stderr.startswith("cranfield: the bundled demo campaign is missing (looked in ")
    assert not user.exists()


def test_a_checkout_finds_campaigns_demo():
    from cranfield.cli import demo_campaign
    assert demo_campaign() == DEMO_SOURCE.resolve()
