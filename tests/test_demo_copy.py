"""`cranfield` with no argument opens a per-user copy of the bundled demo (made on first use in
$XDG_DATA_HOME/cranfield/demo, else ~/.local/share/cranfield/demo); `cranfield demo --reset` renews it;
the demo in the source tree is never written (its files hash the same after TUI and CLI use)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import tree_hash
from cranfield.cli import main
from tui.app import CranfieldApp
from tui.testing import press, run_async, settle, write_pool

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"
@pytest.fixture
def opened(monkeypatch):
    """The campaigns `cranfield` asks the TUI to open (the TUI itself is not started)."""
    import tui.app
    seen: list[Path] = []
    monkeypatch.setattr(tui.app, "run_app", lambda target, **kw: seen.append(Path(target)) or 0)
    return seen


def test_no_argument_opens_a_per_user_copy_made_on_first_use(tmp_path, monkeypatch, opened, capsys):
    source = tree_hash(DEMO)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    user = tmp_path / "data" / "cranfield" / "demo"
    assert not user.exists()
    assert main([]) == 0
    assert opened == [user] and tree_hash(user) == source
    # the copy is the user's: edits stay across runs
    (user / "runs" / "mine.txt").write_text("401 Q0 D401-1 1 1.0 mine\n")
    (user / "campaign.yaml").write_text((user / "campaign.yaml").read_text() + "\n# edited\n")
    assert main([]) == 0 and opened[-1] == user
    assert (user / "runs" / "mine.txt").exists() and "# edited" in (user / "campaign.yaml").read_text()
    # demo --reset renews it from the bundle and says where it is
    capsys.readouterr()
    assert main(["demo", "--reset"]) == 0
    assert tree_hash(user) == source and not (user / "runs" / "mine.txt").exists()
    assert str(user) in capsys.readouterr().out
    # `cranfield demo` names the copy (for the README's commands), making it when missing
    assert main(["demo"]) == 0 and capsys.readouterr().out.strip().endswith(str(user))
    assert tree_hash(DEMO) == source


def test_without_xdg_data_home_the_copy_is_under_local_share(tmp_path, monkeypatch, opened):
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main([]) == 0
    assert opened == [tmp_path / "home" / ".local" / "share" / "cranfield" / "demo"]
    assert (opened[0] / "campaign.yaml").is_file()


@run_async
async def test_judging_pooling_and_cli_on_the_user_demo_leave_the_source_demo_alone(tmp_path, monkeypatch):
    source = tree_hash(DEMO)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from cranfield.cli.cmd_demo import user_demo
    camp = user_demo()
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="demo-user")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await write_pool(pilot, 60)                           # deeper than the demo's judgments
        await press(pilot, "j", "1", "0", "l", "e")
    assert (camp / "pools").is_dir() and (camp / "judgments" / "log.jsonl").is_file()
    for argv in (["status", str(camp)], ["table", str(camp)], ["judgments", "add", str(camp), "401", "D401-1", "1",
                                                               "--assessor", "cli"]):
        assert main(argv) == 0
    assert tree_hash(DEMO) == source
