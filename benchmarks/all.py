"""Every measured figure's benchmark, in one run: docs/figures.md's generated table is this output.

    python3 benchmarks/all.py --quick                 # CI scale: every benchmark at a small size (minutes)
    python3 benchmarks/all.py                         # full sizes (hours; MQ scale needs ~15 GB of disk)
    python3 benchmarks/all.py --only batch,startup --trec-eval /tmp/trec_eval/trec_eval --out figures.md
    python3 benchmarks/all.py --list                  # the registry: figure, script, full and quick arguments
    python3 benchmarks/all.py --only batch,startup --merge --docs   # rerun two, keep the others, update docs/figures.md

Each figure's script runs as its own process, one after another (never two at once: the figures are
timings). Scripts that write `--json` give structured figures (Cranfield beside each peer, with the
ratio); the others give the last lines of their own summary. The table is written to --out (default
benchmarks/results/all-<quick|full>.md) with the date, the machine, the load average before and after
each script and its wall time, and printed. A test (tests/test_readme_figures.py) fails when a figure of
docs/figures.md names no script, or names one that is not registered here.

With --merge, the figures not rerun keep their row from the previous table of the same size (the rows are
also kept as JSON beside it, `all-<size>.json`); every row carries the date it was measured. With
--docs (or its old name --readme), docs/figures.md's generated table (between the `all.py` markers) is
replaced by the table written, so the page shows exactly this output (tests/test_readme_figures.py checks
that the two are equal).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES_DOC = ROOT / "docs" / "figures.md"      # the page whose generated table --docs replaces
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import load, machine  # noqa: E402


@dataclass(frozen=True)
class Figure:
    """One measured figure: its benchmark script with the full-size arguments (`full`) and CI-scale ones."""

    key: str
    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    json: bool = False          # the script takes --json PATH (structured figures)
    trec_eval: bool = False     # the script takes --trec-eval PATH (trec_eval as a peer)
    tail: int = 3               # lines of stdout kept as the figure when there is no JSON
    what: str = ""


FIGURES: tuple[Figure, ...] = (
    Figure("batch", "batch.py", (), ("--quick",), json=True, trec_eval=True,
           what="a batch of run files, whole processes (full: 100 runs x 100 topics x 1000 = 10M lines)"),
    Figure("eval_speed", "eval_speed.py",
           ("--tools", "engine,pytrec_eval", "--reps", "1", "--no-memory", "--whole-process", "3"),
           ("--runs", "10", "--topics", "20", "--tools", "engine,pytrec_eval", "--reps", "1", "--no-memory",
            "--whole-process", "1"), trec_eval=True, tail=6,
           what="evaluation speed end to end from files (full: 100 runs x 50 topics x 1000)"),
    Figure("startup", "startup.py", (), ("--reps", "3"), json=True,
           what="CLI start-up, one 50-topic x 1000-doc run, 3 measures"),
    Figure("cli_speed", "cli_speed.py", (), ("--reps", "1"), tail=6,
           what="compare and stability gstudy, whole process, 31 runs x 40 topics; cost --plan on the demo"),
    Figure("api_speed", "api_speed.py", (), ("--calls", "200"), tail=16,
           what="Python API small calls and start-up"),
    Figure("scale", "scale.py", ("--cli",),
           ("--topics", "200", "--runs", "5", "--depth", "100", "--dir", "/tmp/cranfield-scale-quick"), json=True,
           what="Million Query scale: ingest, re-sync, evaluate, reads, pool"),
    Figure("read_speed", "read_speed.py", ("--runs", "200"), ("--runs", "10", "--topics", "10", "--repeat", "1"),
           what="reading run files (full: 200 files, 10M lines)"),
    Figure("stability_speed", "stability_speed.py", (), ("--systems", "20", "--topics", "100"), tail=5,
           what="stability analyses (full: 200 systems x 1000 topics)"),
    Figure("tui_sort", "tui_sort.py", (), ("--runs", "20", "--topics", "10", "--repeat", "3"), tail=9,
           what="TUI re-sort"),
    Figure("tui_open", "tui_open.py", (), ("--runs", "5", "--topics", "10", "--depth", "100"), tail=8,
           what="TUI cold open to a scored leaderboard"),
    Figure("docstore", "docstore.py", (), ("--docs", "20000", "--fetches", "200", "--dir", "/tmp/cranfield-docs-quick"),
           what="document store import and fetch"),
    Figure("phi_prediction", "phi_prediction.py", (), ("--splits", "100", "--seeds", "1"),
           what="Phi projected from 25 topics"),
    Figure("estimators", "estimators.py", (), ("--trials", "5", "--rates", "0.2"), tail=6,
           what="statAP / xinfAP bias, infAP CI coverage"),
    Figure("reductions_sakai", "reductions_sakai.py", (), ("--runs", "10", "--topics", "20", "--reps", "1"),
           tail=6, what="Sakai 2007 reductions"),
    Figure("stability_findings", "stability_findings.py", (),
           ("--runs", "10", "--topics", "20", "--bv-trials", "1", "--he-trials", "1"), tail=6,
           what="judgment reduction, pool bias"),
    Figure("planner_validation", "planner_validation.py", ("--trials", "200"), ("--trials", "5"),
           tail=4, what="planner's predicted tau vs observed"),
    Figure("audits", "audits.py", (), ("--world", "300", "--campaigns", "20"), tail=12,
           what="judge audits: canary rates and the crafted run vs set truth"),
    Figure("ppi", "ppi.py", (), ("--world", "300", "--campaigns", "20", "--topics", "60", "--labelled", "30"),
           tail=1, what="PPI intervals: coverage and width vs human-only, topic and document designs, next batch"),
    Figure("agreement_judges", "agreement_judges.py", (), ("--runs", "5", "--topics", "10", "--depth", "50"),
           tail=4, what="simulated judges' agreement"),
    Figure("completion", "completion.py", (), ("--runs", "10", "--topics", "10", "--depth", "50"), tail=6,
           what="completing biased judgments"),
    Figure("training_report", "training_report.py", (), ("--quick", "--repeats", "1", "--topics", "10"), tail=6,
           what="training collections"),
    Figure("kills", "kills.py", (), ("--kills", "3"), tail=6, what="real SIGKILLs"),
    Figure("pool_strategies", "pool_strategies.py", (), ("--runs", "10", "--topics", "10", "--trials", "1"),
           tail=6, what="pool strategies at a 5% budget vs truth"),
    Figure("rag_nuggets", "rag_nuggets.py", (), ("--runs", "5", "--topics", "5", "--errors", "0.1", "--seeds", "7"),
           tail=6, what="automatic nugget assignment vs truth (RAG)"),
    Figure("fuzz", "fuzz.py", ("--count", "5000", "--jobs", "2"), ("--count", "50"), tail=4,
           what="fuzzing mutated run/qrels files through the CLI"),
    Figure("key_storm", "key_storm.py", ("--seeds", "50", "--keys", "25"), ("--seeds", "1", "--keys", "10"), tail=4,
           what="seeded random key sequences over every TUI screen"),
    Figure("judge_throughput", "judge_throughput.py", (), ("--quick",), tail=13,
           what="judgments auto / nuggets auto vs a loopback endpoint of 16 slots x 25 ms (full: 10k and 100k pairs)"),
    Figure("pool_memory", "pool_memory.py", (), ("--topics", "500"), tail=1,
           what="build_pool statap --budget 64 over MQ-size candidates (full: 10,000 topics x 864 = 8.6M)"),
    Figure("cluster_path", "cluster_path.py", (), ("--dir", "/tmp/cranfield-scale-quick"), tail=3,
           what="eval --campaign through a dask scheduler + 2 local workers vs the local path (full: the MQ campaign of `scale`)"),
    Figure("screens", "screens.py", (), ("--campaigns", "demo"), tail=40,
           what="TUI key -> first frame per screen, and the leaderboard export"),
)


def registry() -> dict[str, Figure]:
    """Figures by key."""
    return {f.key: f for f in FIGURES}


def _structured(key: str, data: dict) -> tuple[str, str]:
    """(Cranfield's figure, the peers' figures with ratios) from a script's JSON."""
    if key == "batch":
        t = data["tools"]
        c = t.get("cranfield")
        me = (f"{c['wall']:.2f} s wall, {c['cpu']:.2f} s CPU, peak {c['peak_mb']:.0f} MB" if c else "-")
        if "store" in t:
            s = t["store"]
            me += f"; store path {s['wall']:.2f} s wall, {s['cpu']:.2f} s CPU, peak {s['peak_mb']:.0f} MB"
        if data.get("identical") is not None:
            me += f"; output {'=' if data['identical'] else '!='} trec_eval's"
        peers = []
        for name, p in t.items():
            if name in ("cranfield", "store"):
                continue
            r = f" (CPU ratio {c['cpu'] / p['cpu']:.2f}x, wall {c['wall'] / p['wall']:.2f}x)" if c and p["cpu"] else ""
            peers.append(f"{name} {p['wall']:.2f} s wall, {p['cpu']:.2f} s CPU, {p['peak_mb']:.0f} MB{r}")
        return me, "; ".join(peers)
    if key == "startup":
        me = f"eval {data['cranfield_eval_s']:.3f} s, --help {data['cranfield_help_s']:.3f} s"
        peers = (f"pytrec_eval {data['pytrec_eval_s']:.3f} s (Cranfield / pytrec_eval {data['ratio']:.2f}x; "
                 f"same values: {data['same_values']})")
        if "cranfield_all_trec_s" in data:
            me += f"; -m all_trec -q {data['cranfield_all_trec_s']:.3f} s"
            peers += (f"; all measures per topic {data['pytrec_eval_all_s']:.3f} s "
                      f"({data['ratio_all_trec']:.2f}x; CPU {data['ratio_cpu']:.2f}x / {data['ratio_all_trec_cpu']:.2f}x)")
        return me, peers
    if key == "scale":
        ing, ev = data.get("ingest", {}), data.get("evaluate", {})
        return (f"ingest {ing.get('seconds')} s (peak {ing.get('peak_gb')} GB); re-sync {data.get('resync_s')} s; "
                f"evaluate {ev.get('seconds')} s (peak {ev.get('peak_gb')} GB); one topic {data.get('read_topic_s')} s"
                + "".join(f"; `{k}` {v['seconds']} s / {v['peak_gb']} GB" for k, v in data.get("cli", {}).items()),
                "-")
    return json.dumps(data)[:200], "-"


