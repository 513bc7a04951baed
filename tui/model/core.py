"""The campaign model every screen's view model builds on (no Textual imports): the campaign as the engine
reads it, its evaluation arranged as matrices (`Scores`), the judgments in use, run rows, pools, documents.

Scores come from `engine.evaluation.evaluate_campaign` (summaries from `engine.summarize`); statistics are the
engine's (engine.stability.significance); the view models (tui.model.leaderboard, topics, pools, ...) arrange
them for one screen or screen family each.
"""
from __future__ import annotations

import copy
import importlib
import os
import stat
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from engine.errors import CranfieldError, Warnings
from engine.evaluation.evaluate import summarize
from engine.ranking.join import rename_runs
from engine.ranking.ranked import EvalOptions

from ..source import Opened, load_docs, open_campaign
from .scores import DEFAULT_MEASURES, Scores, output_names, quiet


class ModelCore:
    """A loaded campaign plus its evaluation: the part every screen's view model builds on. Settings come
    from the engine's `Campaign` accessors (binary threshold, depth, measures, gains, categories, targets)."""

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
        c = self._engine_campaign()
        self.options: EvalOptions = c.eval_options()     # binary_threshold -> rel_level, depth -> max_depth
        self.default_measures = c.measures() or list(DEFAULT_MEASURES)
        self.scores: Scores | None = None
        self.judgment_spec: str | None = None   # None: the campaign's judgments (as `cranfield eval`)
        self._combined: pd.DataFrame | None = None
        self._docs: dict | None = None
        self._pools: pd.DataFrame | None = None

    def fork(self):
        """A copy to evaluate off the UI thread: it shares the read campaign and caches, but its scores,
        judgment choice and derived tables are its own, so this model stays as it is until the copy is
        committed in its place."""
        new = copy.copy(self)
        new._topic_ranked = {}
        for k in ("_board_cache", "_judging"):
            new.__dict__.pop(k, None)
        return new

    @classmethod
    def load(cls, root: Path):
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

    def evaluate(self, specs: list[str], progress: Callable[[int, int], None] | None = None) -> Scores:
        """Evaluate `specs` on all runs and topics through the engine's campaign API
        (`engine.evaluation.evaluate_campaign`: in memory, or streamed over the run store by topic blocks
        for a large campaign; the campaign's gains and run renames applied), arranged as matrices.
        `progress(done, total)` as blocks of runs finish."""
        if not self.large and len(self.runs) == 0:
            raise CranfieldError(f"{self.root}/runs: the campaign has no runs")
        cache, names = self._start(specs)
        if names is None:
            return self.scores
        c = self._engine_campaign()
        q = self.judgments()
        df, facts, computed = self._evaluation(c, specs, q, progress)
        if computed is not None:
            r = computed.ranked
            run_names, topic_names = list(r.run_names), list(r.topic_names)
            t_num_rel = np.asarray(r.t_num_rel)
        else:
            r = None
            rename = self.run_renames()            # read here, off the UI thread, for the drill-downs too
            run_names = [rename.get(x, x) for x in self.store.runs]
            topic_names = sorted(set(q["topic"].astype(str)), key=lambda t: t.encode("utf-8"))
            t_num_rel = (q[q["grade"] >= self.options.rel_level].groupby(q["topic"].astype(str)).size()
                         .reindex(topic_names).fillna(0).to_numpy(np.int64))
        n_r, n_t = len(run_names), len(topic_names)
        ri = {x: i for i, x in enumerate(run_names)}
        ti = {t: i for i, t in enumerate(topic_names)}
        means = summarize(df) if len(df) else pd.DataFrame()
        matrix = {}
        i_all, j_all = _positions(df["run"], ri), _positions(df["topic"], ti)    # each distinct name looked up once
        m_all = _positions(df["measure"], {n: k for k, n in enumerate(names)})
        values = df["value"].to_numpy()
        for k, n in enumerate(names):
            m = np.full((n_r, n_t), np.nan)
            at = np.flatnonzero(m_all == k)
            i, j = i_all[at], j_all[at]
            ok = (i >= 0) & (j >= 0)
            m[i[ok], j[ok]] = values[at[ok]]
            matrix[n] = m
        g_run, g_topic = _positions(facts["run"], ri), _positions(facts["topic"], ti)
        if len(facts) and min(g_run.min(), g_topic.min()) < 0:
            raise CranfieldError(f"{self.root}: the evaluation's facts name a run or topic it did not score")
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
        with np.errstate(invalid="ignore"), quiet():
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

    def _evaluation(self, c, specs: list[str], q: pd.DataFrame,
                    progress: Callable[[int, int], None] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, object]:
        """(long table, per (run, topic) facts, the in-memory Computed or None) of `specs`. No ranked lists
        (drill-downs compute one topic's): a store of PARALLEL_ROWS rows or more, large too, is evaluated
        by blocks of whole runs in threads (the same table, far sooner than by processes). Such a streamed
        evaluation under the campaign's judgments is kept in the campaign's evaluation cache
        (engine.evaluation.cache: keyed by the input files, measures, options and engine code), so the
        next open of the unchanged campaign reads it instead of evaluating again."""
        from engine.evaluation import cache
        from engine.evaluation.seam import PARALLEL_ROWS, evaluate_campaign
        key = None
        if self._combined is None and self.store is not None and (self.large or self.store.rows >= PARALLEL_ROWS):
            key = cache.cache_key([*c.input_files(), *c.topic_files()], list(specs), self.options,
                                  extra={"gains": sorted(c.gains().items()), "tables": "tui table+facts"})
            hit = cache.read_tables(self.root, key, ("table", "facts"), "tui")
            if hit is not None:
                return hit["table"], hit["facts"], None
        ev = evaluate_campaign(c, specs, options=self.options, extras=True, ranked=False, by_runs=True,
                               qrels=None if self._combined is None else q[["topic", "doc", "grade"]],
                               progress=progress)
        if key is not None and ev.computed is None:
            cache.write_tables(self.root, key, {"table": ev.table, "facts": ev.facts}, "tui")
        return ev.table, ev.facts, ev.computed

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
        rename = self.run_renames()
        back = {v: k for k, v in rename.items()}
        df = self.store.frame(runs=None if tags is None else [back.get(t, t) for t in tags], topics=topics,
                              max_pos=max_pos)
        rename_runs(df, rename)
        return df


    def run_renames(self) -> dict[str, str]:
        """File tag -> campaign run name (the engine campaign's `run_renames`), read once per opened
        campaign as its run store was: each engine call lists runs/ again (1,000 files at 1,000 runs), and a
        drill-down reads rows several times."""
        hit = self.__dict__.get("_renames")
        if hit is None:
            c = self.o.engine_campaign
            hit = self._renames = dict(c.run_renames()) if c is not None else {}
        return hit

    def topic_runs(self, topic: str) -> pd.DataFrame:
        """Every run's results for one topic (read from the run store for a large campaign)."""
        if not self.large:
            return self.runs
        return self.run_rows(None, topics=[topic])


    def gains(self) -> dict:
        """The campaign's gain per grade (campaign.yaml relevance.scale)."""
        return self._engine_campaign().gains()


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


    def docs(self) -> dict:
        if self._docs is None:
            self._docs = load_docs(self.root)
        return self._docs


    def doc_store(self):
        """The engine's document store for this campaign, or None."""
        from engine.documents.store import DocStore
        return DocStore.for_campaign(self.root)


    def rel_level(self) -> int:
        """The campaign's binary relevance threshold (relevance.binary_threshold; 0 counts every judged
        document relevant)."""
        return self.options.rel_level

    def _need_docs(self):
        from engine.errors import CranfieldError
        st = self.doc_store()
        if st is None:
            raise CranfieldError("this campaign has no document text (cranfield docs import CAMPAIGN FILE)")
        return st


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
            from ..judging_desk import JudgingDesk
            desk = self._judging = JudgingDesk(self)
        return desk


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


def _positions(col: pd.Series, index: dict) -> np.ndarray:
    """Per row of `col`: the position `index` gives its name (as text), -1 when none (or missing)."""
    codes, names = pd.factorize(col, sort=False)
    lut = np.asarray([index.get(str(x), -1) for x in names] + [-1], np.int64)
    return lut[codes]                                        # (code -1, a missing value: the trailing -1)


_OPENED: dict = {}  # (root, fingerprint) -> (Opened, {measure specs: Scores}); newest last


def _fingerprint(root: Path) -> tuple:
    """Names, sizes and modification times of a campaign's input files (caches are hidden folders)."""
    from engine.util import fs
    out = []

    def walk(folder: Path) -> None:
        for p in fs.glob(folder):
            st = fs.stat(p, follow=False)           # links are not followed (their target is read where used)
            if stat.S_ISDIR(st.st_mode):
                if not p.name.startswith("."):
                    walk(p)
            else:
                out.append((os.path.relpath(p, root), st.st_size, st.st_mtime_ns,
                            st.st_ctime_ns))        # ctime: an in-place edit that keeps the mtime
    walk(Path(root))
    return tuple(out)


