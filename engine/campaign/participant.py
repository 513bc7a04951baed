"""Participant reports, like the per-run pages of the TREC proceedings' appendix: for each run its summary
measures and leaderboard position, its per-topic score against the best, median and worst of all runs (or
of the pooled runs) on that topic, and its interpolated recall-precision curve; as Markdown and as one
self-contained HTML page per run (plots as inline SVG, no external reference), plus an index page."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..util.names import natural_key
from ..util import fs

RECALL_LEVELS = [f"{x / 10:.2f}" for x in range(11)]
IPREC = [f"iprec_at_recall_{r}" for r in RECALL_LEVELS]


def topic_bmw(table: pd.DataFrame, measure: str, runs: list[str] | None = None) -> pd.DataFrame:
    """Per topic: best, median and worst value of `measure` over `runs` (default all) from an evaluation
    long table; index topic, columns best, median, worst, n_runs."""
    sub = table[table["measure"].astype(str) == measure]
    if runs is not None:
        sub = sub[sub["run"].astype(str).isin(set(runs))]
    if not len(sub):
        raise CranfieldError(f"no values of {measure} for the selected runs")
    g = sub.assign(topic=sub["topic"].astype(str), value=sub["value"].astype(float)).groupby("topic")["value"]
    out = pd.DataFrame({"best": g.max(), "median": g.median(), "worst": g.min(), "n_runs": g.size()})
    return out.loc[sorted(out.index, key=natural_key)]


@dataclass
class RunReport:
    """Everything one run's page shows."""

    run: str
    meta: dict
    summary: dict[str, float]
    positions: dict[str, tuple[int, int]]          # measure -> (position, number of runs)
    per_topic: dict[str, pd.DataFrame] = field(default_factory=dict)  # measure -> topic, run, best, median, worst
    curve: list[float] = field(default_factory=list)                  # interpolated precision at recall 0..1
    against: str = "all runs"
    header: list[str] = field(default_factory=list)                   # '#' / ir_metadata lines of the run file
    ppi: pd.DataFrame | None = None     # per measure: PPI interval from a model source and a human sample
    ppi_note: str = ""                  # what the intervals combine
    ppi_sig: object = None              # engine.campaign.ppisig.PPISignificance of every pair, or None


def run_header(path: Path, limit: int = 50) -> list[str]:
    """The leading '#' comment (ir_metadata) lines of a run file, as submitted."""
    out: list[str] = []
    try:
        with fs.open(path, encoding="utf-8", errors="replace") as fh:
            for ln in fh:
                if not ln.strip():
                    continue
                if not ln.lstrip().startswith("#") or len(out) >= limit:
                    break
                out.append(ln.rstrip("\n"))
    except OSError:
        return []
    return out


def build_reports(camp, runs: list[str] | None = None, measures: list[str] | None = None,
                  against: str = "all", table: pd.DataFrame | None = None) -> list[RunReport]:
    """One RunReport per run (default every run); `against` = all or pooled (the runs best/median/worst
    are taken over). Uses the campaign's single evaluation entry point (Campaign.evaluate)."""
    measures = list(measures or camp.measures() or ["map"])
    if table is None:
        table = camp.evaluate(measures + ["iprec_at_recall"])
    names = list(dict.fromkeys(table["measure"].astype(str)))
    shown = [m for m in names if not m.startswith("iprec_at_recall")]
    meta = camp.run_meta().set_index("run")
    all_runs = list(dict.fromkeys(table["run"].astype(str)))
    if against == "pooled":
        pool = [r for r in all_runs if r in meta.index and bool(meta.loc[r, "pooled"])]
        if not pool:
            raise CranfieldError("no pooled runs in the campaign (runs.<tag>.pooled)")
        label = "pooled runs"
    elif against == "all":
        pool, label = all_runs, "all runs"
    else:
        raise CranfieldError(f"against must be all or pooled, not {against!r}")
    for r in runs or []:
        if r not in all_runs:
            raise CranfieldError(f"unknown run {r!r} (have: {', '.join(all_runs[:20])})")
    t = table.assign(run=table["run"].astype(str), topic=table["topic"].astype(str),
                     measure=table["measure"].astype(str))
    means = t.pivot_table(index="run", columns="measure", values="value", aggfunc="mean", observed=True)
    bmw = {m: topic_bmw(t, m, pool) for m in shown}
    ppi, ppi_note = ppi_table(camp, measures)
    sig = ppi_pairs(camp, measures) if ppi is not None else None
    out = []
    for r in runs or all_runs:
        summary = {m: float(means.loc[r, m]) for m in shown}
        positions = {}
        for m in shown:
            col = means[m].dropna()
            positions[m] = (int((col > col.loc[r] + 1e-12).sum()) + 1, len(col))
        per = {}
        for m in shown:
            mine = t[(t["run"] == r) & (t["measure"] == m)].set_index("topic")["value"].astype(float)
            b = bmw[m].join(mine.rename("run"), how="left")
            per[m] = b[["run", "best", "median", "worst"]].rename_axis("topic").reset_index()
        curve = [float(means.loc[r, c]) if c in means.columns else float("nan") for c in IPREC]
        md = meta.loc[r].to_dict() if r in meta.index else {}
        header = run_header(camp.root / md["file"]) if md.get("file") else []
        mine = None if ppi is None else ppi[ppi["run"] == r].drop(columns="run").reset_index(drop=True)
        out.append(RunReport(r, md, summary, positions, per, curve, label, header, mine, ppi_note, sig))
    return out


