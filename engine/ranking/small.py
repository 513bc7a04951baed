"""The small-call path beside the ranked-list kernel: one run given as {topic: {doc: score}}, a few hundred
rows, evaluated topic by topic in plain Python, where the kernel's ~150 numpy calls cost more than the work.

It covers trec_eval's map, P, recall, recip_rank and ndcg_cut under the default options (any relevance
level; no -M, -J, -c, no gains) and gives the kernel's values bit for bit: the same order (score descending,
ties by document id descending in code-point = UTF-8 byte order), the same operations in the same order
(sequential sums in rank order, as `Ranked.seg_sum` / `seg_cumsum_float`; C's log2 as `gains.log2_table`;
the ideal DCG of the judged grades sorted down). Anything else (other measures or options, an empty ranking,
a topic without judgments, a score that is not a finite number, a document id that is not a string) gives
None and the caller takes the kernel. `tests/test_small_path.py` holds both to the same values on
trec_eval's reference inputs and on generated runs.
"""
from __future__ import annotations

import math
from functools import reduce
from itertools import accumulate, compress, count, repeat
from operator import add, itemgetter, truediv

SMALL_ROWS = 4096
"""Rows of a run up to which `Evaluator` takes this path (beyond, the kernel's arrays pay off)."""

# measure family -> the kernel function whose values this path reproduces (module, function name)
FAMILIES = {"map": ("engine.measures.m_map", "map_"), "P": ("engine.measures.m_P", "P"),
            "recall": ("engine.measures.m_recall", "recall"),
            "recip_rank": ("engine.measures.m_recip_rank", "recip_rank"),
            "ndcg_cut": ("engine.measures.m_ndcg_cut", "ndcg_cut")}

_second = itemgetter(1)
_FLOAT, _NUMBERS = {float}, {float, int}


def covers(request) -> bool:
    """Whether this path computes `request` (an `engine.measures.names` MeasureRequest) as the kernel does."""
    m = request.measure
    want = FAMILIES.get(m.name)
    fn = m.compute
    return want is not None and (getattr(fn, "__module__", None), getattr(fn, "__name__", None)) == want


class SmallPlan:
    """What to compute for one Evaluator: per group (relevance level, [(family, cut-off, keys)]), the
    judgments per topic (doc -> grade, negative: judged unjudged), and per-topic facts made on first use."""

    def __init__(self, grades: list[dict], groups: list[tuple[int, list]]):
        self.grades = grades
        self.groups = groups
        self.cut = max([k for _, outs in groups for fam, k, _ in outs if fam == "ndcg_cut"] + [1])
        self._num_rel: dict = {}
        self._ideal: list | None = None
        self.keys = [key for _, outs in groups for _, _, keys in outs for key in keys]

    def num_rel(self, level: int) -> list[int]:
        """Per topic: judged documents with a grade >= level (as `Ranked.t_num_rel`)."""
        got = self._num_rel.get(level)
        if got is None:
            lv = max(level, 0)
            got = self._num_rel[level] = [sum(g >= lv for g in d.values()) for d in self.grades]
        return got

    def ideal(self) -> list[list[float]]:
        """Per topic: the cumulative DCG of its positive grades sorted down (as ndcg_cut's ideal lists)."""
        if self._ideal is None:
            from .gains import log2_table
            out = []
            for d in self.grades:
                pos = sorted((g for g in d.values() if g > 0), reverse=True)
                lg = log2_table(len(pos) + 1).tolist()
                out.append(list(accumulate(g / lg[i + 2] for i, g in enumerate(pos))))
            self._ideal = out
        return self._ideal


