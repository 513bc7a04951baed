"""The stability (v) and completion screens' view model: G-study, discriminative power, judgment reduction and
relevance-prediction experiments, each one engine call."""
from __future__ import annotations

import numpy as np
import pandas as pd


class ExperimentsView:
    """The stability and completion screens' engine calls."""

    # ------------------------------------------------------------------ predicted relevance (Buettcher et al. 2007)

    def completion_quality(self, fractions, progress=None, seed: int = 0) -> pd.DataFrame:
        """Classifier precision / recall / F1 against the training fraction (engine.completion, Table 6)."""
        from engine.completion.experiment import classifier_quality
        from engine.completion.svm import sklearn_available
        st = self._need_docs()
        clfs = ("kld", "svm") if sklearn_available() else ("kld",)
        if progress:
            progress(0.1, "training classifiers")
        return classifier_quality(self.qrels, st, fractions, classifiers=clfs, rel_level=self.rel_level(), seed=seed)

    def completion_poolbias(self, mode: str, measures, progress=None) -> pd.DataFrame:
        """Pool-bias experiment with and without completion (engine.completion, Tables 7-8), via the
        campaign seam."""
        from engine.completion.svm import sklearn_available
        from engine.campaign.experiments import pool_bias_campaign
        modes = ["none", "kld", "svm"] if sklearn_available() else ["none", "kld"]
        summ, _ = pool_bias_campaign(self.o.engine_campaign, list(measures), mode=mode, complete=modes,
                                     progress=progress)
        return summ


    @staticmethod
    def g_study(x: np.ndarray, target: float, progress=None) -> tuple:
        """G-study of a topics x runs score matrix, its D-study now and over 1..max(2n, 100) topics, and
        the topics needed for Phi and E rho^2 >= target: (g, components, d_now, d_all, need_phi, need_e)."""
        from engine.stability.gtheory import components_table, d_study, g_study, topics_needed
        if progress:
            progress(0.2, "G-study")
        g = g_study(x)
        if progress:
            progress(0.6, "D-study")
        ns = np.arange(1, max(2 * g.n_topics, 100) + 1)
        return (g, components_table(g), d_study(g), d_study(g, ns), topics_needed(g, target, "phi"),
                topics_needed(g, target, "erho2"))

    @staticmethod
    def discriminative_power(x: np.ndarray, n_bootstrap: int = 1000, progress=None):
        """Bootstrap discriminative power of a topics x runs score matrix (engine.stability.discrim)."""
        from engine.stability.discrim import discriminative_power
        return discriminative_power(x, n_bootstrap=n_bootstrap, progress=progress)

    def reduction(self, specs: list[str], method: str = "uniform", trials: int = 3, statistic: str = "tau",
                  progress=None) -> pd.DataFrame:
        """Judgment-reduction curve (summarized `statistic` per level and measure) against this model's
        judgments, through the campaign seam (streamed over the run store on a large campaign)."""
        from engine.campaign.experiments import reduction_campaign
        from engine.stability.reduction import summarize_reduction
        df = reduction_campaign(self.o.engine_campaign, self.qrels, list(specs), method=method, trials=trials,
                                rel_level=self.options.rel_level, progress=progress)
        return summarize_reduction(df, statistic)