def ppi_table(camp, measures: list[str], alpha: float = 0.05) -> tuple[pd.DataFrame | None, str]:
    """Every run's prediction-powered interval per measure (engine.judgments.ppi.campaign_ppi) when a model
    source judged more topics than the people's sample; (None, "") otherwise."""
    from ..judgments.ppi import campaign_ppi, default_model_source
    model = default_model_source(camp)
    if model is None:
        return None, ""
    try:
        rep = campaign_ppi(camp, model, "human", measures, alpha)
    except CranfieldError:
        return None, ""           # people judged fewer than 2 topics, or no measure is a mean
    r = rep.runs
    n, T = int(r["n_human"].iat[0]), int(r["n_topics"].iat[0])
    if n >= T:
        return None, ""
    t = r[["run", "measure", "estimate", "lower", "upper", "human_lower", "human_upper", "model_only", "flag"]]
    note = (f"{100 * (1 - alpha):g}% prediction-powered intervals (PPI++): the model source {model} judged "
            f"all {T} topics, people {n} of them; human_* is the interval from the people's topics alone, "
            f"model_only the mean under the model's labels (docs/llm-judges.md)")
    return t.reset_index(drop=True), note


def ppi_pairs(camp, measures: list[str], alpha: float = 0.05):
    """The significance table in the PPI form (engine.campaign.ppisig) of every pair of runs, or None when
    the campaign has no model source beyond the people's sample."""
    from .ppisig import ppi_significance
    try:
        return ppi_significance(camp, measures, alpha=alpha)
    except CranfieldError:
        return None


PAIRS_TITLE = "Pairs of runs with model and human judgments"


def _pairs_note(sig) -> str:
    return sig.heading() + (f"; {sig.caution()}" if sig.caution() else "") + " (docs/llm-judges.md)"


def pairs_markdown(sig, run: str | None = None) -> list[str]:
    """The PPI significance section as Markdown lines (the pairs of `run`, or every pair); [] without one."""
    if sig is None:
        return []
    from ..formats.text_tables import format_table
    df = sig.pairs if run is None else sig.for_run(run)
    return [f"## {PAIRS_TITLE}", "", _pairs_note(sig) + ".", "", format_table(df, "markdown", ".4g"), ""]


def pairs_html(sig, run: str | None = None) -> str:
    """The PPI significance section as HTML ('' without one)."""
    if sig is None:
        return ""
    return _html_table(PAIRS_TITLE, _pairs_note(sig), sig.pairs if run is None else sig.for_run(run), "%.4g")


