"""Measures with named parameters: `name.key=value,key=value` (e.g. `ndcgx.disc=log,b=2,gains=0:1:3`).

Values are strings, checked against the measure's specs (engine.measures.specs); list values use ':' between
items (gains=0:1:3 is the gain of grades 0, 1, 2).
The output is named `name` without parameters and `name_<parameter text>` with them, as trec_eval
names parameterised measures (ndcg_p.1=3,2=9 -> ndcg_p_1=3,2=9).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .registry import Measure, MeasureError, register


@dataclass
class KVMeasure(Measure):
    """A measure whose parameters are named key=value pairs, each checked against its spec (`param_specs`)."""

    def parse_params(self, text: str | None) -> tuple:
        if text is None:
            return self.params if self.params is not None else ()
        keys = ", ".join(s.name for s in self.param_specs)
        out = []
        seen = set()
        for part in text.split(","):
            k, sep, v = part.partition("=")
            k = k.strip()
            if not sep or not k or v == "":
                raise MeasureError(f"{self.name}: malformed parameter {part!r} in {text!r} "
                                   f"(use key=value,...; keys: {keys})")
            spec = next((s for s in self.param_specs if s.name == k), None)
            if spec is None:
                raise MeasureError(f"{self.name}: unknown parameter {k!r} (known: {keys})")
            if k in seen:
                raise MeasureError(f"{self.name}: parameter {k!r} given twice in {text!r}")
            seen.add(k)
            out.append((k, spec.check(self.name, v.strip())))     # checked here, where the request is parsed
        return tuple(out)

    def output_names(self, params: tuple, param_text: str | None) -> list[str]:
        return [self.name] if param_text is None else [f"{self.name}_{param_text}"]


def kv_measure(name: str, specs: tuple, **kw):
    """Decorator registering a KVMeasure (extension measure, not part of trec_eval) with its parameters'
    specs (specs.Param)."""
    def deco(fn):
        kw.setdefault("doc", (fn.__doc__ or "").strip())
        if "nicknames" in kw:
            kw["nicknames"] = frozenset(kw["nicknames"])
        kw.setdefault("extension", True)
        register(KVMeasure(name=name, compute=fn, param_specs=tuple(specs), **kw))
        return fn
    return deco


def as_dict(params: tuple) -> dict:
    """Parameter pairs as a dict (empty for no parameters)."""
    return {k: v for k, v in params} if params else {}


def get_float(name: str, d: dict, key: str, default: float | None, minimum: float | None = None
              ) -> float | None:
    """A finite float parameter (at least `minimum` when given), else MeasureError naming it."""
    if key not in d:
        return default
    try:
        v = float(d[key])
    except ValueError:
        raise MeasureError(f"{name}: parameter {key}={d[key]!r} is not a number") from None
    if not np.isfinite(v):
        raise MeasureError(f"{name}: parameter {key}={d[key]!r} is not a finite number")
    if minimum is not None and v < minimum:
        raise MeasureError(f"{name}: parameter {key} must be at least {minimum:g} (got {d[key]})")
    return v


def get_int(name: str, d: dict, key: str, default: int | None) -> int | None:
    if key not in d:
        return default
    try:
        v = int(d[key])
    except ValueError:
        raise MeasureError(f"{name}: parameter {key}={d[key]!r} is not an integer") from None
    if v <= 0 or v > 2**31 - 1:
        raise MeasureError(f"{name}: parameter {key} must be from 1 to {2**31 - 1} (got {v})")
    return v


def get_list(name: str, d: dict, key: str) -> np.ndarray | None:
    if key not in d:
        return None
    try:
        vals = np.array([float(x) for x in d[key].split(":")], dtype=np.float64)
    except ValueError:
        raise MeasureError(f"{name}: parameter {key}={d[key]!r} must be numbers separated by ':'") from None
    return vals
