"""The matrix, topic and ranked-list screens' view model: per-topic rows and ranked lists with each document's
grade, pool source and contribution (the measure's own `contributions`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.errors import CranfieldError
from engine.evaluation.evaluate import compute

from .scores import quiet


class TopicsView:
    """The matrix (m), topic and ranked-list screens' tables."""

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
        with np.errstate(invalid="ignore"), quiet():
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
    def ranked_list(self, run: str, topic: str, measure: str | None = None, limit: int | None = 100,
                    among: tuple[str, ...] | None = None) -> pd.DataFrame:
        """One run's ranked list for a topic: rank, doc, grade (or -1 not pooled, -2 pooled unjudged),
        pool method/stratum, and each document's contribution to `measure` when the measure explains
        its score (the contributions sum to the value). `among`: runs shown beside it, read together
        (one read of the run store for a screen of lists)."""
        cols = ["rank", "doc", "grade", "source", "contribution"]
        s = self._need()
        if run not in s.runs or topic not in s.topics or s.group_of[s.runs.index(run), s.topics.index(topic)] < 0:
            return pd.DataFrame({c: [] for c in cols})
        runs = among if among is not None and run in among else (run,)
        r = self.topic_ranked(topic, runs)               # these runs' lists only (runs are evaluated alone)
        groups = np.flatnonzero(np.asarray(r.run_names)[r.g_run] == run)
        if not len(groups):
            return pd.DataFrame({c: [] for c in cols})
        g = int(groups[0])
        a, b = r.offsets[g], r.offsets[g + 1]
        df = pd.DataFrame({"rank": r.rank[a:b], "doc": np.asarray(r.doc[a:b], dtype=object), "grade": r.rel[a:b]})
        ex = self.contributions(topic, measure, runs) if measure is not None else None
        df["contribution"] = ex[0][a:b] if ex is not None else np.nan
        src = self.pool_sources(topic)
        df["source"] = df["doc"].map(src).fillna("") if len(src) else ""
        return df.iloc[:limit][cols]

    def topic_ranked(self, topic: str, runs: tuple[str, ...] | None = None):
        """The engine's ranked lists of one topic (as evaluated: the campaign's options, gains and run
        names) of `runs`, every run when None; the last few are kept. Each run's lists are evaluated on
        their own (as trec_eval does), so a run's list is the same whichever runs are asked with it; a
        drill-down into a few runs reads only theirs (at 1,000 runs, not the whole topic)."""
        key = (topic, runs)
        if key not in self._topic_ranked:
            j = self.judgments()
            q = j[j["topic"].astype(str) == topic].reset_index(drop=True)
            if self._combined is not None:
                q = q[["topic", "doc", "grade"]]
            if runs is None:
                rows = self.topic_runs(topic)
            else:
                rows = self.run_rows(list(runs), topics=[topic])
            if not self.large:
                rows = rows[(rows["topic"] == topic).to_numpy()]
            order = list(self.scores.runs) if self.scores is not None else None
            if order is not None and runs is not None:
                order = [r for r in order if r in set(runs)]
            gains = self.gains()
            out = compute(q, rows, ["num_ret"], self.options, run_order=order,
                          extra={"gains": gains} if gains else None)
            while len(self._topic_ranked) >= 16:         # bounded memory (a few topics, a screen of runs)
                self._topic_ranked.pop(next(iter(self._topic_ranked)))
            self._topic_ranked[key] = out.ranked
        return self._topic_ranked[key]


    def contributions(self, topic: str, measure: str, runs: tuple[str, ...] | None = None
                      ) -> tuple[np.ndarray, np.ndarray] | None:
        """(per row of `topic_ranked(topic, runs)`: the document's contribution to `measure`, per group: the
        value they sum to), from the measure's own `contributions`; None when the measure cannot
        explain its score."""
        from engine.measures.registry import explain, request_for_output
        try:
            req = request_for_output(measure)
        except CranfieldError:
            return None
        r = self.topic_ranked(topic, runs)
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