# ------------------------------------------------------------------------------------------ rendering
def _svg_topics(df: pd.DataFrame, measure: str, width: int = 640, height: int = 220) -> str:
    """Per topic: a grey bar from worst to best, a median tick, the run as a dot."""
    n = len(df)
    left, bottom, top = 40, 30, 10
    plot_w, plot_h = width - left - 10, height - bottom - top
    vmax = max(1e-9, float(np.nanmax(df[["best", "run"]].to_numpy(float))) if n else 1.0)
    vmax = 1.0 if vmax <= 1.0 else vmax
    step = plot_w / max(n, 1)

    def y(v: float) -> float:
        return top + plot_h * (1 - v / vmax)

    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{html.escape(measure)} per topic against best, median and worst">',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" stroke="#444"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#444"/>']
    for v in (0, 0.5, 1.0):
        parts.append(f'<text x="{left - 4}" y="{y(v * vmax) + 4:.1f}" font-size="10" text-anchor="end">'
                     f'{v * vmax:.2g}</text>')
    for i, r in enumerate(df.itertuples(index=False)):
        cx = left + step * (i + 0.5)
        parts.append(f'<line x1="{cx:.1f}" y1="{y(r.worst):.1f}" x2="{cx:.1f}" y2="{y(r.best):.1f}" '
                     f'stroke="#bbb" stroke-width="{max(2, step * 0.4):.1f}"/>')
        parts.append(f'<line x1="{cx - step * 0.3:.1f}" y1="{y(r.median):.1f}" x2="{cx + step * 0.3:.1f}" '
                     f'y2="{y(r.median):.1f}" stroke="#333" stroke-width="1.5"/>')
        if not pd.isna(r.run):
            parts.append(f'<circle cx="{cx:.1f}" cy="{y(r.run):.1f}" r="3.5" fill="#c0392b">'
                         f'<title>topic {html.escape(str(r.topic))}: {r.run:.4f}</title></circle>')
        if n <= 60:
            parts.append(f'<text x="{cx:.1f}" y="{height - 12}" font-size="8" text-anchor="middle">'
                         f'{html.escape(str(r.topic))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _svg_curve(curve: list[float], width: int = 320, height: int = 240) -> str:
    left, bottom, top, right = 40, 30, 10, 10
    pw, ph = width - left - right, height - top - bottom
    pts = " ".join(f"{left + pw * i / 10:.1f},{top + ph * (1 - (0 if np.isnan(v) else v)):.1f}"
                   for i, v in enumerate(curve))
    parts = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="interpolated recall-precision curve">',
             f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>']
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{left - 4}" y="{top + ph * (1 - v) + 4:.1f}" font-size="10" text-anchor="end">{v:g}</text>')
        parts.append(f'<text x="{left + pw * v:.1f}" y="{height - 14}" font-size="10" text-anchor="middle">{v:g}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 2}" font-size="10" text-anchor="middle">recall</text>')
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#2c7fb8" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _fmt(v) -> str:
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.4f}"


def _meta_line(rep: RunReport) -> str:
    m = rep.meta
    bits = [f"group {m.get('group', rep.run)}", str(m.get("type", "automatic")),
            "pooled" if m.get("pooled", True) else "not pooled"]
    return ", ".join(bits)


def to_markdown(rep: RunReport, campaign: str = "") -> str:
    """The run's page as Markdown."""
    out = [f"# Run {rep.run}" + (f" ({campaign})" if campaign else ""), "", _meta_line(rep), "",
           *(["Run file header (as submitted):", "", "```", *rep.header, "```", ""] if rep.header else []),
           "## Summary", ""]
    summ = [(m, f"{v:.4f}", "{} of {}".format(*rep.positions[m])) for m, v in rep.summary.items()]
    out.append(_md(summ, ["measure", "value", "position"], "lrr"))
    if rep.ppi is not None and len(rep.ppi):
        from ..formats.text_tables import format_table
        out += ["## Intervals from model and human judgments", "", rep.ppi_note + ".", "",
                format_table(rep.ppi, "markdown", ".4f"), ""]
    out += pairs_markdown(rep.ppi_sig, rep.run)
    curve = [["precision", *(_fmt(v) for v in rep.curve)]]
    out += ["## Interpolated recall-precision", "", _md(curve, ["recall", *RECALL_LEVELS], "l" + "r" * len(RECALL_LEVELS))]
    for m, df in rep.per_topic.items():
        rows = []
        for r in df.itertuples(index=False):
            cmp = "" if pd.isna(r.run) else ("above" if r.run > r.median else "below" if r.run < r.median else "equal")
            rows.append([str(r.topic), _fmt(r.run), f"{r.best:.4f}", f"{r.median:.4f}", f"{r.worst:.4f}", cmp])
        out += [f"## Per topic: {m} against the best, median and worst of {rep.against}", "",
                _md(rows, ["topic", "run", "best", "median", "worst", "vs median"], "lrrrrl")]
    return "\n".join(out)


