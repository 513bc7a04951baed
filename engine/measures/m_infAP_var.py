"""infAP_var: estimated variance of infAP per topic (thesis 3.1.1 and Appendix A).

The summary line is the mean of the per-topic variances; the variance of mean infAP over T topics is
that mean divided by T. Confidence intervals of the mean: engine.estimators.mean_ci(df) or
`cranfield ci QRELS RUN... -m infAP` (prints mean, standard error and the 95% interval per run).
"""
from ..estimators.infap import infap_variance
from .registry import measure


@measure("infAP_var", extension=True, nicknames={"incomplete"})
def infAP_var(r, params=()):
    """Variance of infAP: (1 - p) s^2 / R + sum var[PC(k)] / R^2 (uniform sample of the pool, rate p)."""
    return infap_variance(r)
