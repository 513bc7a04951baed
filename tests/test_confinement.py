"""Issue 26: one confinement for every campaign path. Each path of the campaign (the list in
engine.util.confine.CAMPAIGN_PATHS) is replaced by a symbolic link to a copy outside the campaign; every
command that reads or writes it must refuse before opening anything, and nothing outside may change."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from _cli import assert_clean_refusal, cli, demo_copy

RUN = "asterA1"

# every command that touches each campaign path (c: the campaign, o: a scratch folder outside it)
COMMANDS: dict[str, list[list[str]]] = {
    "config": [["eval", "--campaign", "{c}"], ["submit", "{c}", "{o}/new.txt"]],
    "runs": [["eval", "--campaign", "{c}"], ["submit", "{c}", "{o}/new.txt"], ["ingest", "{c}"]],
    "topics": [["eval", "--campaign", "{c}"], ["status", "{c}"]],
    "judgments": [["eval", "--campaign", "{c}"], ["judgments", "add", "{c}", "401", "D401-1", "1"],
                  ["judgments", "import", "{c}", "{o}/imp.qrels", "--name", "imp"]],
    "log": [["judgments", "add", "{c}", "401", "D401-1", "1"], ["eval", "--campaign", "{c}"],
            ["judgments", "undo", "{c}", "401", "D401-1"], ["judgments", "repair", "{c}", "--apply"]],
    "sources": [["judgments", "sources", "{c}"], ["agreement", "{c}", "--sources", "human", "imp"],
                ["judgments", "import", "{c}", "{o}/imp.qrels", "--name", "imp2"]],
    "pools": [["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "q"],
              ["judgments", "batch", "{c}", "--pool", "p", "--out", "{o}/batch.tsv"]],
    "pool_log": [["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "q"]],
    "docs": [["docs", "get", "{c}", "D401-1"], ["docs", "import", "{c}", "{o}/more.jsonl"]],
    "store": [["ingest", "{c}"], ["eval", "--campaign", "{c}"]],
    "cache": [["table", "--campaign", "{c}", "-m", "map"]],
    "truth": [["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "t", "--oracle", "truth",
               "--dry-run"]],
    "exports": [["judgments", "export", "{c}", "--out", "{c}/exports/q.qrels"]],
    "reports": [["report", "{c}", "--run", RUN, "--out", "{c}/reports"]],
    "nuggets": [["nuggets", "add", "{c}", "401", "another nugget"], ["nuggets", "list", "{c}"]],
    "answers": [["nuggets", "scores", "{c}"]],
    "audit": [["eval", "--campaign", "{c}"], ["judgments", "audit", "{c}"],
              ["pool", "{c}", "--strategy", "depth", "--depth", "3", "--name", "k", "--canaries", "1"]],
    "leases": [["judgments", "next", "{c}", "--topic", "401", "--pool", "deep", "-k", "1", "--assessor", "ann"],
               ["judgments", "add", "{c}", "401", "D401-1", "1", "--assessor", "ann"]],
    "serve_tokens": [["serve", "token", "add", "{c}", "--assessor", "ann"], ["serve", "token", "list", "{c}"],
                     ["serve", "token", "revoke", "{c}", "--assessor", "ann"]],
}


def _tree(p: Path) -> dict[str, str]:
    """Every file under p (or p itself) with the sha256 of its bytes."""
    if p.is_file():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()}
    return {str(q.relative_to(p)): hashlib.sha256(q.read_bytes()).hexdigest()
            for q in sorted(p.rglob("*")) if q.is_file()}


def _prepare(tmp_path: Path) -> tuple[Path, Path]:
    """A demo copy with a store, a pool p, an imported source and docs.jsonl; plus an outside folder."""
    c = demo_copy(tmp_path / "c")
    o = tmp_path / "o"
    o.mkdir()
    run = (c / "runs" / f"{RUN}.txt").read_text().splitlines()
    (o / "new.txt").write_text("\n".join(ln.replace(RUN, "newrun") for ln in run) + "\n")
    (o / "imp.qrels").write_text((c / "judgments" / "qrels.txt").read_text())
    (o / "more.jsonl").write_text('{"id": "X1", "title": "t", "text": "x"}\n')
    for args in (("pool", c, "--strategy", "depth", "--depth", "80", "--name", "deep"),   # documents left to judge
                 ("pool", c, "--strategy", "depth", "--depth", "2", "--name", "p"),
                 ("judgments", "import", c, o / "imp.qrels", "--name", "imp"),
                 ("judgments", "add", c, "401", "D401-1", "1"), ("table", "--campaign", c, "-m", "map"),
                 ("nuggets", "add", c, "401", "a nugget")):
        r = cli(*args, in_process=True)
        assert r.rc == 0, r.text
    (c / "exports").mkdir()
    (c / "reports").mkdir()
    (c / "answers").mkdir()
    return c, o


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return _prepare(tmp_path_factory.mktemp("confine"))


def test_the_list_of_campaign_paths_is_the_one_the_commands_are_tested_on():
    from engine.util.confine import CAMPAIGN_PATHS
    assert set(CAMPAIGN_PATHS) == set(COMMANDS)
    for name, rel in CAMPAIGN_PATHS.items():
        assert not Path(rel).is_absolute() and ".." not in Path(rel).parts, name


CASES = [(name, i) for name in COMMANDS for i in range(len(COMMANDS[name]))]


@pytest.mark.parametrize("name,i", CASES, ids=[f"{n}-{' '.join(COMMANDS[n][i][:2])}" for n, i in CASES])
def test_a_campaign_path_linked_outside_is_refused_by_every_command(prepared, tmp_path, name, i):
    from engine.util.confine import CAMPAIGN_PATHS
    c = tmp_path / "c"
    shutil.copytree(prepared[0], c, symlinks=True)
    o = tmp_path / "o"
    shutil.copytree(prepared[1], o)
    away = tmp_path / "away"
    away.mkdir()
    target = c / CAMPAIGN_PATHS[name]
    outside = away / target.name
    if target.exists():
        shutil.move(str(target), str(outside))
    elif CAMPAIGN_PATHS[name].endswith((".jsonl", ".json", ".yaml")):
        outside.write_text("")
    else:
        outside.mkdir()
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, target)
    before = _tree(away)
    args = [a.format(c=c, o=o) for a in COMMANDS[name][i]]
    r = cli(*args, in_process=True)
    assert_clean_refusal(r, "outside the campaign")
    assert _tree(away) == before, f"{args} changed {away}"


def test_a_judgment_source_linked_to_passwd_is_not_shown(tmp_path):
    c = demo_copy(tmp_path / "c")
    (c / "judgments" / "sources").mkdir()
    os.symlink("/etc/passwd", c / "judgments" / "sources" / "pw.qrels")
    for args in (["judgments", "sources", c], ["agreement", c, "--sources", "human", "pw"]):
        r = cli(*args)
        assert_clean_refusal(r, "pw.qrels", "outside the campaign")
        assert "root:" not in r.text


def test_library_paths_go_through_confinement(tmp_path):
    """The library refuses too: the log append, the pool writer and the docstore of a campaign."""
    from engine.errors import CranfieldError
    from engine.util.confine import campaign_path
    c = demo_copy(tmp_path / "c")
    away = tmp_path / "away"
    away.mkdir()
    os.symlink(away, c / "pools")
    with pytest.raises(CranfieldError, match="outside the campaign"):
        campaign_path(c, "pools", "pool-x.tsv")
    assert campaign_path(c, "log") == c / "judgments" / "log.jsonl"
    with pytest.raises(KeyError):
        campaign_path(c, "nonsense")


def test_the_tui_export_folder_is_confined(tmp_path):
    """The TUI's `e` writes to the campaign's exports/ (no --export-dir): a link out is refused."""
    from types import SimpleNamespace

    from engine.errors import CranfieldError
    from tui.app import CranfieldApp
    c = demo_copy(tmp_path / "c")
    away = tmp_path / "away"
    away.mkdir()
    os.symlink(away, c / "exports")
    app = SimpleNamespace(export_dir=None, model=None, target=c)
    with pytest.raises(CranfieldError, match="outside the campaign"):
        CranfieldApp.export_folder(app)
    os.unlink(c / "exports")
    assert CranfieldApp.export_folder(app) == c / "exports"


def test_real_paths_resolve_as_path_resolve_does(tmp_path):
    """`real_paths` (each folder resolved once) gives what `Path.resolve` gives for every kind of entry."""
    from engine.util.confine import real_paths
    out = tmp_path / "out"
    out.mkdir()
    (out / "secret.txt").write_text("x")
    d = tmp_path / "c" / "runs"
    d.mkdir(parents=True)
    (d / "plain.txt").write_text("x")
    (d / "to_out.txt").symlink_to(out / "secret.txt")           # a file linked outside
    (d / "sub").symlink_to(out)                                   # a folder linked outside
    (d / "loop").symlink_to(d / "loop")                           # a link to itself
    (d / "dangling").symlink_to(tmp_path / "nowhere")
    paths = [d / "plain.txt", d / "to_out.txt", d / "sub" / "secret.txt", d / "missing.txt", d / "dangling",
             d / ".." / "runs" / "plain.txt", d / "sub" / ".." / "c", tmp_path / "c" / "runs", d / "loop" / "x"]
    got = real_paths(paths)
    for p, r in zip(paths, got):
        try:
            want = p.resolve()
        except (OSError, RuntimeError):
            want = None
        assert r == want, (p, r, want)
    assert got[1] == out / "secret.txt" and got[2] == out / "secret.txt"
    rel = os.path.relpath(d / "to_out.txt")                       # relative to the working directory
    assert real_paths([rel]) == [Path(rel).resolve()]


@pytest.mark.parametrize("how", ["file", "folder", "named"])
def test_a_run_linked_outside_is_refused_among_many(tmp_path, how):
    """Among many run files (the folder resolved once), one linked outside is still refused, by `eval
    --campaign`, whether the file, a folder on the way or the campaign.yaml entry leads out."""
    c = demo_copy(tmp_path / "c")
    outside = tmp_path / "outside"
    outside.mkdir()
    src = next(iter(sorted((c / "runs").glob("*.txt"))))
    shutil.copy(src, outside / "linked.txt")
    if how == "file":
        (c / "runs" / "linked.txt").symlink_to(outside / "linked.txt")
    elif how == "folder":
        (c / "runs" / "more").symlink_to(outside)
        cfg = (c / "campaign.yaml").read_text()
        (c / "campaign.yaml").write_text(cfg.replace("runs:\n", "runs:\n  linkedX:\n    file: runs/more/linked.txt\n", 1))
    else:
        cfg = (c / "campaign.yaml").read_text()
        (c / "campaign.yaml").write_text(cfg.replace("runs:\n", f"runs:\n  linkedX:\n    file: {outside}/linked.txt\n", 1))
    before = hashlib.sha256((outside / "linked.txt").read_bytes()).hexdigest()
    r = cli("eval", "--campaign", str(c))
    assert_clean_refusal(r, "outside the campaign directory", "linked.txt")
    assert hashlib.sha256((outside / "linked.txt").read_bytes()).hexdigest() == before
