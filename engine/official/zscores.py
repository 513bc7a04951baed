"""trec_eval's `-Z zscores_file`: standardized per-topic scores.

The file has lines `topic measure mean sd`. Every numeric per-topic value v of measure m on topic t becomes
(v - mean) / sd with the file's (t, m) entry, and is printed as `Z<m>`; a (topic, measure) absent from the
file, or with sd = 0, gives 0 (as trec_eval). The summary line aggregates the standardized values as the
measure does (mean, sum, or geometric mean). num_q stays the topic count, runid and relstring are text and
keep their names; every standardized value is printed as a float.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np



def read_zscores(path) -> dict[tuple[str, str], tuple[float, float]]:
    """{(topic, measure): (mean, sd)} of a trec_eval zscores file."""
    from ..formats.fieldlines import read_fields
    rows = read_fields(path, ["topic", "measure", "mean", "sd"], {"mean": float, "sd": float}, "-Z zscores")
    return {(t, m): (mu, sd) for t, m, mu, sd in rows}


def apply_zscores(c, z: dict[tuple[str, str], tuple[float, float]]):
    """A copy of an `evaluate.Computed` whose numeric measures are standardized and renamed Z<name>."""
    from ..evaluation.evaluate import Computed
    r = c.ranked
    topics = np.asarray(r.topic_names, dtype=object)[r.g_topic]
    values, kinds = {}, {}
    for n, req in c.kinds.items():
        m = req.measure
        if m.value_kind == "str":
            values[n], kinds[n] = c.values[n], req
            continue
        new_m = replace(m, value_kind="float")
        if m.name == "num_q":
            v = np.asarray(c.values[n], dtype=np.float64)
        else:
            raw = np.asarray(c.values[n], dtype=np.float64)
            v = np.zeros(len(raw))
            for g, t in enumerate(topics):
                ms = z.get((t, n))
                if ms is not None and ms[1] != 0:
                    v[g] = (raw[g] - ms[0]) / ms[1]
        values["Z" + n] = v
        kinds["Z" + n] = replace(req, measure=new_m)
    return Computed(r, c.requests, values, kinds, c.notes)


def zscore_lines(lines: list[str], c) -> list[str]:
    """trec_eval prints a standardized measure as 'Z' followed by the name padded as usual (23 columns)."""
    znames = {n for n, req in c.kinds.items() if n.startswith("Z") and req.measure.value_kind != "str"}
    out = []
    for ln in lines:
        name, sep, rest = ln.partition("\t")
        key = name.rstrip()
        if key in znames:
            ln = f"Z{key[1:]:<22}{sep}{rest}"
        out.append(ln)
    return out
