"""Million Query judgment targets: assigned per topic before judging, read back from judgment counts."""
from __future__ import annotations

import numpy as np
import pandas as pd


MQ_TARGETS = (8, 16, 32, 64, 128)


def assign_targets(topics, levels=MQ_TARGETS, seed: int = 0) -> pd.Series:
    """Million Query design: per-topic judgment targets, the number of topics per level inversely
    proportional to the level (equal total effort per level: 16:8:4:2:1 for 8..128), shuffled."""
    topics = [str(t) for t in topics]
    lv = np.asarray(levels, dtype=np.int64)
    share = (1.0 / lv) / (1.0 / lv).sum() * len(topics)
    counts = np.floor(share).astype(np.int64)
    rem = len(topics) - counts.sum()
    counts[np.argsort(-(share - counts), kind="stable")[:rem]] += 1
    values = np.repeat(lv, counts)
    rng = np.random.default_rng(seed)
    rng.shuffle(values)
    return pd.Series(values, index=pd.Index(topics, name="topic"), name="target")


def derive_targets(counts: pd.Series, levels=MQ_TARGETS) -> pd.Series:
    """A topic's judgment target read from its judgment count: the smallest level >= the count
    (collisions between selection methods only ever lower a count below its target). A count above
    the largest level is filed under the largest level; how many were is in `attrs["above_largest"]`."""
    lv = np.asarray(sorted(levels), dtype=np.int64)
    c = counts.to_numpy(np.int64)
    i = np.minimum(np.searchsorted(lv, c, side="left"), len(lv) - 1)
    out = pd.Series(lv[i], index=counts.index, name="target")
    out.attrs["above_largest"] = int((c > lv[-1]).sum()) if len(lv) else 0
    return out