def plan(grades: list[dict], groups) -> SmallPlan | None:
    """A `SmallPlan` for an Evaluator's groups (`api._Group`: options, gains, requests, names), or None when
    a group needs the kernel."""
    from .ranked import EvalOptions

    out = []
    for grp in groups:
        opt = grp.options
        if grp.gains is not None or opt != EvalOptions(rel_level=opt.rel_level,
                                                       trec_eval_version=opt.trec_eval_version):
            return None
        outs = []
        seen = set()                         # a name asked twice: its first place (as `measure_values`)
        for req in grp.requests:
            if not covers(req):
                return None
            params = req.params if req.measure.name in ("P", "recall", "ndcg_cut") else (0,)
            if len(params) != len(req.names):
                return None
            for k, name in zip(params, req.names):
                if name in seen:
                    continue
                seen.add(name)
                if not isinstance(k, int) or (req.measure.name != "map" and req.measure.name != "recip_rank"
                                              and k < 1):
                    return None
                outs.append((req.measure.name, k, list(grp.names.get(name, ()))))
        out.append((opt.rel_level, outs))
    return SmallPlan(grades, out) if out else None


def evaluate_small(p: SmallPlan, tindex: dict, topic_names: list[str], run: dict) -> dict | None:
    """{topic: {key: value}} for one run, topics in the judgments' order and keys in the plan's, or None
    when the run needs the kernel (see the module docstring)."""
    from .gains import log2_table

    present = []
    rows = 0
    for qid, ranking in run.items():
        ti = tindex.get(qid if type(qid) is str else str(qid))
        if ti is None or not ranking:
            return None
        rows += len(ranking)
        present.append((ti, ranking))
    if rows > SMALL_ROWS:
        return None
    present.sort(key=itemgetter(0))
    lg = log2_table(p.cut + 1).tolist()
    ideal = p.ideal() if any(f == "ndcg_cut" for _, outs in p.groups for f, _, _ in outs) else None
    keys = p.keys
    result = {}
    for ti, ranking in present:
        scores = list(ranking.values())
        kinds = set(map(type, scores))
        if kinds != _FLOAT:
            if not kinds <= _NUMBERS:
                return None                  # text, numpy or other scores: the kernel's reading and errors
            try:
                scores = list(map(float, scores))
            except OverflowError:
                return None
        try:
            if not math.isfinite(math.fsum(scores)):
                return None                  # a NaN or infinite score: the kernel words the error
        except OverflowError:
            return None
        docs = list(ranking)
        if set(map(type, docs)) != {str}:
            return None
        n = len(docs)
        if len(set(scores)) == n:            # no tied scores: one sort by score alone
            docs = list(map(docs.__getitem__, sorted(range(n), key=scores.__getitem__, reverse=True)))
        else:                                # ties by document id descending
            docs = list(map(_second, sorted(zip(scores, docs), reverse=True)))
        grades = list(map(p.grades[ti].get, docs, repeat(-1)))
        vals = []
        for level, outs in p.groups:
            is_rel = list(map(level.__le__, grades))
            cum = list(accumulate(is_rel))
            nrel = p.num_rel(level)[ti]
            dcg = None
            for fam, k, ks in outs:
                if fam == "P":
                    v = cum[min(k, n) - 1] / k
                elif fam == "recall":
                    v = cum[min(k, n) - 1] / nrel if nrel > 0 else 0.0
                elif fam == "map":
                    # precision at each relevant rank, summed in rank order (as `Ranked.rel_precision_sum`)
                    v = reduce(add, map(truediv, compress(cum, is_rel), compress(count(1), is_rel))) / nrel \
                        if cum[-1] else 0.0
                elif fam == "recip_rank":
                    v = 1.0 / (is_rel.index(True) + 1) if cum[-1] else 0.0
                else:                            # ndcg_cut
                    if dcg is None:
                        dcg = list(accumulate((g if g > 0 else 0) / lg[i + 2]
                                              for i, g in enumerate(grades[:p.cut])))
                    v = dcg[min(k, n) - 1]
                    ic = ideal[ti]
                    if ic:
                        v = v / ic[min(k, len(ic)) - 1]
                vals += repeat(v, len(ks))
        result[topic_names[ti]] = dict(zip(keys, vals))
    return result
