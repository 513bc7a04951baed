"""The public evaluation API: `evaluate(qrels, runs, measures)` and trec_eval-format output."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..util.lazy import lazy_module
from ..measures import MeasureRequest, load_all, resolve
from ..measures.registry import REGISTRY, aggregate_values
from ..ranking.ranked import EvalOptions, Ranked
from ..ranking.build import build_ranked, ranked_from_arrow

pd = lazy_module("pandas")      # the trec_eval text writer runs without it


@dataclass(eq=False, repr=False)        # holds arrays: no comparison or repr to generate
class Computed:
    """Per-group values of every requested measure, before they become a long table."""

    ranked: Ranked
    requests: list[MeasureRequest]
    values: dict[str, np.ndarray]        # output name -> per-group values (float or object for str)
    kinds: dict[str, MeasureRequest]     # output name -> its request
    notes: dict


def _options(options: EvalOptions | None, **kw) -> EvalOptions:
    if options is not None:
        return options
    return EvalOptions(**{k: v for k, v in kw.items() if v is not None})


def compute(qrels: pd.DataFrame, runs: pd.DataFrame, measures=None, options: EvalOptions | None = None,
            run_order: list[str] | None = None, extra: dict | None = None, presorted: bool = False,
            judged=None) -> Computed:
    """Evaluate every requested measure for every (run, topic) in one vectorized pass (`presorted`:
    see `build_ranked`; `judged`: `ranking.build.ArrowJudgments(qrels)` kept by the caller, for runs as
    an Arrow table)."""
    requests = resolve(measures)
    if not isinstance(runs, pd.DataFrame):      # an Arrow table in store order (engine.evaluation.blocks)
        ranked, notes = ranked_from_arrow(qrels, runs, run_order, options, judged)
    else:
        ranked, notes = build_ranked(qrels, runs, options, run_order=run_order, presorted=presorted)
    if extra:
        ranked.extra = extra
    ranked.qrels = qrels
    values, kinds = measure_values(ranked, requests)
    return Computed(ranked, requests, values, kinds, notes)


def measure_values(ranked: Ranked, requests: list[MeasureRequest]
                   ) -> tuple[dict[str, np.ndarray], dict[str, MeasureRequest]]:
    """Per output name its per-group values on `ranked` (-c's fill applied), and its request."""
    values: dict[str, np.ndarray] = {}
    kinds: dict[str, MeasureRequest] = {}
    fill = ranked.g_missing is not None and bool(ranked.g_missing.any())
    for req in requests:
        m = req.measure
        res = m.compute(ranked, req.params)
        names = req.names
        res = np.asarray(res)
        if res.ndim == 1:
            res = res[:, None]
        if res.shape[1] != len(names):
            raise AssertionError(f"measure {m.name} returned {res.shape[1]} columns for {len(names)} names")
        for j, n in enumerate(names):
            col = res[:, j]
            if fill and m.complete_fill is not None:
                col = col.copy()
                col[ranked.g_missing] = m.complete_fill
            values[n] = col
            kinds[n] = req
    return values, kinds


def evaluate(qrels: pd.DataFrame, runs: pd.DataFrame, measures=None, *,
             options: EvalOptions | None = None, rel_level: int | None = None,
             max_depth: int | None = None, judged_only: bool | None = None,
             complete: bool | None = None, gains: dict | None = None) -> pd.DataFrame:
    """Per-topic values of `measures` for all runs, long form: run, topic, measure, value.

    `qrels` has columns topic, doc, grade (plus optional stratum/prob columns used by sampling
    estimators); `runs` has run, topic, doc, score. Options follow trec_eval's -l, -M, -J, -c.
    `gains` (grade -> gain, e.g. a campaign's relevance scale) feeds the graded Cranfield measures
    (ndcgx, Q, rpref, GAP) that take no explicit gains; trec_eval's own measures keep their semantics.
    """
    opt = _options(options, rel_level=rel_level, max_depth=max_depth, judged_only=judged_only,
                   complete=complete)
    extra = {"gains": dict(gains)} if gains else None
    batches = run_batches(runs)
    if len(batches) <= 1:
        return to_long(compute(qrels, runs, measures, opt, extra=extra))
    # runs are evaluated independently (as trec_eval does, one run at a time): batches of runs go to
    # threads (numpy releases the GIL in the array work) and their tables are joined in run order
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=len(batches)) as ex:
        parts = list(ex.map(lambda b: to_long(compute(qrels, b, measures, opt, extra=extra)), batches))
    return concat_long(parts)


PARALLEL_MIN_ROWS = 400_000


