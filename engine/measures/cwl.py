"""C/W/L measures as cwl_eval defines them (Moffat et al.; Azzopardi et al.), ir_measures' INST, INSQ, SDCG,
NERR8-NERR11 and BPM: expected utility per document inspected, sum_i W_i g_i, with W from the continuation
probabilities C_i of each user model. Gains are the grades clipped to [min_rel, max_rel] and scaled to
[0, 1] (max_rel defaults to the highest grade judged); unjudged documents gain 0; every ranking is
truncated or padded with gain 0 to 1000 documents and every document costs 1 (cwl_eval's defaults, as
ir_measures' cwl_eval provider runs it).

Parameters are name=value pairs: `inst.T=1,max_rel=3`, `sdcg.k=10,max_rel=3`, `bpm.T=1,k=10,max_rel=3`,
`nerr8.k=10,max_rel=3`, `nerr10.p=0.9,max_rel=3`, `nerr11.T=1,max_rel=3`; min_rel defaults to 0, k to 10."""
import numpy as np

from .registry import MeasureError, measure
from .specs import Param

DEPTH = 1000          # cwl_eval's max_n


def _param(params, name: str, default=None) -> float:
    for k, v in params:
        if k == name:
            return float(v)
    if default is None:
        raise MeasureError(f"parameter {name} is required (e.g. {name}=3)")
    return float(default)


_T = Param("T", "float", 1.0, "the gain the user wants before stopping")
_K = Param("k", "int", 10, "cut-off: the most documents inspected", minimum=1)
_P = Param("p", "float", 0.9, "the chance of going on after a document of gain 0")
_RELS = (Param("min_rel", "float", 0.0, "grade of gain 0 (grades below gain 0)"),
         Param("max_rel", "float", None, "grade of gain 1 (grades above gain 1)", default_text="highest grade judged"))
SPECS = {"inst": (_T, *_RELS), "insq": (_T, *_RELS), "sdcg": (_K, *_RELS), "nerr8": (_K, *_RELS),
         "nerr9": (_K, *_RELS), "nerr10": (_P, *_RELS), "nerr11": (_T, *_RELS), "bpm": (_T, _K, *_RELS)}
ALLOWED = {name: {s.name for s in specs} for name, specs in SPECS.items()}


def _gains(r, params, name: str) -> np.ndarray:
    """Groups x DEPTH matrix of gains in [0, 1] (cwl_eval's scaling of the grades), zero-padded."""
    allowed = ALLOWED[name]
    bad = [k for k, _ in params if k not in allowed]
    if bad:
        raise MeasureError(f"{name}: unknown parameter {bad[0]!r} (takes {', '.join(sorted(allowed))})")
    lo = _param(params, "min_rel", _RELS[0].default)
    hi = _param(params, "max_rel", max(float(r.max_grade), lo + 1.0))   # default: the highest grade judged
    if not hi > lo:
        raise MeasureError(f"max_rel ({hi:g}) must be greater than min_rel ({lo:g})")
    grade = np.where(r.rel >= 0, np.maximum(r.rel, 0), np.nan).astype(np.float64)
    g = np.where(np.isnan(grade), 0.0, (np.clip(grade, lo, hi) - lo) / (hi - lo))
    out = np.zeros((r.n_groups, DEPTH))
    pos = r.rank - 1
    keep = pos < DEPTH
    out[r.row_group[keep], pos[keep]] = g[keep]
    return out


def _expected_utility(c: np.ndarray, g: np.ndarray) -> np.ndarray:
    """sum_i W_i g_i with W_1 = 1 / sum_i prod_{j<i} C_j and W_i = W_1 prod_{j<i} C_j (cwl_eval's w_vector)."""
    prod = np.ones_like(c)
    prod[:, 1:] = np.cumprod(c[:, :-1], axis=1)
    w = prod / prod.sum(axis=1, keepdims=True)
    return (w * g).sum(axis=1)


def _rank() -> np.ndarray:
    return np.arange(1, DEPTH + 1, dtype=np.float64)[None, :]


