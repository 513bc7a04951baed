"""Write any table the UI shows as CSV, Markdown and LaTeX."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd


def _cell(v) -> str:
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else f"{v:.4f}"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return str(v)


def to_markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    rows = [[_cell(v).replace("|", "\\|") for v in row] for row in df.itertuples(index=False)]
    num = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" if n else ":---" for n in num) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return re.sub(r"[\\&%$#_{}~^]", lambda m: _TEX[m.group()], s).replace("±", r"$\pm$")


def to_latex(df: pd.DataFrame) -> str:
    num = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    spec = "".join("r" if n else "l" for n in num)
    out = [f"\\begin{{tabular}}{{{spec}}}", "\\hline", " & ".join(_tex(str(c)) for c in df.columns) + " \\\\",
           "\\hline"]
    out += [" & ".join(_tex(_cell(v)) for v in row) + " \\\\" for row in df.itertuples(index=False)]
    out += ["\\hline", "\\end{tabular}"]
    return "\n".join(out) + "\n"


def write_exports(df: pd.DataFrame, stem: str, folder: Path) -> list[Path]:
    """Write `stem`.csv, .md and .tex into `folder`; returns the paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "table"
    paths = [folder / f"{stem}.csv", folder / f"{stem}.md", folder / f"{stem}.tex"]
    df.to_csv(paths[0], index=False, float_format="%.6g")
    paths[1].write_text(to_markdown(df), encoding="utf-8")
    paths[2].write_text(to_latex(df), encoding="utf-8")
    return paths