def _md(rows, cols: list[str], align: str) -> str:
    """A Markdown table (`format_table`: cells escaped)."""
    from ..formats.text_tables import format_table
    return format_table(pd.DataFrame(rows, columns=cols, dtype=object), "markdown", align=list(align))


_CSS = ("body{font-family:sans-serif;max-width:980px;margin:1em auto;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px}"
        "td.n{text-align:right}.legend{font-size:90%;color:#555}")


def to_html(rep: RunReport, campaign: str = "") -> str:
    """The run's page as one self-contained HTML file (inline SVG plots, inline CSS, no links out)."""
    e = html.escape
    title = f"Run {rep.run}" + (f" ({campaign})" if campaign else "")
    b = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{e(title)}</title>"
         f"<style>{_CSS}</style></head><body>", f"<h1>{e(title)}</h1><p>{e(_meta_line(rep))}</p>",
         "<p><a href=\"index.html\">all runs</a></p>",
         (f"<p>Run file header (as submitted):</p><pre>{e(chr(10).join(rep.header))}</pre>" if rep.header else ""), "<h2>Summary</h2><table><tr><th>measure</th><th>value</th>"
         "<th>position</th></tr>"]
    for m, v in rep.summary.items():
        pos, n = rep.positions[m]
        b.append(f"<tr><td>{e(m)}</td><td class=n>{v:.4f}</td><td class=n>{pos} of {n}</td></tr>")
    b.append("</table>")
    if rep.ppi is not None and len(rep.ppi):
        b.append(_html_table("Intervals from model and human judgments", rep.ppi_note, rep.ppi))
    if rep.ppi_sig is not None:
        b.append(pairs_html(rep.ppi_sig, rep.run))
    b.append("<h2>Interpolated recall-precision</h2>" + _svg_curve(rep.curve))
    b.append("<table><tr><th>recall</th>" + "".join(f"<th>{r}</th>" for r in RECALL_LEVELS) + "</tr><tr><td>precision</td>"
             + "".join(f"<td class=n>{_fmt(v)}</td>" for v in rep.curve) + "</tr></table>")
    for m, df in rep.per_topic.items():
        b.append(f"<h2>Per topic: {e(m)}</h2><p class=legend>red dot: this run; grey bar: worst to best of "
                 f"{e(rep.against)}; black tick: median.</p>" + _svg_topics(df, m))
        b.append("<table><tr><th>topic</th><th>run</th><th>best</th><th>median</th><th>worst</th></tr>")
        for r in df.itertuples(index=False):
            b.append(f"<tr><td>{e(str(r.topic))}</td><td class=n>{_fmt(r.run)}</td><td class=n>{r.best:.4f}</td>"
                     f"<td class=n>{r.median:.4f}</td><td class=n>{r.worst:.4f}</td></tr>")
        b.append("</table>")
    b.append("</body></html>")
    return "\n".join(b) + "\n"


