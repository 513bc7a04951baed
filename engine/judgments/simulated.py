"""Simulated judges with a known confusion matrix relative to the truth (a lenient or a strict judge),
so agreement figures can be checked against the values the matrix implies.

A judge's matrix M is row-stochastic: M[i, j] = P(judge says grade j | true grade i), grades in scale
order. With true-grade shares p, the expected joint table is diag(p) M, whose Cohen's kappa is the
implied kappa; its sampling error for n judged documents comes from multinomial draws of that table.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..util import fs

JUDGE_KINDS = ("lenient", "strict", "noisy")


def judge_matrix(kind: str, n_grades: int, error: float = 0.2) -> np.ndarray:
    """The confusion matrix of a judge over `n_grades` grades: lenient moves a document one grade up
    with probability `error` (the top grade stays), strict one grade down (grade 0 stays), noisy to
    a uniformly chosen other grade."""
    if kind not in JUDGE_KINDS:
        raise CranfieldError(f"judge {kind!r}: use one of {', '.join(JUDGE_KINDS)}")
    if not 0 <= error <= 1:
        raise CranfieldError(f"judge error {error}: must be in [0, 1]")
    k = n_grades
    m = np.eye(k) * (1 - error)
    for i in range(k):
        if kind == "lenient":
            m[i, min(i + 1, k - 1)] += error
        elif kind == "strict":
            m[i, max(i - 1, 0)] += error
        else:
            for j in range(k):
                if j != i:
                    m[i, j] += error / (k - 1)
    return m


def apply_judge(truth: pd.DataFrame, matrix: np.ndarray, grades: list[int], seed: int = 0) -> pd.DataFrame:
    """Judge every (topic, doc) of `truth` (topic, doc, grade): each grade drawn from the matrix row
    of its true grade. Deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    idx = {g: i for i, g in enumerate(grades)}
    rows = np.array([idx[int(g)] for g in truth["grade"]], dtype=np.int64)
    cum = np.cumsum(matrix, axis=1)
    u = rng.random(len(rows))
    picked = (u[:, None] > cum[rows]).sum(axis=1)
    picked = np.minimum(picked, len(grades) - 1)
    out = truth[["topic", "doc"]].copy()
    out["grade"] = np.asarray(grades, dtype=np.int64)[picked]
    return out.reset_index(drop=True)


def implied_joint(matrix: np.ndarray, true_share: np.ndarray) -> np.ndarray:
    """Expected joint distribution (rows: truth, columns: judge)."""
    return np.asarray(true_share, float)[:, None] * np.asarray(matrix, float)


def implied_kappa(matrix: np.ndarray, true_share: np.ndarray, weights: str = "unweighted") -> float:
    """The kappa the matrix implies for documents whose true grades have shares `true_share`."""
    from .agreement import kappa_from_confusion
    return kappa_from_confusion(implied_joint(matrix, true_share), weights)


def kappa_sampling_error(matrix: np.ndarray, true_share: np.ndarray, n: int, weights: str = "unweighted",
                         draws: int = 2000, seed: int = 0) -> float:
    """Standard deviation of kappa over multinomial samples of `n` documents from the implied joint table."""
    from .agreement import kappa_from_confusion
    joint = implied_joint(matrix, true_share)
    rng = np.random.default_rng(seed)
    samples = rng.multinomial(n, joint.ravel() / joint.sum(), size=draws).reshape(draws, *joint.shape)
    ks = np.array([kappa_from_confusion(s, weights) for s in samples])
    return float(np.nanstd(ks, ddof=1))


