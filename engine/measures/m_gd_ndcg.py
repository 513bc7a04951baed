"""gd_ndcg@k: gdeval's nDCG@k (TREC Web 2010-2014: gain 2^g - 1, ideal from the judged grades)."""
from dataclasses import dataclass

from .registry import VARIANT_HOOKS, Measure, position, register


@dataclass
class AtMeasure(Measure):
    """A measure whose single cut-off is written name@k (gdeval's style)."""

    base: str = ""

    def output_names(self, params, param_text):
        return [self.name]


def _ndcg(k):
    def compute(r, params=()):
        from .gdeval import gd_values
        return gd_values(r, k)[0]
    return compute


def _err(k):
    def compute(r, params=()):
        from .gdeval import gd_values
        return gd_values(r, k)[1]
    return compute


def gd_hook(name: str):
    """gd_ndcg@K and gd_err@K for any cut-off K."""
    base, at, k = name.partition("@")
    if not at or base not in ("gd_ndcg", "gd_err") or not (k.isascii() and k.isdigit()) or int(k) < 1:
        return None
    kk = int(k)
    fn = _ndcg(kk) if base == "gd_ndcg" else _err(kk)
    doc = ("gdeval nDCG@k: DCG with gain 2^g - 1 and 1/log2(r+1) over the ideal DCG" if base == "gd_ndcg" else
           "gdeval ERR@k: sum (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1)/16")
    return AtMeasure(name=name, compute=fn, doc=doc, order=position(name), extension=True, complete_fill=0.0,
                     base=base)


VARIANT_HOOKS.append(gd_hook)
for _name in ("gd_ndcg@20",):
    register(gd_hook(_name))
