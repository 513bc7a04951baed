"""runid: the run's name (summary line only)."""
import numpy as np

from .registry import measure


@measure("runid", value_kind="str", aggregate="first", per_topic=False,
         nicknames={"official", "all_trec", "set", "all_prefs", "prefs", "qrels_jg"})
def runid(r, params=()):
    """Runid given by the results file."""
    return np.array([r.run_names[i] for i in r.g_run], dtype=object)
