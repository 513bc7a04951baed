"""Write any table the UI shows as CSV, Markdown and LaTeX through the engine's one table writer
(engine.formats.text_tables.format_table); only what is the TUI's own is here: the file names, yes/no for
flags, and ± typeset in LaTeX."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from engine.formats.text_tables import format_table
from engine.util import fs

EXPORTS = (("csv", "csv"), ("md", "markdown"), ("tex", "latex"))
"""(file suffix, engine.formats.text_tables format) of every file `e` writes."""


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """The table as the screens word it: flags (bool columns) as yes/no, float32 as float."""
    out = df.copy()
    for c in out.columns:
        col = out[c]
        if pd.api.types.is_bool_dtype(col):
            out[c] = np.where(col.to_numpy(bool), "yes", "no").astype(object)
        elif pd.api.types.is_float_dtype(col) and col.dtype != np.float64:
            out[c] = col.astype(np.float64)
    return out


def render(df: pd.DataFrame, fmt: str) -> str:
    """One export format of a table (csv, markdown, latex; CSV keeps the values as they are)."""
    text = format_table(df if fmt == "csv" else shown(df), fmt)
    return text.replace("±", r"$\pm$") if fmt == "latex" else text


def write_exports(df: pd.DataFrame, stem: str, folder: Path) -> list[Path]:
    """Write `stem`.csv, .md and .tex into `folder`; returns the paths."""
    folder = Path(folder)
    fs.makedirs(folder)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "table"
    paths = []
    for suffix, fmt in EXPORTS:
        path = folder / f"{stem}.{suffix}"
        fs.atomic_write(path, render(df, fmt))
        paths.append(path)
    return paths
