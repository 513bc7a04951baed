"""Issue 34 item 2: roots outside a campaign come only from the person running the command (a flag
or their own config file), never from campaign.yaml; an error about a file outside names the file and
line number, never its content."""
from __future__ import annotations

import re
from pathlib import Path

from _cli import assert_clean_refusal, cli


def _campaign(tmp: Path, secret: Path, allow: str | None) -> Path:
    c = tmp / "c"
    assert cli("init", c).rc == 0
    text = re.sub(r"(?m)^runs: \{\}.*\n", "", (c / "campaign.yaml").read_text())
    if allow is not None:
        text += f"allow_outside: [{allow}]\n"
    text += f"runs:\n  evil:\n    file: {secret}\n"
    (c / "campaign.yaml").write_text(text)
    (c / "judgments" / "q.qrels").write_text("1 0 d1 1\n")
    return c


def _secret(tmp: Path) -> Path:
    s = tmp / "secret" / "passwd"
    s.parent.mkdir()
    s.write_text("root:x:0:0:SECRET-CONTENT\n")
    return s


def test_campaign_yaml_cannot_widen_its_own_confinement(tmp_path):
    secret = _secret(tmp_path)
    c = _campaign(tmp_path, secret, "'/'")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "noconfig")}
    r = cli("eval", "--campaign", c, env=env)
    assert_clean_refusal(r, "outside the campaign directory", "--allow-outside")
    assert "SECRET" not in r.text


def test_the_person_grants_a_root_by_flag_and_errors_show_no_content(tmp_path):
    secret = _secret(tmp_path)
    c = _campaign(tmp_path, secret, None)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "noconfig")}
    r = cli("eval", "--campaign", c, "--allow-outside", secret.parent, env=env)
    assert_clean_refusal(r, f"{secret}:1:", "outside the campaign")
    assert "SECRET" not in r.text


def test_the_person_grants_a_root_in_their_config_file(tmp_path):
    secret = _secret(tmp_path)
    c = _campaign(tmp_path, secret, None)
    cfg = tmp_path / "xdg" / "cranfield" / "config.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f"allow_outside: [{secret.parent}]\n")
    r = cli("eval", "--campaign", c, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert_clean_refusal(r, f"{secret}:1:")
    assert "SECRET" not in r.text and "outside the campaign directory; refused" not in r.text


def test_campaign_yaml_allow_outside_narrows_the_persons_roots(tmp_path):
    secret = _secret(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    c = _campaign(tmp_path, secret, str(other))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "noconfig")}
    r = cli("eval", "--campaign", c, "--allow-outside", tmp_path, env=env)
    assert_clean_refusal(r, "outside the campaign directory")
    assert "SECRET" not in r.text
