"""What the screens show, as plain tables: a thin layer over the engine (no Textual imports).

Scores come from `engine.evaluation.evaluate_campaign` (summaries from `engine.summarize`); this module only
arranges them: run x topic matrices, intervals of the mean, adjacent-run paired tests, judged@10,
and per-document contributions read off the engine's ranked lists.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


from engine.errors import CranfieldError, Warnings
from engine.evaluation.evaluate import compute, summarize
from engine.measures import load_all, resolve
from engine.measures.registry import REGISTRY
from engine.ranking.ranked import EvalOptions
from engine.ranking.join import rename_runs
from engine.stability.significance import adjacent_paired_p, t_interval
from engine.util.names import natural_key

from .source import Opened, load_docs, open_campaign

DEFAULT_MEASURES = ["map", "P.10", "ndcg_cut.10", "bpref"]


def output_names(spec: str) -> list[str]:
    """Output names of one measure spec (P.10 -> P_10)."""
    return [n for req in resolve([spec]) for n in req.names]


def measure_choices() -> list[str]:
    """Specs a user can pick: every per-topic float measure, one entry per default cut-off."""
    load_all()
    out = []
    for m in sorted(REGISTRY.values(), key=lambda m: m.order):
        if m.value_kind != "float" or not m.per_topic or not m.summary or m.aggregate != "mean":
            continue
        if m.param_kind in ("int_cut", "float_cut") and m.params:
            out += [f"{m.name}.{p:g}" if isinstance(p, float) else f"{m.name}.{p}" for p in m.params]
        elif m.param_kind == "none" or m.params:
            out.append(m.name)
    return out


@dataclass
class Scores:
    """Every (run, topic) value of the chosen measures, as matrices."""

    measures: list[str]                 # output names, in the user's order
    runs: list[str]
    topics: list[str]
    matrix: dict[str, np.ndarray]       # measure -> (n_runs, n_topics); NaN where the run has no list
    means: pd.DataFrame                 # run x measure summaries (engine.summarize)
    judged10: np.ndarray                # per run: mean share of the top 10 that is judged
    ranked: object                      # engine Ranked (row data for drill-downs); None for large campaigns
    group_of: np.ndarray                # (n_runs, n_topics) group index or -1
    t_num_rel: np.ndarray = None        # per topic: relevant documents judged
    depth_t: np.ndarray = None          # per topic: deepest k with every run's top k judged
    holes: np.ndarray = None            # per run: unjudged documents in its top 10s
    n_top: np.ndarray = None            # per run: documents in its top 10s
    judgments: str = "official"         # the judgment spec the scores used (engine.judgments.sources)
    filled10: np.ndarray = None         # per run: share of its top 10s judged by a non-official source


@dataclass
class Intake:
    """The outcome of a submission: accepted or refused, the report's lines, the accepted run tags."""

    accepted: bool
    lines: list[str]
    tags: list[str]


