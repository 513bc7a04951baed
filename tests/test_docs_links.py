"""The README a newcomer reads to the end: short, starting with the two fresh-machine commands, with every
page of docs/ in its index; and no relative Markdown link or anchor in README.md or docs/*.md is broken."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 250
TUI_COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && cranfield"

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)     # http:, https:, mailto: ...


def _prose_lines(text: str):
    """(line number, line) outside fenced code blocks, with inline code spans removed."""
    fenced = False
    for no, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield no, re.sub(r"`[^`]*`", "", re.sub(r"``.*?``", "", line))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file (repeated headings get -1, -2 ...)."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: link` for every relative link whose file or anchor does not exist."""
    bad = []
    for no, line in _prose_lines(path.read_text()):
        for target in LINK.findall(line):
            if EXTERNAL.match(target):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(root)}:{no}: {target}"
            if not dest.exists():
                bad.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{where} (no heading with that anchor)")
    return bad


def markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_no_broken_relative_link_in_readme_and_docs():
    bad = [b for p in markdown_files() for b in broken_links(p)]
    assert not bad, "\n".join(bad)


def test_the_check_finds_broken_files_and_anchors(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A page\n\n## Some `code` & more\n\n## Some `code` & more\n")
    page = tmp_path / "README.md"
    page.write_text("[ok](docs/a.md) [ok](docs/a.md#a-page) [ok](docs/a.md#some-code--more-1) [web](https://x.y/z)\n"
                    "[self](#top) [gone](docs/b.md) [bad](docs/a.md#nope)\n"
                    "# Top\n```\n[in code](docs/none.md)\n```\n`[span](docs/none.md)`\n")
    got = broken_links(page, tmp_path)
    assert [g.split(": ", 1)[1] for g in got] == ["docs/b.md (no such file)", "docs/a.md#nope (no heading with that anchor)"]
    assert got[0].startswith("README.md:2:")


def test_readme_is_short_and_starts_with_the_fresh_machine_commands():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines (at most {MAX_README_LINES})"
    commands = [ln.strip() for ln in lines if ln.startswith("    ") and ln.strip()]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    ci_command = ci[ci.index("# README, second command:") + 1].strip()
    assert commands[:2] == [TUI_COMMAND, ci_command]
    assert ci_command.startswith(TUI_COMMAND.split("-e .")[0] + "-e '.[test]'")    # the same install, with tests
    head = "\n".join(lines[:20])
    assert "tested-with.txt" in head and ".ci/run" in head
    assert (ROOT / "tested-with.txt").is_file()


def test_every_doc_is_in_the_readme_index():
    linked = {t.partition("#")[0] for _, ln in _prose_lines(README.read_text()) for t in LINK.findall(ln)}
    missing = [f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in linked]
    assert not missing, f"pages of docs/ the README does not link: {', '.join(missing)}"


@pytest.mark.parametrize("heading, anchor", [
    ("Generated answers: nugget evaluation (TREC RAG)", "generated-answers-nugget-evaluation-trec-rag"),
    ("Judgment sources, automatic judges and agreement", "judgment-sources-automatic-judges-and-agreement"),
    ("The leaderboard (demo campaign, 80x24, `cranfield` then `l`)", "the-leaderboard-demo-campaign-80x24-cranfield-then-l"),
    ("campaign.yaml, every key", "campaignyaml-every-key"),
])
def test_slug_is_githubs(heading, anchor):
    assert slug(heading) == anchor


# Where the sections of the README before issue 35 went (each page is in the README's index, checked above)
MOVED = {
    "cli.md": ["Commands", "Every official TREC evaluator", "Running the campaign"],
    "library.md": ["Python library"],
    "tui.md": ["In brief", "Keys everywhere", "Screens"],
    "features.md": ["Measures", "Pools and judgments", "Judgment sources, automatic judges and agreement",
                    "Generated answers: nugget evaluation (TREC RAG)",
                    "Predicted relevance: completing biased judgments", "Training collections", "Stability",
                    "Cost-benefit planning"],
    "reliability.md": ["Reliability"],
    "figures.md": ["Measured figures"],
    "layout.md": ["Layout and design"],
    "limits.md": ["Known limits"],
}


@pytest.mark.parametrize("page", sorted(MOVED))
def test_the_readmes_former_sections_are_in_docs(page):
    have = anchors(ROOT / "docs" / page)
    missing = [h for h in MOVED[page] if slug(h) not in have]
    assert not missing, f"docs/{page} lacks {missing}"
