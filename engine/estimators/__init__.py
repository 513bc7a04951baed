"""Estimators for incomplete judgments: condensed lists, inferred AP (variance, confidence intervals),
xinfAP / infNDCG on stratified samples, statAP from inclusion probabilities, and samplers.

Measures built on these live in engine/measures/m_*.py; this package holds the shared kernels.
"""
from __future__ import annotations

from ..measures.condensed import condense
from .infap import infap_terms, infap_variance, infap_variance_jackknife, infap_variance_linearized, mean_ci
from .samplers import ap_prior_weights, pps_sample, stratified_sample, uniform_sample
from .statap import statap_terms
from .xinfap import xinfap_terms

__all__ = ["condense", "infap_terms", "infap_variance", "infap_variance_jackknife", "infap_variance_linearized", "mean_ci",
           "xinfap_terms", "statap_terms", "uniform_sample", "stratified_sample", "pps_sample",
           "ap_prior_weights"]