def _html_table(title: str, note: str, df: pd.DataFrame, float_format: str = "%.4f") -> str:
    """A section with a table whose cells are `format_table`'s text cells, HTML-escaped."""
    from ..formats.text_tables import format_table
    e = html.escape
    rows = [line.split("\t") for line in format_table(df, "tsv", float_format=float_format).splitlines()]
    head = "".join(f"<th>{e(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<h2>{e(title)}</h2><p class=legend>{e(note)}.</p><table><tr>{head}</tr>{body}</table>"


def _file_stem(run: str) -> str:
    from ..util.names import MAX_NAME_CHARS
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", run).strip("-.")[:MAX_NAME_CHARS] or "run"


def file_stems(runs: list[str]) -> dict[str, str]:
    """A distinct file stem per run: its name with unsafe characters replaced; a stem that changed, that
    two runs share (case-insensitively) or that is `index` gets a short hash of the exact run name."""
    import hashlib
    base = {r: _file_stem(r) for r in runs}
    count: dict[str, int] = {}
    for s in base.values():
        count[s.lower()] = count.get(s.lower(), 0) + 1
    out = {}
    for r, s in base.items():
        if s != r or count[s.lower()] > 1 or s.lower() == "index":
            s = f"{s}-{hashlib.sha256(r.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"
        out[r] = s
    return out


def write_reports(camp, out: str | Path, runs: list[str] | None = None, measures: list[str] | None = None,
                  against: str = "all") -> list[Path]:
    """Write <run>.md and <run>.html per run and index.md / index.html into `out` (each page atomically);
    returns the paths."""
    from ..formats.text_tables import Raw, markdown_escape
    from ..util.atomic import atomic_write
    from ..util.names import shown
    out = Path(out)
    fs.makedirs(out)
    reps = build_reports(camp, runs, measures, against)
    name = camp.name() if callable(getattr(camp, "name", None)) else str(getattr(camp, "name", ""))
    paths = []
    rows_md, rows_html = [], []
    first = next(iter(reps[0].summary)) if reps else None
    stems = file_stems([rep.run for rep in reps])
    for rep in sorted(reps, key=lambda r: r.positions[first][0] if first else 0):
        stem = stems[rep.run]
        for suffix, text in ((".md", shown(to_markdown(rep, name), "\n\t")), (".html", shown(to_html(rep, name), "\n\t"))):
            p = out / f"{stem}{suffix}"
            atomic_write(p, text.encode("utf-8"))        # a full disk leaves no half page
            paths.append(p)
        link = Raw("[" + re.sub(r"([\[\]])", r"\\\1", markdown_escape(rep.run)) + f"]({stem}.md)")
        rows_md.append([str(rep.positions[first][0]), link, str(rep.meta.get("group", "")),
                        *(f"{v:.4f}" for v in rep.summary.values())])
        rows_html.append(f"<tr><td class=n>{rep.positions[first][0]}</td><td><a href=\"{html.escape(stem)}.html\">"
                         f"{html.escape(rep.run)}</a></td><td>{html.escape(str(rep.meta.get('group', '')))}</td>"
                         + "".join(f"<td class=n>{v:.4f}</td>" for v in rep.summary.values()) + "</tr>")
    ms = list(reps[0].summary) if reps else []
    judges = write_judge_pages(camp, out, name)
    paths += judges
    sig = reps[0].ppi_sig if reps else None
    md = [f"# Participant reports: {name}", "", f"Runs ordered by {first}.", "",
          *(["Judge cards: [judges](judges.md).", ""] if judges else []),
          _md(rows_md, ["position", "run", "group", *ms], "rll" + "r" * len(ms)), *pairs_markdown(sig)]
    atomic_write(out / "index.md", shown("\n".join(md), "\n\t").encode("utf-8"))
    page = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(name)}: runs</title>"
            f"<style>{_CSS}</style></head><body><h1>Participant reports: {html.escape(name)}</h1>"
            f"<p>Runs ordered by {html.escape(str(first))}.</p>"
            + ("<p>Judge cards: <a href=\"judges.html\">judges</a>.</p>" if judges else "") + "<table><tr><th>position</th><th>run</th><th>group</th>"
            + "".join(f"<th>{html.escape(m)}</th>" for m in ms) + "</tr>", *rows_html, "</table>",
            pairs_html(sig) + "</body></html>"]
    atomic_write(out / "index.html", shown("\n".join(page) + "\n", "\n\t").encode("utf-8"))
    return paths + [out / "index.md", out / "index.html"]


def write_judge_pages(camp, out: Path, name: str = "") -> list[Path]:
    """judges.md and judges.html: the judge card of every judgment source that shares documents with the
    people's (engine.judgments.judge_card; tables through format_table); [] when there is none."""
    from ..judgments.judge_card import card_text, judge_cards
    from ..util.atomic import atomic_write
    from ..util.names import shown
    try:
        cards = judge_cards(camp)
    except CranfieldError:
        return []
    if not cards:
        return []
    title = f"Judge cards: {name}" if name else "Judge cards"
    md = shown("\n".join([f"# {title}", "", *(card_text(c, "markdown") for c in cards)]), "\n\t")
    page = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1><p><a href=\"index.html\">all runs</a></p>"]
    page += [f"<pre>{html.escape(card_text(c, 'text'))}</pre>" for c in cards]
    page.append("</body></html>")
    paths = [out / "judges.md", out / "judges.html"]
    atomic_write(paths[0], md.encode("utf-8"))
    atomic_write(paths[1], shown("\n".join(page) + "\n", "\n\t").encode("utf-8"))
    return paths
