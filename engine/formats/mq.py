"""Million Query track judgments (prels): the selection methods and the reference statAP rules.

A prels line is `topic doc grade method probability`. Methods, as NIST's Million Query evaluation
script reads them:

| method | meaning                                             | inclusion probability used          |
|--------|-----------------------------------------------------|-------------------------------------|
| 0      | selected by MTC only                                | 1 (judged with certainty)           |
| 1      | selected by statAP sampling only                    | the file's probability              |
| 2      | selected by both                                    | 1 (judged with certainty)           |
| 4      | (2007 prels: 4,163 rows; undefined in the track's   | the file's probability, as method 1 |
|        |  documentation, counted with 1 and 2 as statAP-     | (warned once with file:line, count) |
|        |  judged by statAP_MQ_eval v3)                       |                                     |
| other  | not in the script                                   | the file's probability (warned)     |

A topic is evaluated by the reference statAP only when its estimated number of relevant documents
R_hat > 0 and at least one of its judgments was drawn by statAP sampling (method 1, 2 or 4, the
script's "NEU judged" count); statMAP is the mean over those valid topics.
"""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..errors import Warnings

pd = lazy_module("pandas")

CERTAIN_METHODS = ("0", "2")      # probability 1 in the reference script
STATAP_METHODS = ("1", "2", "4")  # drawn by statAP sampling (the script's NEU count)
KNOWN_METHODS = ("0", "1", "2")


def warn_unknown_methods(path: str, df: pd.DataFrame, warnings: Warnings) -> None:
    """One warning naming file:line of the first prels row whose method is not 0, 1 or 2, with the count."""
    if "method" not in df.columns or not len(df):
        return
    m = df["method"].astype(str).to_numpy(object)
    bad = ~np.isin(m, KNOWN_METHODS)
    n = int(bad.sum())
    if not n:
        return
    i = int(np.flatnonzero(bad)[0])
    line = int(df["line"].iloc[i]) if "line" in df.columns else None
    values = sorted(set(m[bad].tolist()))
    warnings.add(path, line, f"{n} prels row(s) with selection method {', '.join(values)} (not 0 MTC, 1 statAP, "
                             "2 both); they use the file's probability, as method 1, and method 4 counts as statAP-sampled "
                             "as in the reference script (see docs/million-query.md)")


def reference_probabilities(method: np.ndarray | None, prob: np.ndarray) -> np.ndarray:
    """Inclusion probabilities as the reference script uses them: 1 for methods 0 and 2."""
    p = np.asarray(prob, np.float64).copy()
    if method is not None:
        p[np.isin(np.asarray(method).astype(str), CERTAIN_METHODS)] = 1.0
    return p


def statap_sampled(method: np.ndarray | None, n: int) -> np.ndarray:
    """Per judgment: drawn by statAP sampling (method 1, 2 or 4, as the script counts); a judgment without a
    method (no column, or an empty value from merged qrels) counts as sampled."""
    if method is None:
        return np.ones(n, dtype=bool)
    m = np.asarray(method).astype(str)
    return np.isin(m, STATAP_METHODS) | np.isin(m, ("", "nan", "None"))