def binary_matrix(matrix: np.ndarray, true_share: np.ndarray, threshold_index: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2x2 judge matrix and true shares after binarizing at grade position `threshold_index`."""
    joint = implied_joint(matrix, true_share)
    rel = np.arange(len(joint)) >= threshold_index
    j2 = np.array([[joint[~rel][:, ~rel].sum(), joint[~rel][:, rel].sum()],
                   [joint[rel][:, ~rel].sum(), joint[rel][:, rel].sum()]])
    share = j2.sum(axis=1)
    return j2 / np.where(share[:, None] > 0, share[:, None], 1), share


def write_judge_source(root, judged: pd.DataFrame, grades: list[int], kind: str, error: float, seed: int,
                       name: str | None = None) -> str:
    """Write a simulated judge's labels of `judged` (topic, doc, true grade) as a campaign source
    (judgments/sources/NAME.qrels + meta with the matrix). Returns the source name."""
    from ..formats.qrels import write_qrels
    from ..formats.files import write_text
    from .sources import sources_dir
    m = judge_matrix(kind, len(grades), error)
    labels = apply_judge(judged, m, grades, seed)
    name = name or f"judge-{kind}"
    d = sources_dir(root)
    write_qrels(d / f"{name}.qrels", labels)
    meta = {"name": name, "kind": "simulated", "model": f"{kind} judge, error {error}", "prompt_version": "",
            "origin": "cranfield simulate", "judgments": int(len(labels)), "grades": list(map(int, grades)),
            "confusion_matrix": m.round(6).tolist(), "seed": int(seed)}
    write_text(d / f"{name}.meta.json", json.dumps(meta, indent=1) + "\n")
    return name


def read_judge_matrix(root, name: str) -> np.ndarray | None:
    """The known confusion matrix of a simulated source, else None."""
    from .sources import sources_dir
    p = sources_dir(root) / f"{name}.meta.json"
    if not fs.is_file(p):
        return None
    from ..formats.safeload import json_line
    m = json_line(fs.read_text(p), p, 1).get("confusion_matrix")
    return None if m is None else np.asarray(m, float)


def apply_run_bias(judged: pd.DataFrame, runs: pd.DataFrame, favoured, grades: list[int], error: float,
                   depth: int | None = None, base: np.ndarray | None = None, seed: int = 0) -> pd.DataFrame:
    """A judge biased toward some runs' documents (as a model judge may favour text like its own): every
    (topic, doc) of `judged` that one of the `favoured` runs retrieved (in its top `depth`) is judged by a
    lenient matrix (one grade up with probability `error`), every other one by `base` (default: the
    identity, the true grade). Deterministic in `seed`."""
    k = len(grades)
    r = runs[runs["run"].isin(list(favoured))]
    if depth is not None:
        r = r[r["rank"] <= depth]
    fav_keys = set(zip(r["topic"].astype(str), r["doc"].astype(str)))
    fav = np.fromiter(((t, d) in fav_keys for t, d in zip(judged["topic"].astype(str), judged["doc"].astype(str))),
                      dtype=bool, count=len(judged))
    out = apply_judge(judged, np.eye(k) if base is None else base, grades, seed)
    if fav.any():
        lenient = apply_judge(judged[fav], judge_matrix("lenient", k, error), grades, seed + 1)
        out.loc[fav, "grade"] = lenient["grade"].to_numpy()
    return out


def apply_crafted_run(labels: pd.DataFrame, runs: pd.DataFrame, crafted: str, grades: list[int], rel_level: int,
                      rate: float, depth: int | None = None, seed: int = 0) -> pd.DataFrame:
    """A crafted run (Clarke & Dietz): its documents are written to please the model judge, so each
    (topic, doc) of `labels` the run retrieved (in its top `depth`) that the judge put below `rel_level` is
    raised to `rel_level` with probability `rate`. Deterministic in `seed`."""
    if not 0 <= rate <= 1:
        raise CranfieldError(f"crafted-run rate {rate}: must be in [0, 1]")
    r = runs[runs["run"].astype(str) == str(crafted)]
    if not len(r):
        raise CranfieldError(f"crafted run {crafted!r} is not among the runs")
    if depth is not None:
        r = r[r["rank"] <= depth]
    keys = set(zip(r["topic"].astype(str), r["doc"].astype(str)))
    hit = np.fromiter(((t, d) in keys for t, d in zip(labels["topic"].astype(str), labels["doc"].astype(str))),
                      dtype=bool, count=len(labels))
    rng = np.random.default_rng(seed)
    up = hit & (labels["grade"].to_numpy() < rel_level) & (rng.random(len(labels)) < rate)
    out = labels.copy()
    out.loc[up, "grade"] = int(rel_level)
    return out


def judge_canaries(canaries: pd.DataFrame, rates: dict, grades: list[int], rel_level: int,
                   seed: int = 0) -> pd.DataFrame:
    """A judge's labels of planted canaries (topic, doc, kind): with probability rates[kind] the judge falls
    for a canary (the top grade for an instruction to mark it relevant, `rel_level` for the other kinds),
    else gives the lowest grade. Deterministic in `seed`."""
    bad = {k: v for k, v in rates.items() if not 0 <= v <= 1}
    if bad:
        raise CranfieldError(f"canary rate {bad}: must be in [0, 1]")
    rng = np.random.default_rng(seed)
    rate = canaries["kind"].map(lambda k: rates.get(k, 0.0)).to_numpy(np.float64)
    fell = rng.random(len(canaries)) < rate
    high = np.where(canaries["kind"].to_numpy() == "instruction", max(grades), rel_level)
    return pd.DataFrame({"topic": canaries["topic"].astype(str).to_numpy(object),
                         "doc": canaries["doc"].astype(str).to_numpy(object),
                         "grade": np.where(fell, high, min(grades)).astype(np.int64)})


def write_labels_source(root, labels: pd.DataFrame, name: str, meta: dict) -> str:
    """Write a simulated judge's labels as the campaign source NAME (judgments/sources/NAME.qrels + meta)."""
    from ..formats.qrels import write_qrels
    from ..formats.files import write_text
    from .sources import check_name, sources_dir
    check_name(name)
    d = sources_dir(root)
    write_qrels(d / f"{name}.qrels", labels)
    meta = {"name": name, "kind": "simulated", "origin": "cranfield simulate", "judgments": int(len(labels)), **meta}
    write_text(d / f"{name}.meta.json", json.dumps(meta, indent=1) + "\n")
    return name
