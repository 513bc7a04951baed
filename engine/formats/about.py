"""What an export is: the judgments it was made with (source, how many in force) and when (UTC), in its
file names, in a first line where the format has comments or prose (Markdown, LaTeX), and in a sidecar
`NAME.about.json` (CSV and qrels have no place for it); an export never replaces an earlier one. Used by
the TUI's `e` (tui.export) and `cranfield judgments export`."""
from __future__ import annotations

from ..util import fs

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ..errors import CranfieldError

ABOUT = "about.json"
"""The sidecar's suffix: `NAME.about.json` beside `NAME.csv`, `NAME.md`, ... (or beside a named file)."""

_HEAD = {"md": "{}\n\n", "tex": "% {}\n"}
"""Suffix -> how the description line starts a file of that format (formats not listed get none)."""


@dataclass(frozen=True)
class ExportAbout:
    """The judgments an export was made with and when: `source` (official, a source or combination
    spec), `count` (judgments in force, grade >= 0), `utc`, the campaign's name."""
    source: str
    count: int
    utc: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    campaign: str = ""

    def stamp(self) -> str:
        """The time as file names carry it: 20261128T054012Z."""
        return self.utc.strftime("%Y%m%dT%H%M%SZ")

    def suffix(self) -> str:
        """What file names carry: _SOURCE_NNNj_STAMP (the source with characters outside [A-Za-z0-9.-]
        as '-')."""
        src = re.sub(r"[^A-Za-z0-9.-]+", "-", self.source).strip("-") or "judgments"
        return f"_{src}_{self.count}j_{self.stamp()}"

    def line(self, what: str) -> str:
        """One line saying what the file is, for its first line."""
        camp = f" · campaign {self.campaign}" if self.campaign else ""
        return (f"{what} · judgments: {self.source} ({self.count:,} in force) · exported "
                f"{self.utc:%Y-%m-%d %H:%M:%S} UTC{camp}")

    def record(self, what: str, files: list[str], **extra) -> dict:
        """The sidecar's content."""
        return {"what": what, "judgments": self.source, "judgment_count": int(self.count),
                "exported_utc": self.utc.strftime("%Y-%m-%dT%H:%M:%SZ"), "campaign": self.campaign,
                "files": list(files), **extra}


def sidecar_path(path: os.PathLike | str) -> Path:
    """The sidecar of a named file: `out.qrels` -> `out.qrels.about.json`."""
    p = Path(path)
    return p.with_name(f"{p.name}.{ABOUT}")


def free_stem(folder: Path, stem: str, suffixes) -> str:
    """`stem`, else `stem-2`, `stem-3`, ...: the first name none of whose `suffixes` files exists in `folder`."""
    name, n = stem, 1
    while any(fs.exists(folder / f"{name}.{s}") for s in suffixes):
        n += 1
        name = f"{stem}-{n}"
    return name


def write_described(folder: os.PathLike | str, stem: str, texts: dict[str, str], about: ExportAbout,
                    what: str, **extra) -> list[Path]:
    """Write `texts` (file suffix -> text) as `STEM_SOURCE_NNNj_STAMP.SUFFIX` into `folder` (a free name:
    `-2`, ... when one exists already), Markdown and LaTeX opening with the description line, and the
    sidecar `.about.json` last; returns the paths written (sidecar last)."""
    from .files import write_text
    folder = Path(folder)
    fs.makedirs(folder)
    name = free_stem(folder, stem + about.suffix(), [*texts, ABOUT])
    paths = []
    for suffix, text in texts.items():
        p = folder / f"{name}.{suffix}"
        head = _HEAD.get(suffix)
        write_text(p, (head.format(about.line(what)) if head else "") + text)
        paths.append(p)
    side = folder / f"{name}.{ABOUT}"
    write_text(side, json.dumps(about.record(what, [p.name for p in paths], **extra), indent=2) + "\n")
    return paths + [side]


def refuse_existing(path: os.PathLike | str, force: bool = False) -> None:
    """Refuse to write over `path` or its sidecar (an earlier export) unless `force`."""
    if force:
        return
    for p in (Path(path), sidecar_path(path)):
        if p.exists():
            raise CranfieldError(f"{p}: exists (an earlier export?); nothing written. Give another --out, a "
                                 f"folder (the file is then named after its judgments and time), or --force "
                                 f"to replace it")
