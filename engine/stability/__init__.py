"""Stability analyses of evaluation results: generalizability theory (G/D-studies), stratified designs,
judgment-reduction and pool-bias experiments, discriminative power and significance tests.

Every analysis works on score matrices (topics x systems); `score_matrix` builds one from the long
table of `engine.evaluation.evaluate`. Long analyses accept `progress(fraction, message)` callbacks.
"""
from __future__ import annotations

from .matrix import Progress, as_matrix, kendall_tau, rank_positions, report, score_matrix, tau_ap
from .gtheory import DStudy, GStudy, d_study, g_study, gstudy_report, topics_needed

__all__ = ["Progress", "report", "score_matrix", "as_matrix", "kendall_tau", "tau_ap", "rank_positions",
           "GStudy", "DStudy", "g_study", "d_study", "topics_needed", "gstudy_report"]