class CampaignModel:
    """A loaded campaign plus its evaluation, shared by every screen."""

    def __init__(self, opened: Opened):
        self.o = opened
        self.root = opened.root
        self.config = opened.config
        self.name = opened.name
        self.runs = opened.runs
        self.store = opened.store
        self.large = bool(opened.large)
        self._topic_ranked: dict = {}
        self.qrels = opened.qrels
        self.topics = opened.topics
        self.run_meta = opened.run_meta.set_index("run")
        self.warnings: Warnings = opened.warnings
        ev = self.config.get("evaluation") or {}
        rel = self.config.get("relevance") or {}
        self.options = EvalOptions(rel_level=int(rel.get("binary_threshold", 1)),
                                   max_depth=int(ev["depth"]) if ev.get("depth") else None)
        self.default_measures = [str(m) for m in (ev.get("measures") or DEFAULT_MEASURES)]
        self.scores: Scores | None = None
        self.judgment_spec: str | None = None   # None: the campaign's judgments (as `cranfield eval`)
        self._combined: pd.DataFrame | None = None
        self._docs: dict | None = None
        self._pools: pd.DataFrame | None = None

    @classmethod
    def load(cls, root: Path) -> "CampaignModel":
        """Open a campaign; an unchanged campaign (same files, sizes, times) reuses this process's last read."""
        key = (str(Path(root).resolve()), _fingerprint(Path(root)))
        hit = _OPENED.get(key)
        if hit is None:
            hit = _OPENED[key] = (open_campaign(root), {})
            while len(_OPENED) > 4:
                _OPENED.pop(next(iter(_OPENED)))
        model = cls(hit[0])
        model._score_cache = hit[1]
        return model

    # ------------------------------------------------------------------ evaluation
    def usable_measures(self, specs: list[str]) -> tuple[list[str], list[str]]:
        """(specs the engine knows, unknown specs with the reason)."""
        from engine.measures.names import translate
        ok, bad = [], []
        for s in specs:
            try:
                spec, opts = translate(s)       # the one request parser: ir_measures' names too (nDCG@10)
                if opts:
                    raise CranfieldError(f"it implies evaluation options ({', '.join(sorted(opts))}); the "
                                         f"leaderboard scores every measure under the campaign's options "
                                         f"(use `cranfield eval -m`)")
                output_names(spec)
                ok.append(spec)
            except CranfieldError as exc:
                bad.append(f"{s}: {exc}")
        return ok, bad

    def evaluate(self, specs: list[str]) -> Scores:
        """Evaluate `specs` on all runs and topics through the engine's campaign API
        (`engine.evaluation.evaluate_campaign`: in memory, or streamed over the run store by topic blocks
        for a large campaign; the campaign's gains and run renames applied), arranged as matrices."""
        if not self.large and len(self.runs) == 0:
            raise CranfieldError(f"{self.root}/runs: the campaign has no runs")
        cache, names = self._start(specs)
        if names is None:
            return self.scores
        from engine.evaluation.seam import evaluate_campaign
        c = self._engine_campaign()
        q = self.judgments()
        ev = evaluate_campaign(c, specs, options=self.options, extras=True,
                               qrels=None if self._combined is None else q[["topic", "doc", "grade"]])
        df, facts, computed = ev.table, ev.facts, ev.computed
        if computed is not None:
            r = computed.ranked
            run_names, topic_names = list(r.run_names), list(r.topic_names)
            t_num_rel = np.asarray(r.t_num_rel)
        else:
            r = None
            rename = c.run_renames()
            run_names = [rename.get(x, x) for x in self.store.runs]
            topic_names = sorted(set(q["topic"].astype(str)), key=lambda t: t.encode("utf-8"))
            t_num_rel = (q[q["grade"] >= self.options.rel_level].groupby(q["topic"].astype(str)).size()
                         .reindex(topic_names).fillna(0).to_numpy(np.int64))
        n_r, n_t = len(run_names), len(topic_names)
        ri = {x: i for i, x in enumerate(run_names)}
        ti = {t: i for i, t in enumerate(topic_names)}
        means = summarize(df) if len(df) else pd.DataFrame()
        matrix = {}
        for n in names:
            m = np.full((n_r, n_t), np.nan)
            sub = df[df["measure"] == n]
            i = sub["run"].astype(str).map(ri).to_numpy(np.float64)
            j = sub["topic"].astype(str).map(ti).to_numpy(np.float64)
            ok = ~(np.isnan(i) | np.isnan(j))
            m[i[ok].astype(np.int64), j[ok].astype(np.int64)] = sub["value"].to_numpy()[ok]
            matrix[n] = m
        g_run = facts["run"].astype(str).map(ri).to_numpy(np.int64)
        g_topic = facts["topic"].astype(str).map(ti).to_numpy(np.int64)
        missing = facts["missing"].to_numpy(bool)
        group_of = np.full((n_r, n_t), -1, dtype=np.int64)
        # in memory: the group index into the ranked lists; streamed: present (rows are read per topic)
        group_of[g_run[~missing], g_topic[~missing]] = np.flatnonzero(~missing) if r is not None else 0
        for n in names:
            matrix[n][group_of < 0] = np.nan
        denom = np.minimum(facts["num_ret"].to_numpy(), 10).astype(float)
        judged = facts["top10_judged"].to_numpy(float)
        share = np.divide(judged, denom, out=np.ones_like(judged), where=denom > 0)
        j10 = np.full((n_r, n_t), np.nan)
        j10[g_run[~missing], g_topic[~missing]] = share[~missing]
        with np.errstate(invalid="ignore"), _quiet():
            judged10 = np.nanmean(j10, axis=1) if n_t else np.zeros(n_r)
        f = pd.DataFrame({"g_run": g_run, "g_topic": g_topic, "num_ret": facts["num_ret"].to_numpy(),
                          "top10_unjudged": facts["top10_unjudged"].to_numpy(), "depth": facts["depth"].to_numpy()})
        self.scores = Scores(names, run_names, topic_names, matrix,
                             means.reindex(index=[x for x in run_names if x in means.index], columns=names),
                             np.nan_to_num(judged10, nan=1.0), r, group_of, t_num_rel, *_facts(f, n_r, n_t),
                             judgments=self.judgments_label(), filled10=self._filled10(run_names))
        if cache is not None:
            cache[(self.judgment_spec, tuple(specs))] = self.scores
        return self.scores

    def _start(self, specs: list[str]) -> tuple[dict | None, list[str] | None]:
        """(score cache, output names) for an evaluation; names None when the cache already had it
        (then self.scores is set)."""
        if len(self.qrels) == 0:
            raise CranfieldError(f"{self.root}/judgments: the campaign has no judgments yet")
        cache = getattr(self, "_score_cache", None)
        key = (self.judgment_spec, tuple(specs))
        if cache is not None and key in cache:
            self.scores = cache[key]
            return cache, None
        names: list[str] = []
        for s_ in specs:
            names += [n for n in output_names(s_) if n not in names]
        return cache, names

    # ------------------------------------------------------------------ judgment sources
    def judgment_choices(self) -> list[tuple[str, str]]:
        """(spec, description) of every judgment spec the campaign offers (engine.judgments.sources)."""
        from engine.judgments.sources import judgment_choices
        return judgment_choices(self._engine_campaign())

    def nested_sources(self, a: str, b: str) -> bool:
        """One of sources a, b holds the other's judgments (engine.judgments.sources.nested)."""
        from engine.judgments.sources import nested
        return nested(self._engine_campaign(), a, b)

    def agreement_pair(self) -> tuple[str, str | None]:
        """The two sources Agreement compares first (engine.judgments.sources.agreement_pair)."""
        from engine.judgments.sources import agreement_pair
        return agreement_pair(self._engine_campaign())

    def use_judgments(self, spec: str | None) -> None:
        """Score with the judgments `spec` combines (`official`, `official+llm`, `majority:a,b,c`,
        `campaign`), as `cranfield eval --judgments SPEC`; None or `official` (when the official
        source is the campaign's own judgments): the campaign's judgments. Takes effect at the next
        `evaluate`."""
        from engine.judgments.sources import HUMAN, combined_judgments, resolve_name
        c = self._engine_campaign()
        if spec is None or (spec == "official" and resolve_name(c, "official") == HUMAN):
            self.judgment_spec, self._combined = None, None
        else:
            self._combined = combined_judgments(c, spec, Warnings())
            self.judgment_spec = spec
        self._topic_ranked.clear()

    def judgments(self) -> pd.DataFrame:
        """The judgments scores use: the campaign's (topic, doc, grade, ...), or the combined spec's
        (topic, doc, grade, source)."""
        return self.qrels if self._combined is None else self._combined

    def judgments_label(self) -> str:
        """The judgment spec in use, as the leaderboard names it."""
        return "official" if self.judgment_spec is None else self.judgment_spec

    def _filled10(self, run_names: list[str]) -> np.ndarray | None:
        """Per run: share of its top 10s judged by a source other than the official one
        (engine.judgments.sources.judged_by, as `cranfield holes` reports filled@10); None for official judgments."""
        if self._combined is None:
            return None
        from engine.judgments.sources import judged_by, non_official
        others = non_official(self._engine_campaign(), self.judgment_spec)
        if not others:
            return None
        runs = self.runs if not self.large else self.run_rows(None, max_pos=10)
        share = judged_by(runs, self._combined, others, 10)
        return share.reindex(run_names).fillna(0.0).to_numpy(np.float64)

    def _engine_campaign(self):
        c = self.o.engine_campaign
        if c is None:
            raise CranfieldError(f"{self.root}: not opened through engine.campaign.campaign.load_campaign")
        return c

    def run_rows(self, tags: list[str] | None, max_pos: int | None = None,
                 topics: list[str] | None = None) -> pd.DataFrame:
        """The rows (run, topic, doc, rank, score) of runs `tags` (all when None), by campaign run name;
        read from the run store for a large campaign (only the top `max_pos` of each ranking, only
        `topics` when given)."""
        if not self.large:
            df = self.runs
            return df if tags is None else df[df["run"].astype(str).isin(set(tags))]
        c = self.o.engine_campaign
        rename = c.run_renames() if c is not None else {}
        back = {v: k for k, v in rename.items()}
        df = self.store.frame(runs=None if tags is None else [back.get(t, t) for t in tags], topics=topics,
                              max_pos=max_pos)
        rename_runs(df, rename)
        return df

    # ------------------------------------------------------------------ submissions and fusion
    def submit_runs(self, paths: list[str], *, group: str | None = None, manual: bool = False,
                    priority: int | None = None, check_only: bool = False, pooled: bool = True) -> "Intake":
        """Submit run files to the campaign through engine.campaign.intake.submit (as `cranfield submit`): the
        report says accepted (with each run's metadata, header lines and notes) or refused (every
        problem as file:line: what; nothing copied). The campaign is read afresh from disk."""
        from engine.errors import FormatError
        from engine.campaign.intake import submit
        try:
            res = submit(self.root, [str(p) for p in paths], group=group, manual=manual, priority=priority,
                         dry_run=check_only, pooled=pooled)
        except FormatError as exc:
            return Intake(False, [str(p) for p in exc.problems] + ([f"hint: {exc.hint}"] if exc.hint else []), [])
        except CranfieldError as exc:
            return Intake(False, [str(exc)], [])
        from engine.campaign.config import CONFIG_NAME, read_config
        meta = {} if check_only else (read_config(self.root / CONFIG_NAME).get("runs") or {})
        lines = []
        for sub in res:
            lines.append(f"{'ok' if check_only else 'accepted'}: {sub.path} -> run {sub.tag} ({sub.lines} lines, "
                         f"{sub.topics} topics, sha256 {sub.checksum[:12]})")
            if sub.tag in meta:      # as recorded in campaign.yaml (runs.TAG)
                lines.append(f"  runs.{sub.tag}: " + ", ".join(f"{k} {v}" for k, v in meta[sub.tag].items()))
            lines += [f"  header: {h}" for h in sub.header] + [f"  note: {n}" for n in sub.notes]
        return Intake(True, lines, [str(sub.tag) for sub in res])

    @staticmethod
    def fusion_methods() -> tuple[str, ...]:
        """The rank-fusion methods the engine offers (engine.pooling.rank_fusion.METHODS)."""
        from engine.pooling.rank_fusion import METHODS
        return tuple(METHODS)

    def fuse_runs(self, tags: list[str], method: str, out_dir: Path, *, tag: str | None = None,
                  k: float = 60.0, depth: int | None = None) -> tuple[Path, str]:
        """Fuse the runs `tags` (engine.pooling.rank_fusion, as `cranfield fuse --campaign DIR --run ...`) and write
        the fused run to out_dir/TAG.txt (default tag fused-METHOD), `depth` documents per topic (default:
        the campaign's submission depth limit, so the fused run can be submitted): (full path, summary)."""
        from engine.formats.runs import write_run
        from engine.pooling.rank_fusion import fuse, select_runs
        from engine.campaign.intake import depth_limit
        depth = depth if depth is not None else depth_limit(self._engine_campaign())
        runs = select_runs(self.run_rows(list(tags)), list(tags), str(self.root))
        tag = tag or f"fused-{method}"
        out = fuse(runs, method, k=k, depth=depth, tag=tag)
        path = (Path(out_dir) / f"{tag}.txt").resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_run(path, out, tag=tag)
        n = runs["run"].astype(str).nunique()
        return path, (f"wrote {path}: {method} of {n} runs ({', '.join(tags)}), {out['topic'].nunique()} topics, "
                      f"{len(out)} lines, tag {tag}")

    def topic_runs(self, topic: str) -> pd.DataFrame:
        """Every run's results for one topic (read from the run store for a large campaign)."""
        if not self.large:
            return self.runs
        return self.run_rows(None, topics=[topic])

    # ------------------------------------------------------------------ leaderboard
    def leaderboard(self, sort: str | None = None, descending: bool = True, filt: tuple[str, str] | None = None,
                    sig_measure: str | None = None, alpha: float = 0.05) -> pd.DataFrame:
        """One row per run: metadata, per measure mean and 95% half-width, judged@10, and whether the
        run is significantly different (paired t-test over topics) from the run listed above it."""
        s = self._need()
        df = self._board_base(s)
        if filt is not None:
            df = df[filter_mask(df, filt)]
        if sort is None:
            sort = s.measures[0] if s.measures else "run"
        df = df.sort_values([sort, "run"], ascending=[not descending, True], kind="mergesort")
        sm = sig_measure if sig_measure in s.matrix else (sort if sort in s.matrix else (s.measures[0] if s.measures else None))
        p = np.full(len(df), np.nan)
        if sm is not None and len(df) > 1:
            p[1:] = adjacent_paired_p(s.matrix[sm][df.index.to_numpy()])
        df["p_above"] = p
        df["same_as_above"] = ~(p < alpha)           # NaN (identical runs, no test): not different
        df.attrs["sig_measure"] = sm
        return df

    def _board_base(self, s: Scores) -> pd.DataFrame:
        """The unsorted leaderboard of the current scores (cached: sorting only reorders it)."""
        cached = getattr(self, "_board_cache", None)
        if cached is not None and cached[0] is s:
            return cached[1]
        meta = self.run_meta.reindex(s.runs)
        cols = {"run": s.runs, "group": meta["group"].fillna("").to_numpy(),
                "type": meta["type"].fillna("automatic").to_numpy(),
                "pooled": meta["pooled"].fillna(False).astype(bool).to_numpy()}
        for n in s.measures:
            _, half = t_interval(s.matrix[n])
            cols[n] = s.means[n].reindex(s.runs).to_numpy(np.float64)
            cols[n + " ±"] = half
        cols["judged@10"] = s.judged10
        if s.filled10 is not None:
            cols["filled@10"] = s.filled10
        df = pd.DataFrame(cols, index=np.arange(len(s.runs)))
        self._board_cache = (s, df)
        return df

    def filters(self) -> list[tuple[str, str, str]]:
        """(kind, value, label) of every leaderboard filter."""
        out = [("all", "", "all runs"), ("pooled", "yes", "pooled runs"), ("pooled", "no", "runs not pooled"),
               ("type", "manual", "manual runs"), ("type", "automatic", "automatic runs")]
        for g in sorted(set(self.run_meta["group"].dropna().astype(str)) - {""}):
            out.append(("group", g, f"group {g}"))
        return out

    # ------------------------------------------------------------------ per-topic matrix
    def topic_table(self, measure: str) -> pd.DataFrame:
        """One row per topic: title, category, R, judged, judged depth, mean/min/max of `measure`."""
        s = self._need()
        m = s.matrix[measure]
        titles = dict(zip(self.topics["topic"].astype(str), self.topics["title"].astype(str)))
        cats = self.o.categories()
        depth_t = s.depth_t
        j = self.judgments()
        judged = j[j["grade"] >= 0].groupby("topic").size()
        with np.errstate(invalid="ignore"), _quiet():
            df = pd.DataFrame({
                "topic": s.topics,
                "title": [titles.get(t, "") for t in s.topics],
                "category": [cats.get(t, "") for t in s.topics],
                "R": np.asarray(s.t_num_rel, dtype=np.int64),
                "judged": judged.reindex(s.topics).fillna(0).astype(np.int64).to_numpy(),
                "depth": depth_t.astype(np.int64),
                "mean": np.nanmean(m, axis=0), "min": np.nanmin(m, axis=0), "max": np.nanmax(m, axis=0),
            })
        return df

    # ------------------------------------------------------------------ drill-downs
    def ranked_list(self, run: str, topic: str, measure: str | None = None, limit: int | None = 100) -> pd.DataFrame:
        """One run's ranked list for a topic: rank, doc, grade (or -1 not pooled, -2 pooled unjudged),
        pool method/stratum, and each document's contribution to `measure` when the measure explains
        its score (the contributions sum to the value)."""
        cols = ["rank", "doc", "grade", "source", "contribution"]
        s = self._need()
        if run not in s.runs or topic not in s.topics or s.group_of[s.runs.index(run), s.topics.index(topic)] < 0:
            return pd.DataFrame({c: [] for c in cols})
        r = self.topic_ranked(topic)
        groups = np.flatnonzero(np.asarray(r.run_names)[r.g_run] == run)
        if not len(groups):
            return pd.DataFrame({c: [] for c in cols})
        g = int(groups[0])
        a, b = r.offsets[g], r.offsets[g + 1]
        df = pd.DataFrame({"rank": r.rank[a:b], "doc": np.asarray(r.doc[a:b], dtype=object), "grade": r.rel[a:b]})
        ex = self.contributions(topic, measure) if measure is not None else None
        df["contribution"] = ex[0][a:b] if ex is not None else np.nan
        src = self.pool_sources(topic)
        df["source"] = df["doc"].map(src).fillna("") if len(src) else ""
        return df.iloc[:limit][cols]

    def topic_ranked(self, topic: str):
        """The engine's ranked lists of one topic, every run (as evaluated: the campaign's options,
        gains and run names); the last few topics are kept."""
        key = topic
        if key not in self._topic_ranked:
            j = self.judgments()
            q = j[j["topic"].astype(str) == topic].reset_index(drop=True)
            if self._combined is not None:
                q = q[["topic", "doc", "grade"]]
            runs = self.topic_runs(topic)
            if not self.large:
                runs = runs[(runs["topic"] == topic).to_numpy()]
            order = list(self.scores.runs) if self.scores is not None else None
            gains = self.gains()
            out = compute(q, runs, ["num_ret"], self.options, run_order=order,
                          extra={"gains": gains} if gains else None)
            while len(self._topic_ranked) >= 4:          # bounded memory
                self._topic_ranked.pop(next(iter(self._topic_ranked)))
            self._topic_ranked[key] = out.ranked
        return self._topic_ranked[key]

    def gains(self) -> dict:
        """The campaign's gain per grade (campaign.yaml relevance.scale), {} when it sets none."""
        c = self.o.engine_campaign
        try:
            return dict(c.gains()) if c is not None else {}
        except (AttributeError, KeyError, TypeError):
            return {}

    def contributions(self, topic: str, measure: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(per row of `topic_ranked(topic)`: the document's contribution to `measure`, per group: the
        value they sum to), from the measure's own `contributions`; None when the measure cannot
        explain its score."""
        from engine.measures.registry import explain, request_for_output
        try:
            req = request_for_output(measure)
        except CranfieldError:
            return None
        r = self.topic_ranked(topic)
        ex = explain(r, req)
        if ex is None:
            return None
        values = np.asarray(req.measure.compute(r, req.params), dtype=np.float64)
        values = values[:, req.names.index(measure)] if values.ndim == 2 else values
        return ex[measure], values

    def pool_sources(self, topic: str) -> pd.Series:
        """doc -> 'method/stratum' for the topic's pooled documents (from qrels columns and pools/)."""
        parts = []
        q = self.qrels
        if "method" in q.columns or "stratum" in q.columns:
            sub = q[q["topic"] == topic]
            lab = sub["method"].astype(str) if "method" in sub else pd.Series("", index=sub.index)
            if "stratum" in sub:
                lab = lab + "/s" + sub["stratum"].astype(str)
            parts.append(pd.Series(lab.to_numpy(), index=sub["doc"].to_numpy()))
        pools = self.pools()
        if len(pools):
            sub = pools[pools["topic"] == topic]
            lab = sub["method"].astype(str) + "/s" + sub["stratum"].astype(str)
            parts.append(pd.Series(lab.to_numpy(), index=sub["doc"].to_numpy()))
        if not parts:
            return pd.Series(dtype=object)
        out = pd.concat(parts)
        return out[~out.index.duplicated(keep="last")]

    def pools(self) -> pd.DataFrame:
        """Every pool file in pools/ (topic, doc, stratum, prob, method, order, pool)."""
        if self._pools is None:
            from engine.errors import FormatError
            from engine.pooling import list_pools, read_pool
            frames = []
            for p in sorted(list_pools(self.root), key=lambda p: p.name):   # recovered first
                try:
                    f = read_pool(p)                   # the one pool reader
                except (FormatError, OSError) as exc:
                    self.warnings.add(str(p), None, f"unreadable pool file ({exc})")
                    continue
                frames.append(f.assign(pool=p.stem[5:]))
            self._pools = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
                columns=["topic", "doc", "stratum", "prob", "method", "order", "pool"])
        return self._pools

    def run_topics(self, run: str) -> pd.DataFrame:
        """One run's per-topic values of every measure, with the topic median of the first measure."""
        s = self._need()
        ri = s.runs.index(run)
        df = pd.DataFrame({"topic": s.topics})
        for n in s.measures:
            df[n] = s.matrix[n][ri]
        if s.measures:
            with _quiet():
                df["median"] = np.nanmedian(s.matrix[s.measures[0]], axis=0)
            df["vs median"] = df[s.measures[0]] - df["median"]
        return df

    def docs(self) -> dict:
        if self._docs is None:
            self._docs = load_docs(self.root)
        return self._docs

    # ------------------------------------------------------------------ predicted relevance (Buettcher et al. 2007)
    def doc_store(self):
        """The engine's document store for this campaign, or None."""
        from engine.documents.store import DocStore
        return DocStore.for_campaign(self.root)

    def completion_quality(self, fractions, progress=None, seed: int = 0) -> pd.DataFrame:
        """Classifier precision / recall / F1 against the training fraction (engine.completion, Table 6)."""
        from engine.completion.experiment import classifier_quality
        from engine.completion.svm import sklearn_available
        st = self._need_docs()
        clfs = ("kld", "svm") if sklearn_available() else ("kld",)
        if progress:
            progress(0.1, "training classifiers")
        return classifier_quality(self.qrels, st, fractions, classifiers=clfs, rel_level=self.rel_level(), seed=seed)

    def completion_poolbias(self, mode: str, measures, progress=None) -> pd.DataFrame:
        """Pool-bias experiment with and without completion (engine.completion, Tables 7-8), via the
        campaign seam."""
        from engine.completion.svm import sklearn_available
        from engine.campaign.experiments import pool_bias_campaign
        modes = ["none", "kld", "svm"] if sklearn_available() else ["none", "kld"]
        summ, _ = pool_bias_campaign(self.o.engine_campaign, list(measures), mode=mode, complete=modes,
                                     progress=progress)
        return summ

    def rel_level(self) -> int:
        return int(((self.config.get("relevance") or {}).get("binary_threshold")) or 1)

    def _need_docs(self):
        from engine.errors import CranfieldError
        st = self.doc_store()
        if st is None:
            raise CranfieldError("this campaign has no document text (cranfield docs import CAMPAIGN FILE)")
        return st

    # ------------------------------------------------------------------ home
    def home_facts(self) -> dict:
        """Counts shown on the campaign home screen."""
        q = self.qrels
        judged = q[q["grade"] >= 0]
        rel_level = self.options.rel_level
        return {"name": self.name, "description": str(self.config.get("description") or ""),
                "root": str(self.root), "runs": int(len(self.run_meta)) if self.large else (int(self.runs["run"].nunique()) if len(self.runs) else 0),
                "topics": int(len(set(self.topics["topic"]) | set(q["topic"]))),
                "judged": int(len(judged)), "relevant": int((judged["grade"] >= rel_level).sum()),
                "unjudged_pooled": int((q["grade"] < 0).sum()),
                "groups": int(self.run_meta["group"].replace("", np.nan).nunique()),
                "manual": int((self.run_meta["type"] == "manual").sum()),
                "pooled": int(self.run_meta["pooled"].sum())}

    def pool_progress(self) -> pd.DataFrame:
        """Per topic: judged, pooled-but-unjudged, target (campaign target, else the pool size), share done."""
        q = self.qrels
        now = self.judging.judged()            # the judgments as they are now (the log read again)
        topics = sorted(set(self.topics["topic"]) | set(q["topic"]), key=natural_key)
        judged = now.groupby("topic").size().reindex(topics).fillna(0).astype(np.int64)
        left = q[q["grade"] < 0][["topic", "doc"]].merge(now[["topic", "doc"]], how="left", indicator=True)
        waiting = left[left["_merge"] == "left_only"].groupby("topic").size().reindex(topics).fillna(0).astype(np.int64)
        pools = self.pools()
        if len(pools):   # the active (newest) pool, the one being judged
            from engine.judging.sessions import active_pool
            name = active_pool(self.root)[0]
            pools = pools[pools["pool"] == name] if name is not None else pools
            pools = pools[pd.to_numeric(pools["order"], errors="coerce").fillna(1) > 0]
            pooled = pools.drop_duplicates(["topic", "doc"]).groupby("topic").size().reindex(topics).fillna(0)
            waiting = np.maximum(waiting, pooled.astype(np.int64) - judged)
        tg = self.o.targets()
        target = pd.Series([tg.get(t, 0) for t in topics], index=topics, dtype=np.int64)
        target = target.where(target > 0, judged + waiting)
        rel = now[now["grade"] >= self.options.rel_level].groupby("topic").size().reindex(topics).fillna(0)
        done = np.divide(judged.to_numpy(float), target.to_numpy(float), out=np.zeros(len(topics)),
                         where=target.to_numpy() > 0)
        return pd.DataFrame({"topic": topics, "judged": judged.to_numpy(), "target": target.to_numpy(),
                             "relevant": rel.astype(np.int64).to_numpy(), "done": np.minimum(done, 1.0)})

    def problems(self, limit: int = 200) -> list[str]:
        """Warnings for the home screen: file problems, runs with unjudged top-10 holes, topics with R = 0."""
        out = ["ERROR " + e for e in self.load_errors()]
        out += [str(p) for p in list(self.warnings)[:limit]]
        s = self.scores
        if s is not None:
            per_run, n_top = s.holes, s.n_top
            for i in np.argsort(-per_run, kind="stable"):
                if per_run[i] > 0:
                    out.append(f"run {s.runs[i]}: {per_run[i]} of its {n_top[i]} top-10 documents are unjudged")
            no_rel = [t for t, n in zip(s.topics, s.t_num_rel) if n == 0]
            if no_rel:
                out.append(f"{len(no_rel)} topic(s) without relevant documents: {', '.join(no_rel[:12])}"
                           + (" ..." if len(no_rel) > 12 else ""))
        return out

    def load_errors(self) -> list[str]:
        """Problems that left a run file out of this campaign (file:line: what is wrong)."""
        return list(self.o.errors)

    # ------------------------------------------------------------------ engine parts the screens use
    @staticmethod
    def engine_missing(part: str) -> str | None:
        """None when the engine part ("stability", "pooling", "planning", "judging") imports, else why not."""
        mods = {"stability": ("engine.stability", "engine.stability.gtheory"), "pooling": ("engine.pooling",),
                "planning": ("engine.planning.cost", "engine.planning.planner"),
                "judging": ("engine.judging.workflow", "engine.pooling")}   # next_documents builds pools
        if part not in mods:
            raise ValueError(f"unknown engine part {part!r}")
        try:
            for name in mods[part]:
                importlib.import_module(name)
        except ImportError as exc:
            return str(exc)
        return None

    @property
    def judging(self):
        """The judging desk (tui.judging_desk.JudgingDesk): the judge screen's engine calls."""
        desk = self.__dict__.get("_judging")
        if desk is None:
            from .judging_desk import JudgingDesk
            desk = self._judging = JudgingDesk(self)
        return desk

    @staticmethod
    def g_study(x: np.ndarray, target: float, progress=None) -> tuple:
        """G-study of a topics x runs score matrix, its D-study now and over 1..max(2n, 100) topics, and
        the topics needed for Phi and E rho^2 >= target: (g, components, d_now, d_all, need_phi, need_e)."""
        from engine.stability.gtheory import components_table, d_study, g_study, topics_needed
        if progress:
            progress(0.2, "G-study")
        g = g_study(x)
        if progress:
            progress(0.6, "D-study")
        ns = np.arange(1, max(2 * g.n_topics, 100) + 1)
        return (g, components_table(g), d_study(g), d_study(g, ns), topics_needed(g, target, "phi"),
                topics_needed(g, target, "erho2"))

    @staticmethod
    def discriminative_power(x: np.ndarray, n_bootstrap: int = 1000, progress=None):
        """Bootstrap discriminative power of a topics x runs score matrix (engine.stability.discrim)."""
        from engine.stability.discrim import discriminative_power
        return discriminative_power(x, n_bootstrap=n_bootstrap, progress=progress)

    def reduction(self, specs: list[str], method: str = "uniform", trials: int = 3, statistic: str = "tau",
                  progress=None) -> pd.DataFrame:
        """Judgment-reduction curve (summarized `statistic` per level and measure) against this model's
        judgments, through the campaign seam (streamed over the run store on a large campaign)."""
        from engine.campaign.experiments import reduction_campaign
        from engine.stability.reduction import summarize_reduction
        df = reduction_campaign(self.o.engine_campaign, self.qrels, list(specs), method=method, trials=trials,
                                rel_level=self.options.rel_level, progress=progress)
        return summarize_reduction(df, statistic)

    @staticmethod
    def pool_strategies() -> tuple:
        """Names of the static pooling strategies."""
        from engine.pooling import STATIC
        return tuple(STATIC)

    @staticmethod
    def pool_choices() -> list[str]:
        """The pooling strategies the pool builder offers (every strategy but the online ones)."""
        from engine.pooling import ONLINE, STRATEGIES
        return [s for s in STRATEGIES if s not in ONLINE]

    @staticmethod
    def parse_budget(text: str | None):
        """A per-topic pool budget from its text form (engine.pooling.parse_budget)."""
        from engine.pooling import parse_budget
        return parse_budget(text)

    def build_pool(self, strategy: str, budget, *, depth: int, seed: int, pooled: list[str] | None):
        """A pool over this campaign's runs through the campaign seam (engine.evaluation.pool_campaign)."""
        from engine.campaign.experiments import pool_campaign
        return pool_campaign(self.o.engine_campaign, strategy, budget, depth=depth, seed=seed, pooled=pooled,
                             rel_level=self.options.rel_level)

    def write_pool(self, name: str, pool) -> Path:
        """Write a built pool under pools/ and forget the cached pool table; the path written."""
        from engine.pooling import write_pool
        path = write_pool(self.root, name, pool)
        self._pools = None
        return path

    def judging_effort(self) -> tuple[int, pd.DataFrame, float, str] | None:
        """The judgments made so far: (count, effort by target, hours, cost-model source), None if none."""
        from engine.planning.cost import effort_by_target, judging_effort
        judged = self.qrels[self.qrels["grade"] >= 0]
        if len(judged) == 0:
            return None
        cm = cost_model(self.config)
        eff = judging_effort(judged, cm, self.o.categories() or None, self.o.targets() or None)
        return len(judged), effort_by_target(eff), float(eff["seconds"].sum()) / 3600, cm.source

    def plan(self, measure: str, *, trials: int, target_tau: float, target_phi: float, sample_topics: int,
             progress=None, notify=None):
        """engine.planning.planner.plan on the judged topics; on a large campaign on a seeded random sample of
        `sample_topics` judged topics read from the run store (`notify` is told so)."""
        from engine.planning.planner import plan
        q, runs = self.qrels[self.qrels["grade"] >= 0], self.runs
        if self.large:
            topics = sorted(set(q["topic"].astype(str)))
            if len(topics) > sample_topics:
                rng = np.random.default_rng(0)
                topics = sorted(rng.choice(topics, sample_topics, replace=False).tolist())
                if notify is not None:
                    notify(f"planning on a random sample of {sample_topics} of the {len(set(q['topic']))} "
                           f"judged topics (large campaign)")
            q = q[q["topic"].astype(str).isin(set(topics))]
            runs = self.store.frame(topics=topics)
        return plan(q, runs, measure=measure, trials=trials, model=cost_model(self.config), target_tau=target_tau,
                    target_phi=target_phi, progress=progress)

    def _need(self) -> Scores:
        if self.scores is None:
            raise CranfieldError("the campaign has not been evaluated yet")
        return self.scores