def _cut(params, name="k") -> float:
    k = _param(params, name, _K.default)                 # Cranfield's default cut-off (ir_measures requires @k)
    if k < 1:
        raise MeasureError(f"{name} must be at least 1 (got {k:g})")
    return k


@measure("inst", params=(), param_kind="pairs", extension=True, param_specs=SPECS["inst"])
def inst(r, params=()):
    """INST: C_i = ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - gain so far (T default 1)."""
    g = _gains(r, params, "inst")
    T = _param(params, "T", _T.default)
    i = _rank()
    ti = T - np.cumsum(g, axis=1)
    return _expected_utility(((i + T + ti - 1.0) / (i + T + ti)) ** 2, g)


@measure("insq", params=(), param_kind="pairs", extension=True, param_specs=SPECS["insq"])
def insq(r, params=()):
    """INSQ: C_i = ((i + 2T - 1) / (i + 2T))^2 (T default 1)."""
    g = _gains(r, params, "insq")
    T = _param(params, "T", _T.default)
    i = _rank()
    c = np.broadcast_to(((i + 2 * T - 1.0) / (i + 2 * T)) ** 2, g.shape)
    return _expected_utility(np.array(c), g)


@measure("sdcg", params=(), param_kind="pairs", extension=True, param_specs=SPECS["sdcg"])
def sdcg(r, params=()):
    """Scaled DCG@k: C_i = log2(i + 1) / log2(i + 2) for i < k, then 0 (k required)."""
    g = _gains(r, params, "sdcg")
    k = _cut(params)
    i = _rank()
    c = np.where(i < k, np.log2(i + 1.0) / np.log2(i + 2.0), 0.0)
    return _expected_utility(np.broadcast_to(c, g.shape).copy(), g)


@measure("nerr8", params=(), param_kind="pairs", extension=True, param_specs=SPECS["nerr8"])
def nerr8(r, params=()):
    """NERR (eq. 8) at k: C_i = 1 - g_i for i < k, then 0."""
    g = _gains(r, params, "nerr8")
    k = _cut(params)
    return _expected_utility(np.where(_rank() < k, 1.0 - g, 0.0), g)


@measure("nerr9", params=(), param_kind="pairs", extension=True, param_specs=SPECS["nerr9"])
def nerr9(r, params=()):
    """NERR (eq. 9) at k: C_i = i / (i + 1) (1 - g_i) for i < k, then 0."""
    g = _gains(r, params, "nerr9")
    k = _cut(params)
    i = _rank()
    return _expected_utility(np.where(i < k, i / (i + 1.0) * (1.0 - g), 0.0), g)


@measure("nerr10", params=(), param_kind="pairs", extension=True, param_specs=SPECS["nerr10"])
def nerr10(r, params=()):
    """NERR (eq. 10): C_i = p (1 - g_i) (p default 0.9)."""
    g = _gains(r, params, "nerr10")
    return _expected_utility(_param(params, "p", _P.default) * (1.0 - g), g)


@measure("nerr11", params=(), param_kind="pairs", extension=True, param_specs=SPECS["nerr11"])
def nerr11(r, params=()):
    """NERR (eq. 11): C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i) (T default 1)."""
    g = _gains(r, params, "nerr11")
    T = _param(params, "T", _T.default)
    i = _rank()
    return _expected_utility(((i + 2 * T - 1.0) / (i + 2 * T)) ** 2 * (1.0 - g), g)


@measure("bpm", params=(), param_kind="pairs", extension=True, param_specs=SPECS["bpm"])
def bpm(r, params=()):
    """Bejeweled Player Model (static): C_i = 1 while the gain so far is below T and i is below k, then 0."""
    g = _gains(r, params, "bpm")
    T = _param(params, "T", _T.default)
    k = _cut(params)
    cg = np.cumsum(g, axis=1)
    c = ((cg < T) & (_rank() < k)).astype(np.float64)
    c = np.minimum.accumulate(c, axis=1)           # the condition holds for a prefix only
    return _expected_utility(c, g)
