"""rbp: rank-biased precision (Moffat & Zobel 2008), persistence `-m rbp.p=0.95` (default 0.9)."""
from ..ranking.gains import gain_model, pair_param, powers
from .registry import contributes, measure
from .specs import GRADE_GAINS, PERSISTENCE


@measure("rbp", params=(), param_kind="pairs", nicknames={"all_trec"},
         param_specs=(PERSISTENCE, GRADE_GAINS))
def rbp(r, params=()):
    """(1 - p) * sum of gain * p^(rank - 1); gains as ndcg's, rescaled to [0, 1] when outside it."""
    p = pair_param(params, "p", PERSISTENCE.default)
    m = gain_model(r, params, normalize=True)
    w = powers(p, int(r.num_ret.max(initial=0)))[r.rank - 1]
    return (1.0 - p) * r.seg_sum(m.row_gain * w)


@contributes("rbp")
def rbp_contributions(r, params=()):
    """(1 - p) * gain * p^(rank - 1) per document."""
    p = pair_param(params, "p", PERSISTENCE.default)
    m = gain_model(r, params, normalize=True)
    w = powers(p, int(r.num_ret.max(initial=0)))[r.rank - 1]
    return (1.0 - p) * (m.row_gain * w)
