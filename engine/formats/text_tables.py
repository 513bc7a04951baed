"""Tables a person can paste into a report: Markdown, CSV, TSV, LaTeX, JSON or an aligned text table."""
from __future__ import annotations

import math

import pandas as pd

FORMATS = ("text", "markdown", "csv", "tsv", "latex", "json")


def _cell(v, floatfmt: str) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return format(v, floatfmt)
    return str(v)


def _latex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        s = s.replace(a, b)
    return s


def format_table(df: pd.DataFrame, fmt: str = "text", floatfmt: str = ".4f", index: bool = False) -> str:
    """Render a DataFrame in one of FORMATS."""
    if index:
        df = df.reset_index()
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "tsv":
        return df.to_csv(index=False, sep="\t")
    if fmt == "json":
        return df.to_json(orient="records", indent=1) + "\n"
    cols = [str(c) for c in df.columns]
    rows = [[_cell(v, floatfmt) for v in r] for r in df.itertuples(index=False, name=None)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    if fmt == "markdown":
        out = ["| " + " | ".join(cols) + " |",
               "|" + "|".join(("---:" if n else ":---") for n in numeric) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out) + "\n"
    if fmt == "latex":
        spec = "".join("r" if n else "l" for n in numeric)
        out = [f"\\begin{{tabular}}{{{spec}}}", "\\hline",
               " & ".join(_latex_escape(c) for c in cols) + r" \\", "\\hline"]
        out += [" & ".join(_latex_escape(c) for c in r) + r" \\" for r in rows]
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"
    if fmt == "text":
        widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
        def line(cells):
            return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()
        out = [line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
        return "\n".join(out) + "\n"
    raise ValueError(f"unknown table format {fmt!r} (use one of {', '.join(FORMATS)})")