# ---------------------------------------------------------------------- small pure helpers

def _facts(f: pd.DataFrame, n_r: int, n_t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(judged depth per topic, unjudged top-10 documents per run, top-10 documents per run) from
    per-group facts (g_run, g_topic, num_ret, top10_unjudged, depth)."""
    depth_t = np.full(n_t, np.iinfo(np.int64).max)
    np.minimum.at(depth_t, f["g_topic"].to_numpy(np.int64), f["depth"].to_numpy(np.int64))
    depth_t[depth_t == np.iinfo(np.int64).max] = 0
    g_run = f["g_run"].to_numpy(np.int64)
    holes = np.bincount(g_run, weights=f["top10_unjudged"].to_numpy(float), minlength=n_r).astype(int)
    n_top = np.bincount(g_run, weights=np.minimum(f["num_ret"].to_numpy(), 10), minlength=n_r).astype(int)
    return depth_t, holes, n_top


_OPENED: dict = {}  # (root, fingerprint) -> (Opened, {measure specs: Scores}); newest last


def _fingerprint(root: Path) -> tuple:
    """Names, sizes and modification times of a campaign's input files (caches are hidden folders)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            st = os.stat(os.path.join(dirpath, f))
            out.append((os.path.relpath(os.path.join(dirpath, f), root), st.st_size, st.st_mtime_ns,
                        st.st_ctime_ns))            # ctime: an in-place edit that keeps the mtime
    return tuple(out)


class _quiet:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def filter_mask(df: pd.DataFrame, filt: tuple[str, str]) -> np.ndarray:
    kind, value = filt
    if kind == "pooled":
        return (df["pooled"] == (value == "yes")).to_numpy()
    if kind in ("type", "group"):
        return (df[kind].astype(str) == value).to_numpy()
    return np.ones(len(df), dtype=bool)


# ---------------------------------------------------------------------- pools and cost (engine parts)

def cost_model(config: dict):
    """The campaign's assessor-time model (engine.planning.cost defaults with campaign.yaml overrides)."""
    from engine.planning.cost import model_from_config
    return model_from_config(config.get("cost") or None)


def pool_preview(model: "CampaignModel", table: pd.DataFrame) -> pd.DataFrame:
    """Per topic of a built pool: frame size, documents to judge, already judged, new, expected hours."""
    cm = cost_model(model.config)
    cats = model.o.categories()
    from engine.pooling import judged_in_pool
    sel = table[table["order"] > 0]
    sel = sel.assign(known=judged_in_pool(table, model.qrels).to_numpy())
    topics = sorted(table["topic"].astype(str).unique(), key=natural_key)
    frame = table.groupby("topic").size().reindex(topics).fillna(0).astype(np.int64)
    g = sel.groupby("topic")
    n_sel = g.size().reindex(topics).fillna(0).astype(np.int64)
    n_known = g["known"].sum().reindex(topics).fillna(0).astype(np.int64)
    new = n_sel - n_known
    hours = []
    for t, n, k in zip(topics, n_sel.to_numpy(), new.to_numpy()):
        c = cats.get(t)
        if c is not None and c not in cm.categories:
            c = None
        hours.append(cm.query_seconds(max(int(n), 1), c, judged=int(k)) / 3600.0 if k > 0 else 0.0)
    return pd.DataFrame({"topic": topics, "frame": frame.to_numpy(), "to_judge": n_sel.to_numpy(),
                         "judged": n_known.to_numpy(), "new": new.to_numpy(), "hours": np.asarray(hours)})