def run_figure(f: Figure, quick: bool, trec_eval: str | None, tmp: Path) -> dict:
    """Run one figure's script; its figures, wall time and the load before and after."""
    args = list(f.quick if quick else f.full)
    shown = "python benchmarks/" + " ".join([f.script, *args])
    out_json = tmp / f"{f.key}.json"
    if f.json:
        args += ["--json", str(out_json)]
    if f.trec_eval and trec_eval:
        args += ["--trec-eval", trec_eval]
    cmd = [sys.executable, str(ROOT / "benchmarks" / f.script), *args]
    load0, t0 = load(), time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    row = {"key": f.key, "what": f.what, "command": shown + (" --trec-eval PATH" if f.trec_eval and trec_eval else ""),
           "seconds": round(seconds, 1), "load": f"{load0} -> {load()}", "ok": p.returncode == 0,
           "measured": f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M}"}
    if p.returncode != 0:
        row["cranfield"], row["peers"] = f"failed (exit {p.returncode}): {p.stderr.strip()[-300:]}", "-"
        return row
    if f.json and out_json.is_file():
        row["cranfield"], row["peers"] = _structured(f.key, json.loads(out_json.read_text()))
    else:
        lines = [" ".join(ln.replace("|", " ").split()) for ln in p.stdout.splitlines()]
        lines = [ln for ln in lines if ln and set(ln) - set("-:= ")]      # no blank or rule lines
        row["cranfield"], row["peers"] = "; ".join(lines[-f.tail:]), "-"
    return row


