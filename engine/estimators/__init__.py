"""Estimators for incomplete judgments: inferred AP (variance, confidence intervals), xinfAP / infNDCG on
stratified samples, statAP from inclusion probabilities, and the trials that compare them.

Measures built on these live in engine/measures/m_*.py; this package holds the shared kernels. The
samplers that draw judged samples are pooling's (`engine.pooling.designs`); the estimator experiments
against complete truth are planning's (`engine.planning.estimator_experiments`).
"""
from __future__ import annotations

from .infap import infap_terms, infap_variance, infap_variance_jackknife, infap_variance_linearized, mean_ci
from .statap import statap_terms
from .xinfap import xinfap_terms

__all__ = ["infap_terms", "infap_variance", "infap_variance_jackknife", "infap_variance_linearized", "mean_ci",
           "xinfap_terms", "statap_terms"]
