"""The pytrec_eval-compatible mode: `RelevanceEvaluator(qrel, measures, relevance_level=1,
judged_docs_only_flag=False)` answers as pytrec_eval (trec_eval 9.x) does, computed by Cranfield's
`Evaluator`. Beside the Cranfield mode (`cranfield.Evaluator`: keys as asked, `P.5` -> `P.5`, trec_eval
10.0's recall cut-offs, per-topic values as trec_eval prints them), this mode gives:

- keys as trec_eval's output names (`P.5` -> `P_5`, `ndcg_cut.1,4` -> `ndcg_cut_1`, `ndcg_cut_4`);
- measures merged as pytrec_eval merges them: a family asked bare and with cut-offs (`ndcg_cut`,
  `ndcg_cut.1,4`, `ndcg_cut_20`) is computed at the union of the cut-offs given, not the defaults;
- nicknames (`official`, `set`, `all_trec`) expanded to trec_eval 9.x's sets;
- per-topic `gm_map` / `gm_bpref` as pytrec_eval gives them: log(max(value, 1e-5)), so
  `compute_aggregated_measure` (exp of the mean) gives trec_eval's summary; `runid` / `relstring` as 0.0;
- topics of the run that have judgments (a topic given with an empty ranking included); an empty run or
  empty judgments give {}; an empty measure set gives one empty dict per such topic.

>>> ev = RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, {"P.1", "gm_map"})
>>> r = ev.evaluate({"q1": {"d1": 0.5, "d2": 0.9}})
>>> r["q1"]["P_1"], round(r["q1"]["gm_map"], 4), round(compute_aggregated_measure("gm_map", [r["q1"]["gm_map"]]), 4)
(0.0, -0.6931, 0.5)
"""
from __future__ import annotations

import math
import re

from .dialects import NICKNAMES, SUPPORTED_MEASURES  # trec_eval 9.x's sets

_PARAMS = re.compile(r"[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)$")
_BY_LENGTH = sorted(SUPPORTED_MEASURES, key=len, reverse=True)


def merge_measures(measures) -> list[str]:
    """Cranfield specs for a pytrec_eval measure set: nicknames expanded, each family's cut-offs merged
    (the union of those given; the defaults only when none is)."""
    from ..errors import CranfieldError

    if isinstance(measures, str):
        measures = [measures]
    names: set = set()
    for m in measures:
        names |= NICKNAMES.get(m, {m})
    params: dict = {}
    for m in sorted(names):
        if m in SUPPORTED_MEASURES:
            params.setdefault(m, set())
            continue
        base = next((b for b in _BY_LENGTH if m.startswith(b) and _PARAMS.fullmatch(m[len(b):])), None)
        if base is None:
            raise CranfieldError(f"unsupported measure {m!r} (pytrec_eval's measures: "
                                 f"{', '.join(sorted(SUPPORTED_MEASURES))}; nicknames: {', '.join(NICKNAMES)})")
        params.setdefault(base, set()).update(_PARAMS.fullmatch(m[len(base):]).group(1).split(","))
    return [f"{b}.{','.join(sorted(p, key=float))}" if p else b for b, p in sorted(params.items())]


class RelevanceEvaluator:
    """pytrec_eval's `RelevanceEvaluator`, computed by Cranfield (see the module docstring).
    `trec_eval_version` defaults to "9", the trec_eval pytrec_eval embeds."""

    def __init__(self, query_relevance, measures, relevance_level: int = 1, judged_docs_only_flag: bool = False,
                 *, trec_eval_version: str = "9", issues=None):
        from .api import Evaluator

        self.specs = merge_measures(measures)
        self._qrels = query_relevance
        self._ev = None
        if self.specs and query_relevance:
            self._ev = Evaluator(query_relevance, self.specs, rel_level=relevance_level,
                                 judged_only=judged_docs_only_flag, trec_eval_version=trec_eval_version,
                                 issues=issues, trec_labels=True)
            self._logs = [n for n in self._ev.measure_names if n.startswith("gm_")]
            self._zero = [n for n in self._ev.measure_names if n in ("runid", "relstring")]

    def evaluate(self, scores) -> dict:
        """{topic: {trec_eval output name: value}} for one run {topic: {doc: score}}."""
        if not scores or not self._qrels:
            return {}
        if self._ev is None:
            judged = {str(t) for t in self._qrels}
            return {str(t): {} for t in scores if str(t) in judged}
        out = self._ev.evaluate(scores)
        if self._logs or self._zero:
            from ..measures.registry import MIN_GEO_MEAN
            for values in out.values():
                for n in self._logs:
                    values[n] = math.log(max(values[n], MIN_GEO_MEAN))
                for n in self._zero:
                    values[n] = 0.0
        return out


def compute_aggregated_measure(measure: str, values) -> float:
    """pytrec_eval's summary of per-topic values: the sum for `num_*`, exp of the mean for `gm_*` (values
    are logs), else the mean."""
    import numpy as np

    v = np.asarray(list(values), np.float64)
    if measure.startswith("num_"):
        return float(v.sum())
    if measure.startswith("gm_"):
        return float(np.exp(v.sum() / len(v)))
    return float(v.mean())