def table(rows: list[dict], quick: bool) -> str:
    """The Markdown table of the rows, with the machine, the size and each row's date."""
    head = (f"Made {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()}, "
            f"{'quick (CI) sizes' if quick else 'full (README) sizes'}, by `python benchmarks/all.py"
            f"{' --quick' if quick else ''}`; each row's date (UTC) and the load average (1/5/15 min) before -> "
            f"after its script.\n\n")
    out = ["| what | Cranfield | peers | command | s | measured | load |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r["what"], r["cranfield"], r["peers"], f"`{r['command']}`", str(r["seconds"]),
                 r.get("measured", "-"), r["load"]]
        out.append("| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |")
    return head + "\n".join(out) + "\n"


BEGIN, END = "<!-- benchmarks/all.py table: begin -->", "<!-- benchmarks/all.py table: end -->"


def merged(rows: list[dict], previous: list[dict]) -> list[dict]:
    """The new rows, and the previous rows of figures not rerun, in the registry's order."""
    by_key = {r["key"]: r for r in previous if r.get("key") in registry()}
    by_key.update({r["key"]: r for r in rows})
    return [by_key[f.key] for f in FIGURES if f.key in by_key]


def doc_block(page: str) -> str | None:
    """The generated table of a page (between the markers), or None when it has none."""
    if BEGIN not in page or END not in page:
        return None
    return page.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def with_block(page: str, text: str) -> str:
    """The page with its generated table replaced by `text`."""
    if doc_block(page) is None:
        raise SystemExit(f"{FIGURES_DOC.relative_to(ROOT)} has no {BEGIN} ... {END} block to replace")
    before, rest = page.split(BEGIN, 1)
    return before + BEGIN + "\n" + text + END + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI-scale sizes")
    ap.add_argument("--only", default=None, help="comma-separated figure keys (see --list)")
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"), help="a trec_eval 10.0 binary, as a peer")
    ap.add_argument("--out", default=None, help="where the Markdown table goes")
    ap.add_argument("--list", action="store_true", help="print the registry and exit")
    ap.add_argument("--merge", action="store_true", help="keep the previous rows of figures not rerun")
    ap.add_argument("--docs", "--readme", dest="docs", action="store_true",
                    help="put the table into docs/figures.md's generated block (--readme: the old name)")
    args = ap.parse_args(argv)
    reg = registry()
    if args.list:
        for f in FIGURES:
            print(f"{f.key:<20} benchmarks/{f.script:<24} full: {' '.join(f.full) or '(defaults)'}; "
                  f"quick: {' '.join(f.quick)}")
        return 0
    keys = [k for k in (args.only.split(",") if args.only else reg) if k]
    unknown = [k for k in keys if k not in reg]
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(unknown)}; see --list")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in keys:
            print(f"running {k} ...", file=sys.stderr, flush=True)
            rows.append(run_figure(reg[k], args.quick, args.trec_eval, Path(tmp)))
    size = "quick" if args.quick else "full"
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"all-{size}.md"
    store = out.with_suffix(".json")
    if args.merge and store.is_file():
        rows = merged(rows, json.loads(store.read_text()))
    text = table(rows, args.quick)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    store.write_text(json.dumps(rows, indent=1) + "\n")
    if args.docs:
        FIGURES_DOC.write_text(with_block(FIGURES_DOC.read_text(), text))
    print(text)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
