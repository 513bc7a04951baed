"""Cranfield as an ir_measures provider: `register_ir_measures()` puts it first in ir_measures' default
pipeline, so `ir_measures.evaluator(...)`, `iter_calc`, `calc_aggregate` (and PyTerrier's `pt.Experiment`)
compute with Cranfield's `Evaluator`. Every name Cranfield's request parser accepts is supported, plus
measures no other provider has: `xinfAP`, `statAP`, `RankEff`, `GAP` and `Cranfield(spec='...')` for any
Cranfield measure spec (`bpref_10`, `map@cond`, ...). ir_measures is imported only here."""
from __future__ import annotations

_STATE: dict = {}


def _measure_classes():
    """ir_measures Measure classes for the Cranfield measures ir_measures has no name for (made once)."""
    if "classes" in _STATE:
        return _STATE["classes"]
    from ir_measures import measures as M

    def make(name: str, doc: str, params: dict):
        cls = type(f"_{name}", (M.Measure,), {"__name__": name, "NAME": name, "__doc__": doc,
                                             "PRETTY_NAME": name, "SHORT_DESC": doc, "SUPPORTED_PARAMS": params})
        return cls()

    out = {
        "xinfAP": make("xinfAP", "Extended inferred AP (stratified sampling estimate; Cranfield)", {}),
        "statAP": make("statAP", "Statistical AP from sampled judgments with inclusion probabilities (Cranfield)", {}),
        "RankEff": make("RankEff", "Rank effectiveness (Ahlgren and Gronqvist; Cranfield)", {}),
        "GAP": make("GAP", "Graded average precision (Robertson et al.; Cranfield)", {}),
        "Cranfield": make("Cranfield", "Any Cranfield measure spec, e.g. Cranfield(spec='map@cond')",
                          {"spec": M.ParamInfo(dtype=str, required=True, desc="a Cranfield measure spec")}),
    }
    for m in out.values():
        if m.NAME not in M.registry:
            M.register(m)
    _STATE["classes"] = out
    return out


def cranfield_name(measure) -> str:
    """The name Cranfield's request parser reads for an ir_measures Measure (`dialects.object_name`)."""
    from .dialects import object_name
    return object_name(measure)


def _provider_class():
    if "provider_class" in _STATE:
        return _STATE["provider_class"]
    import ir_measures
    from ir_measures import Metric, providers

    class CranfieldEvaluator(providers.Evaluator):
        """An ir_measures Evaluator over Cranfield's `Evaluator` (judgments prepared once)."""

        def __init__(self, measures, qrels):
            from .api import Evaluator
            from ..measures.names import DIVERSITY
            measures = list(measures)
            conv = ir_measures.util.QrelsConverter(qrels)
            if any(m.NAME in DIVERSITY for m in measures):     # subtopics ride in ir_measures' iteration
                qrels = conv.as_pd_dataframe()
                topics = set(qrels["query_id"].astype(str))
            else:
                qrels = conv.as_dict_of_dict()
                topics = set(qrels)
            super().__init__(measures, topics)
            self.by_name = {cranfield_name(m): m for m in measures}
            self.evaluator = Evaluator(qrels, list(self.by_name), complete=False)
            # measures undefined on some topics (Accuracy: no relevant document retrieved) are undefined on
            # a topic the run leaves out too: no value there, as ir_measures' own provider
            undefined = {u for g in self.evaluator.groups if not isinstance(g.gains, tuple) or g.gains[:1] != ("ndeval",)
                         for req in g.requests if req.measure.aggregate == "validmean"
                         for n in req.names for u in g.names.get(n, ())}
            self.no_fill = {self.by_name[u] for u in undefined if u in self.by_name}

        def iter_calc(self, run):
            """Per-topic values; a judged topic the run leaves out scores the measure's DEFAULT (as
            ir_measures' providers), except for a measure that can be undefined (Accuracy), which has no
            value there; a value Cranfield leaves undefined (NaN: Accuracy without a relevant document
            retrieved) is left out, as ir_measures' own provider leaves it out."""
            import math
            expected = {(m, q) for m in self.measures if m not in self.no_fill for q in self.qrel_qids}
            run = ir_measures.util.RunConverter(run).as_dict_of_dict()
            for topic, values in self.evaluator.evaluate(run).items():
                for name, value in values.items():
                    m = self.by_name[name]
                    expected.discard((m, topic))
                    if not (isinstance(value, float) and math.isnan(value)):
                        yield Metric(query_id=topic, measure=m, value=value)
            for m, q in sorted(expected, key=lambda x: (str(x[0]), x[1])):
                yield Metric(query_id=q, measure=m, value=m.DEFAULT)

    class CranfieldProvider(providers.Provider):
        """Cranfield: trec_eval-exact measures, ir_measures' names (see `engine.measures.names`)."""

        NAME = "cranfield"
        SUPPORTED_MEASURES = []

        def supports(self, measure) -> bool:
            from ..errors import CranfieldError
            from ..measures.names import translate
            try:
                measure.validate_params()
                translate(cranfield_name(measure))
            except (CranfieldError, AssertionError, ValueError):
                return False
            return True

        def _evaluator(self, measures, qrels):
            return CranfieldEvaluator(measures, qrels)

    _STATE["provider_class"] = CranfieldProvider
    return CranfieldProvider


def register_ir_measures():
    """Register Cranfield as an ir_measures provider ("cranfield") and put it first in ir_measures' default
    pipeline; returns the provider. Idempotent; `unregister_ir_measures()` undoes it."""
    try:
        import ir_measures
    except ImportError:
        from ..errors import CranfieldError
        raise CranfieldError("ir_measures is not installed (pip install ir_measures)") from None
    _measure_classes()
    p = _STATE.get("provider")
    if p is None:
        p = _STATE["provider"] = _provider_class()()
    ir_measures.providers.register(p)
    pipeline = ir_measures.DefaultPipeline.providers
    if p not in pipeline:
        pipeline.insert(0, p)
    return p


def unregister_ir_measures() -> None:
    """Remove the Cranfield provider from ir_measures (registry and default pipeline)."""
    p = _STATE.get("provider")
    if p is None:
        return
    import ir_measures
    if ir_measures.providers.registry.get("cranfield") is p:
        del ir_measures.providers.registry["cranfield"]
    pipeline = ir_measures.DefaultPipeline.providers
    while p in pipeline:
        pipeline.remove(p)
