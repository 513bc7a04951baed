"""Tables a person can paste into a report: Markdown, CSV, TSV, LaTeX, JSON or an aligned text table.
`format_table` is the one table writer of every face; each format escapes what would break it (a `|`,
backslash or line break in a Markdown cell, LaTeX's special characters, a tab or line break in CSV/TSV)."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

FORMATS = ("text", "markdown", "csv", "tsv", "latex", "json")


class Raw(str):
    """A cell already written in the target format's markup (e.g. `**0.5**`, `\\textbf{0.5}`): not escaped."""


def _cell(v, floatfmt: str) -> str:
    if isinstance(v, Raw):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return format(v, floatfmt)
    return str(v)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}", "|": r"\textbar{}"}
_BREAK = re.compile(r"\r\n|\r|\n")


def _latex_escape(s: str) -> str:
    """LaTeX special characters escaped in one pass (an escape's own braces are not escaped again); a line
    break becomes a space (a blank line would end the tabular's paragraph)."""
    if isinstance(s, Raw):
        return s
    return _BREAK.sub(" ", re.sub(r"[\\&%$#_{}~^|]", lambda m: _LATEX[m.group(0)], s))


def markdown_escape(s: str) -> str:
    """A Markdown table cell: backslash and `|` escaped (GFM splits cells at an unescaped pipe), line
    breaks as <br>."""
    if isinstance(s, Raw):
        return s
    return _BREAK.sub("<br>", s.replace("\\", "\\\\").replace("|", "\\|"))


def _one_line_breaks(df: pd.DataFrame) -> pd.DataFrame:
    """CR and CRLF inside text cells as LF: the CSV writer quotes a field with LF, not one with a lone CR."""
    out = None
    for i in range(df.shape[1]):
        s = df.iloc[:, i]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s)):
            continue
        if s.map(lambda v: isinstance(v, str) and "\r" in v).any() if s.dtype == object else \
                s.str.contains("\r", regex=False, na=False).any():
            out = df.copy() if out is None else out
            out.isetitem(i, s.map(lambda v: _BREAK.sub("\n", v) if isinstance(v, str) else v))
    return df if out is None else out


def format_table(df: pd.DataFrame, fmt: str = "text", floatfmt: str = ".4f", index: bool = False,
                 align: Sequence[str] | None = None, float_format: str | None = None) -> str:
    """Render a DataFrame in one of FORMATS. `align`: "l" or "r" per column (default: numbers right, the
    rest left); cells of type `Raw` are markup of the target format and are written unescaped;
    `float_format` (printf style, e.g. "%.6g"): numbers in CSV and TSV (default: in full)."""
    if index:
        df = df.reset_index()
    if fmt in ("csv", "tsv"):
        return _one_line_breaks(df).to_csv(index=False, sep="," if fmt == "csv" else "\t", float_format=float_format)
    if fmt == "json":
        return df.to_json(orient="records", indent=1) + "\n"
    cols = [str(c) for c in df.columns]
    rows = [[_cell(v, floatfmt) for v in r] for r in df.itertuples(index=False, name=None)]
    if align is None:
        right = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    else:
        if len(align) != len(cols):
            raise ValueError(f"align has {len(align)} entries for {len(cols)} columns")
        right = [a == "r" for a in align]
    if fmt == "markdown":
        out = ["| " + " | ".join(markdown_escape(c) for c in cols) + " |",
               "|" + "|".join(("---:" if n else ":---") for n in right) + "|"]
        out += ["| " + " | ".join(markdown_escape(c) for c in r) + " |" for r in rows]
        return "\n".join(out) + "\n"
    if fmt == "latex":
        spec = "".join("r" if n else "l" for n in right)
        out = [f"\\begin{{tabular}}{{{spec}}}", "\\hline",
               " & ".join(_latex_escape(c) for c in cols) + r" \\", "\\hline"]
        out += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in rows]
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"
    if fmt == "text":
        widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
        def line(cells):
            return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, right)).rstrip()
        out = [line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
        return "\n".join(out) + "\n"
    raise ValueError(f"unknown table format {fmt!r} (use one of {', '.join(FORMATS)})")