def evaluate_files(qrels_path, run_paths: list, measures=None, *, options: EvalOptions | None = None,
                   warnings=None, gains: dict | None = None, workers: int | None = None,
                   strings: bool = False) -> pd.DataFrame:
    """Read judgments and run files and evaluate them, end to end, like `evaluate` on the tables.
    With `strings`, the text-valued measures are in `df.attrs["strings"]` and the notes in
    `df.attrs["notes"]` (what the trec_eval text writer needs besides the table).

    Runs are independent, so the run files are split into one batch per core and each batch is read
    and evaluated in its own thread (parsing and the array work release the GIL); the tables are joined
    in file order. Problems in any file are reported together, as `read_runs` does.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    from ..errors import FormatError, Problem, Warnings
    from ..formats.detect import read_judgments
    from ..formats.runs import read_runs

    w = warnings if warnings is not None else Warnings()
    qrels = read_judgments(qrels_path, w)
    paths = list(run_paths)
    k = min(workers or os.cpu_count() or 1, len(paths))
    opt = options or EvalOptions()
    extra = {"gains": dict(gains)} if gains else None
    def done(cs: list) -> pd.DataFrame:
        df = concat_long([to_long(c) for c in cs])
        if strings:
            df.attrs["strings"] = pd.concat([to_long_str(c) for c in cs], ignore_index=True)
            unjudged = sorted({t for c in cs for t in c.notes.get("topics_without_judgments", [])})
            df.attrs["notes"] = {"topics_without_judgments": unjudged} if unjudged else {}
            df.attrs["groups"] = sum(c.ranked.n_groups for c in cs)
            df.attrs["runs"] = [r for c in cs for r in dict.fromkeys(c.ranked.run_names)]
        return df

    if k < 2:
        return done([compute(qrels, read_runs(paths, w), measures, opt, extra=extra)])
    sizes = [os.path.getsize(p) if os.path.exists(p) else 0 for p in paths]
    bounds = np.searchsorted(np.cumsum(sizes), np.linspace(0, sum(sizes), k + 1)[1:-1], side="right")
    cuts = sorted(set([0, *[int(b) for b in bounds], len(paths)]))
    batches = [paths[a:b] for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    ws = [Warnings() for _ in batches]

    def one(i: int):
        try:
            runs = read_runs(batches[i], ws[i])
        except FormatError as exc:
            return exc
        return runs, compute(qrels, runs, measures, opt, extra=extra)

    with ThreadPoolExecutor(max_workers=len(batches)) as ex:
        results = list(ex.map(one, range(len(batches))))
    for x in ws:
        w.extend(x)
    errors = [r for r in results if isinstance(r, FormatError)]
    if errors:
        raise FormatError([p for e in errors for p in e.problems],
                          hint="; ".join(dict.fromkeys(e.hint for e in errors if e.hint)) or None)
    seen: dict[str, int] = {}
    dup = []
    for i, (runs, _) in enumerate(results):
        for name in runs["run"].unique() if len(runs) else []:
            if name in seen:        # as read_runs words it within one batch: both files named
                dup.append(Problem(str(_file_with_tag(batches[i], str(name))), None,
                                   f"run tag {name!r} is also the tag of {_file_with_tag(batches[seen[name]], str(name))}"))
            seen[str(name)] = i
    if dup:
        raise FormatError(dup, hint="every run needs a distinct tag; edit the 6th column of one file")
    return done([c for _, c in results])


def _file_with_tag(paths: list, tag: str):
    """The file of `paths` whose first results carry run tag `tag` (for a message; the first path if none)."""
    from ..formats.files import read_bytes
    for p in paths:
        for ln in read_bytes(p)[:65536].split(b"\n")[:100]:
            f = ln.split()
            if len(f) >= 6 and f[5].decode("utf-8", "replace") == tag:
                return p
    return paths[0]


def run_batches(runs: pd.DataFrame, workers: int | None = None) -> list[pd.DataFrame]:
    """Split a run table into contiguous batches of whole runs, one per core, when it is large."""
    import os
    n_cpu = workers or os.cpu_count() or 1
    if n_cpu < 2 or len(runs) < PARALLEL_MIN_ROWS:
        return [runs]
    col = runs["run"]
    codes = col.cat.codes.to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) else pd.factorize(col)[0]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if len(np.unique(codes[starts])) != len(starts) or len(starts) < 2:
        return [runs]          # a run's rows are not contiguous: evaluate in one pass
    k = min(n_cpu, len(starts))
    # cut at the run boundary nearest above each 1/k share of the rows (balance rows, not runs)
    at = np.searchsorted(starts, np.linspace(0, len(runs), k + 1)[1:-1])
    cuts = sorted({0, len(runs), *(int(starts[i]) for i in at if i < len(starts))})
    return [runs.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def concat_long(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Join long tables of disjoint run batches into the table one pass would give (same order)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return to_long_empty()
    runs = list(dict.fromkeys(r for p in parts for r in p["run"].cat.categories))
    measures = list(parts[0]["measure"].cat.categories)
    df = pd.concat([p.assign(run=p["run"].astype(object), measure=p["measure"].astype(object)) for p in parts],
                   ignore_index=True)
    df["run"] = pd.Categorical(df["run"], categories=runs)
    df["measure"] = pd.Categorical(df["measure"], categories=measures)
    order = np.argsort(df["measure"].cat.codes.to_numpy(), kind="stable")   # measure-major, runs in order
    df = df.iloc[order].reset_index(drop=True)
    df.attrs["aggregates"] = dict(parts[0].attrs.get("aggregates", {}))
    return df


def to_long_empty() -> pd.DataFrame:
    return pd.DataFrame({"run": pd.Series([], dtype=object), "topic": pd.Series([], dtype=object),
                         "measure": pd.Series([], dtype=object), "value": pd.Series([], dtype=float)})


def to_long(c: Computed) -> pd.DataFrame:
    """The long table (run, topic, measure, value) of numeric measures."""
    r = c.ranked
    names = [n for n, req in c.kinds.items() if req.measure.value_kind != "str"]
    n_g = r.n_groups
    if not names or n_g == 0:
        return pd.DataFrame({"run": pd.Series([], dtype=object), "topic": pd.Series([], dtype=object),
                             "measure": pd.Series([], dtype=object), "value": pd.Series([], dtype=float)})
    run_col = np.asarray(r.run_names, dtype=object)[r.g_run]
    topic_col = np.asarray(r.topic_names, dtype=object)[r.g_topic]
    vals = np.concatenate([np.asarray(c.values[n], dtype=np.float64) for n in names])
    df = pd.DataFrame({
        "run": pd.Categorical(np.tile(run_col, len(names)), categories=list(dict.fromkeys(r.run_names))),
        "topic": np.tile(topic_col, len(names)),
        "measure": pd.Categorical(np.repeat(np.asarray(names, dtype=object), n_g), categories=names),
        "value": vals,
    })
    df.attrs["aggregates"] = {n: c.kinds[n].measure.aggregate for n in names}
    return df


def to_long_str(c: Computed) -> pd.DataFrame:
    """The long table (run, topic, measure, value as text) of the text-valued measures (relstring)."""
    r = c.ranked
    names = [n for n, req in c.kinds.items() if req.measure.value_kind == "str" and req.measure.per_topic]
    n_g = r.n_groups
    run_col = np.asarray(r.run_names, dtype=object)[r.g_run]
    topic_col = np.asarray(r.topic_names, dtype=object)[r.g_topic]
    return pd.DataFrame({"run": np.tile(run_col, len(names)), "topic": np.tile(topic_col, len(names)),
                         "measure": np.repeat(np.asarray(names, dtype=object), n_g),
                         "value": np.concatenate([np.asarray(c.values[n], dtype=object) for n in names])
                         if names else np.zeros(0, object)})


def trec_eval_lines_long(df: pd.DataFrame, measures=None, per_query: bool = False,
                         strings: pd.DataFrame | None = None, kinds: dict | None = None,
                         runs: list[str] | None = None) -> list[str]:
    """trec_eval's exact text output, run after run, from a long table (as `evaluate`,
    `blocks.evaluate_store` or `engine.evaluation.evaluate_campaign` return it) plus the text-valued
    measures in `strings` (`to_long_str`). `kinds` (output name -> request) replaces resolving
    `measures`; `runs` lists the runs when the table has no numeric measure. Written by the one text
    writer, `trec_eval_text`."""
    if kinds is None:
        kinds = {}
        for req in resolve(measures):
            for n in req.names:
                kinds[n] = req
    if len(df):
        runs = list(df["run"].cat.categories)
    elif runs is None:
        runs = list(dict.fromkeys(strings["run"])) if strings is not None and len(strings) else []
    run_codes = df["run"].cat.codes.to_numpy() if len(df) else np.zeros(0, np.int64)
    meas = df["measure"].astype(object).to_numpy() if len(df) else np.zeros(0, object)
    vals = df["value"].to_numpy() if len(df) else np.zeros(0)
    topics = df["topic"].astype(object).to_numpy() if len(df) else np.zeros(0, object)
    by: dict = {}
    if len(df):
        starts = np.flatnonzero(np.concatenate(([True], (meas[1:] != meas[:-1]) | (run_codes[1:] != run_codes[:-1]))))
        ends = np.append(starts[1:], len(df))
        for a, b in zip(starts, ends):
            by[(meas[a], int(run_codes[a]))] = (topics[a:b], vals[a:b])
    sby: dict = {}
    if strings is not None and len(strings):
        for (m, r), g in strings.groupby(["measure", "run"], sort=False):
            sby[(m, r)] = dict(zip(g["topic"], g["value"]))
    return trec_eval_text(runs, kinds, by, sby, per_query=per_query, numeric=bool(len(df)))


def trec_eval_text(runs: list[str], kinds: dict, by: dict, sby: dict, per_query: bool = False,
                   numeric: bool = True) -> list[str]:
    """trec_eval's text, run after run, from plain containers (no pandas): `kinds` output name -> request
    in output order; `by[(name, run index)]` = (topics, values) of a numeric measure; `sby[(name, run)]` =
    {topic: text} of a text-valued one; `numeric`: whether any numeric value exists at all."""
    lines: list[str] = []
    for ri, run in enumerate(runs):
        numeric_names = [n for n in kinds if (n, ri) in by]
        if numeric_names:
            run_topics = by[(numeric_names[0], ri)][0]
        elif any(r == run for _, r in sby) or (not numeric and any(k.measure.name == "runid" for k in kinds.values())):
            run_topics = list(next((v for (m, r), v in sby.items() if r == run), {}))
        else:
            continue
        if per_query:
            heads, columns = [], []          # per measure printed per topic: its line head, its texts by topic
            for n, req in kinds.items():
                m = req.measure
                if not m.per_topic:
                    continue
                if m.value_kind == "str":
                    got = sby.get((n, run), {})
                    values = [got.get(t, "") for t in run_topics]
                else:
                    got = dict(zip(by[(n, ri)][0], np.asarray(by[(n, ri)][1]).tolist()))
                    values = [got[t] for t in run_topics]
                heads.append(f"{n:<22}\t")
                columns.append(_fmt_column(m.value_kind, values, m.text_format))
            for j, t in enumerate(run_topics):
                lines += [f"{head}{t}\t{texts[j]}" for head, texts in zip(heads, columns)]
        for n, req in kinds.items():
            m = req.measure
            if not m.summary:
                continue
            if m.value_kind == "str":
                v = run if m.name == "runid" else next(iter(sby.get((n, run), {}).values()), "")
            else:
                v = aggregate_values(m.aggregate, by[(n, ri)][1])
            lines.append(f"{n:<22}\tall\t{_fmt(m.value_kind, v, m.text_format)}")
    return lines


def _lines_from_long(df: pd.DataFrame, per_query: bool) -> list[str]:
    """trec_eval text from any long table (run, topic, measure, value): measures in the order given."""
    from ..measures.names import NDEVAL, translate

    if not len(df):
        return []
    names = list(dict.fromkeys(df["measure"].astype(str)))
    kinds = {}
    for n in names:
        spec, _ = translate(n)
        if spec.startswith(NDEVAL):                  # a diversity measure (engine.measures.diversity): a mean
            from ..measures.registry import Measure
            kinds[n] = MeasureRequest(Measure(name=n, compute=None, extension=True), (), None)
            continue
        reqs = resolve([spec])
        kinds[n] = next((r for r in reqs if n in r.names), reqs[0])
    runs = list(dict.fromkeys(df["run"].astype(str)))
    if len(runs) > 1 and not any(k.measure.name == "runid" for k in kinds.values()):
        kinds = {"runid": resolve(["runid"])[0], **kinds}      # several runs: each block names its run
    mcode = pd.Categorical(df["measure"].astype(str), categories=names).codes
    rcode = pd.Categorical(df["run"].astype(str), categories=runs).codes
    topic = df["topic"].astype(str).to_numpy(object)
    tkey = np.asarray([t.encode("utf-8") for t in topic], dtype=object)
    order = np.lexsort((tkey, rcode, mcode))
    d = pd.DataFrame({"run": pd.Categorical(np.asarray(runs, dtype=object)[rcode[order]], categories=runs),
                      "topic": topic[order], "measure": np.asarray(names, dtype=object)[mcode[order]],
                      "value": df["value"].to_numpy()[order]})
    return trec_eval_lines_long(d, per_query=per_query, kinds=kinds)


def aggregate_kind(name: str, df: pd.DataFrame | None = None) -> str:
    """How a measure output is summarized over topics (mean, sum, gmean)."""
    if df is not None and name in df.attrs.get("aggregates", {}):
        return df.attrs["aggregates"][name]
    load_all()
    if name in REGISTRY:
        return REGISTRY[name].aggregate
    best = None
    for base in REGISTRY:
        if name.startswith(base + "_") and (best is None or len(base) > len(best)):
            best = base
    return REGISTRY[best].aggregate if best else "mean"


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Run x measure table of summary values (mean, sum or geometric mean over topics, as trec_eval).
    A value undefined on every topic (Accuracy without a relevant document retrieved), a run or measure
    without topics, and empty inputs give NaN (as ir_measures' aggregates), not 0 or a frame without
    columns."""
    runs = list(df["run"].cat.categories) if "run" in df and hasattr(df["run"], "cat") else []
    order = list(df["measure"].cat.categories) if "measure" in df and hasattr(df["measure"], "cat") else []
    if len(df) == 0:
        return pd.DataFrame(np.nan, index=pd.Index(runs or ["run"]), columns=pd.Index(order, dtype=object))
    out = {}
    aggs = df.attrs.get("aggregates", {})
    kinds: dict = {}
    # the (run, measure) groups in order of first appearance, each group's values in table order (as a
    # groupby gives them), by codes and one stable sort: no frame per group (4,000 at 1,000 runs)
    rc, run_of = _codes(df["run"])
    mc, meas_of = _codes(df["measure"])
    keep = (rc >= 0) & (mc >= 0)                       # (a missing run or measure is in no group)
    gid, first = pd.factorize(rc[keep] * np.int64(max(len(meas_of), 1)) + mc[keep], sort=False)
    srt = np.argsort(gid, kind="stable")
    value = df["value"].to_numpy(np.float64)[keep][srt]
    bounds = np.searchsorted(gid[srt], np.arange(len(first) + 1))
    for g, key in enumerate(first.tolist()):
        run, meas = run_of[key // max(len(meas_of), 1)], meas_of[key % max(len(meas_of), 1)]
        kind = kinds.get(meas)
        if kind is None:
            kind = kinds[meas] = aggs[meas] if meas in aggs else aggregate_kind(str(meas), df)
        values = value[bounds[g]:bounds[g + 1]]
        out.setdefault(meas, {})[run] = (np.nan if kind == "validmean" and np.isnan(values).all()
                                         else aggregate_values(kind, values))
    table = pd.DataFrame(out)
    order = order or list(out)
    runs = runs or list(table.index)
    return table.reindex(index=runs, columns=[m for m in order if m in table.columns] if len(table.columns) else order)


def _codes(col: pd.Series) -> tuple[np.ndarray, list]:
    """(per row a code, -1 where missing; the value of each code) of a table column."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy(np.int64), list(col.cat.categories)
    codes, uniq = pd.factorize(col, sort=False)
    return codes.astype(np.int64), list(uniq)


def per_topic_table(df: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Topic x run matrix of one measure."""
    sub = df[df["measure"] == measure]
    return sub.pivot(index="topic", columns="run", values="value")


# ------------------------------------------------------------------ trec_eval text output

def _fmt(kind: str, value, text_format: str = "{}") -> str:
    if kind == "str":
        return text_format.format(value)
    if kind == "long":
        return str(int(value))
    v = float(value)
    if v != v:  # NaN: printf prints the sign bit, as trec_eval does for its 0/0 cases
        return ("-nan" if np.signbit(v) else "nan").rjust(6)
    return f"{v:6.4f}"


def _fmt_column(kind: str, values: list, text_format: str = "{}") -> list[str]:
    """`_fmt` of each value (a measure's per-topic column)."""
    if kind == "float":
        return [f"{v:6.4f}" if v == v else _fmt(kind, v) for v in map(float, values)]
    if kind == "long":
        return [str(v) for v in map(int, values)]
    return [_fmt(kind, v, text_format) for v in values]


def trec_eval_lines(c, per_query: bool = False) -> list[str]:
    """trec_eval's exact text output, run after run (one block per run, as separate trec_eval calls), from
    `compute`'s result or from a long table as `evaluate` returns it (any measure names it accepts)."""
    if isinstance(c, pd.DataFrame):
        return _lines_from_long(c, per_query)
    return trec_eval_lines_long(to_long(c), per_query=per_query, strings=to_long_str(c), kinds=c.kinds,
                                runs=list(dict.fromkeys(c.ranked.run_names)))
