"""Simulated evaluation campaigns with complete ground-truth judgments.

The model, per topic t: a document space of relevant documents (a log-normal number of them, graded)
and many more non-relevant ones. Every document has a shared "attractiveness" (why runs overlap);
each relevant document has a findability. A run s of group g scores document d as

    x = b[s,t] * v[s,d] + a[d] + sigma_group * e[g,t,d] + sigma_run * e[s,t,d]

where v is the document's relevance signal (0 for non-relevant; grade weight + findability for
relevant), b[s,t] = run quality + topic easiness + a system x topic interaction, a[d] the shared
attractiveness, e[g,...] the group's noise (the group's base ranking) and e[s,...] the run's own
perturbation. A run retrieves its top `depth` documents. With `manual_bias`, a share of the
relevant documents is "hard": automatic runs see them with a strongly reduced signal, manual runs
do not, so manual runs find relevant documents the automatic runs rarely retrieve; and manual runs
see document attractiveness mostly through their own (shared manual) view, so they also retrieve
non-relevant documents the automatic runs do not. Leaving manual runs out of the pool then moves
them down by AP and P@k and up by bpref, as buttcher-et-al-2007 report for TREC 2006 Terabyte. Some relevant
documents are beyond every run (they exist only in the truth). Scores are quantized to 1e-6 (exact
through a TREC text round trip) and a share of them is tied to the previous score, so trec_eval's
tie-break by document id matters.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import CranfieldError
from ..util import fs

SCORE_QUANTUM = 1_000_000  # scores are integers / 1e6

MODEL = {
    "sigma_group": 0.9,        # noise shared by a group's runs (its base ranking)
    "sigma_run": 0.55,         # each run's own perturbation
    "base_b": 2.2,             # weight of the relevance signal for an average system on an average topic
    "hard_share": 0.12,        # share of relevant docs automatic runs rarely retrieve (manual_bias)
    "hard_penalty": 2.0,       # how much automatic runs under-see those documents
    "unfindable_share": 0.06,  # share of relevant docs no run retrieves
    "manual_rho": 0.2,         # correlation of manual runs' document attractiveness with the automatic one
}
"""Constants of the score model (recorded in truth.yaml); change only for experiments."""


@dataclass
class Simulation:
    """A simulated campaign: runs, complete truth, run metadata, topics and the parameters used."""

    runs: pd.DataFrame      # run, topic, doc, rank, score (trec_eval order within each run and topic)
    truth: pd.DataFrame     # topic, doc, grade: every retrieved doc plus relevant docs no run retrieved
    run_meta: pd.DataFrame  # run, group, type ('automatic'|'manual'), pooled (bool), quality (float)
    topics: pd.DataFrame    # topic, title, category
    params: dict
    topic_meta: pd.DataFrame = field(default=None)  # topic, num_rel, difficulty, n_hard, n_unfindable

    def pool(self, depth: int | None = 100, runs: list[str] | None = None) -> pd.DataFrame:
        """The depth-k pool (topic, doc) of the given runs (default: the pooled runs), judged from the truth."""
        return depth_pool(self, depth, runs)


# ----------------------------------------------------------------------------- helpers

_SYL = ["ka", "lo", "mi", "ne", "ta", "ri", "so", "ve", "du", "pa", "ge", "bo", "fi", "za", "hu",
        "ro", "le", "ny", "qu", "ce", "mo", "ti", "sa", "we", "xo", "ja", "ki", "ru", "de", "po"]


def _vocabulary(n: int, seed: int) -> np.ndarray:
    """`n` distinct pseudo-words of 2-3 syllables, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n:
        k = int(rng.integers(2, 4))
        w = "".join(_SYL[i] for i in rng.integers(0, len(_SYL), k))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return np.asarray(words, dtype=object)


def _str_column(values, codes: np.ndarray) -> pd.Series:
    """values[codes] as an object column of str (the readers' representation; values shared, not copied)."""
    return pd.Series(np.asarray(values, dtype=object)[codes], dtype=object)


_GROUPS = ["aster", "birch", "cedar", "delta", "ember", "fjord", "garnet", "heron", "iris", "juniper",
           "kestrel", "larch", "maple", "nimbus", "onyx", "piper", "quartz", "raven", "sable", "tundra",
           "umber", "vega", "willow", "xenon", "yarrow", "zephyr"]


def _group_names(n: int) -> list[str]:
    """Distinct group names: a word per group, numbered once the words run out."""
    return [_GROUPS[i % len(_GROUPS)] + (str(i // len(_GROUPS)) if i >= len(_GROUPS) else "") for i in range(n)]


def _relevance_labels(grades: tuple[int, ...]) -> dict[int, dict]:
    """A relevance scale for campaign.yaml: labels and exponential gains 2^rank - 1."""
    named = {0: "not relevant", 1: "relevant", 2: "highly relevant", 3: "perfect"}
    out = {}
    for i, g in enumerate(sorted(grades)):
        lab = named.get(i, f"grade {g}") if len(grades) <= 4 else f"grade {g}"
        out[int(g)] = {"label": lab, "gain": int(2 ** i - 1)}
    return out


# ----------------------------------------------------------------------------- simulation

def simulate(n_runs: int = 40, n_topics: int = 50, depth: int = 1000, seed: int = 7, *, grades=(0, 1, 2),
             n_groups: int | None = None, manual_fraction: float = 0.15, manual_bias: bool = True,
             ties: float = 0.05, categories=("short", "long")) -> Simulation:
    """Simulate `n_runs` runs over `n_topics` topics, `depth` documents each, with complete truth.

    Deterministic in `seed`. `grades` is the relevance scale (lowest = not relevant); `n_groups`
    defaults to about one group per three runs; `manual_fraction` of the runs are manual;
    `ties` is the mean share of scores equal to the score above them.
    """
    grades = tuple(sorted(int(g) for g in grades))
    if n_runs < 1 or n_topics < 1 or depth < 1:
        raise CranfieldError("simulate needs at least one run, one topic and depth >= 1")
    if len(grades) < 2:
        raise CranfieldError("simulate needs at least two relevance grades (not relevant, relevant)")
    if not 0 <= ties < 1:
        raise CranfieldError("ties must be in [0, 1)")
    if not 0 <= manual_fraction <= 1:
        raise CranfieldError("manual_fraction must be in [0, 1]")
    categories = tuple(categories) if categories else ()
    rng = np.random.default_rng(seed)
    if n_groups is None:
        n_groups = max(1, round(n_runs / 3))
    n_groups = int(min(max(1, n_groups), n_runs))

    # ---- groups and runs: each group at least one run, the rest spread unevenly
    weights = rng.dirichlet(np.full(n_groups, 1.5))
    extra = rng.multinomial(n_runs - n_groups, weights) if n_runs > n_groups else np.zeros(n_groups, int)
    per_group = 1 + extra
    run_group = np.repeat(np.arange(n_groups), per_group)
    n_manual = int(round(manual_fraction * n_runs))
    is_manual = np.zeros(n_runs, dtype=bool)
    if n_manual:
        is_manual[rng.choice(n_runs, size=n_manual, replace=False)] = True
    gnames = _group_names(n_groups)
    run_names: list[str] = []
    k_in_group = np.zeros(n_groups, dtype=int)
    for s in range(n_runs):
        g = run_group[s]
        k_in_group[g] += 1
        run_names.append(f"{gnames[g]}{'M' if is_manual[s] else 'A'}{k_in_group[g]}")
    # pooled: up to three runs per group (its first ones, manual runs first), as in TREC 2006 TB
    pooled = np.zeros(n_runs, dtype=bool)
    for g in range(n_groups):
        members = np.flatnonzero(run_group == g)
        order = members[np.argsort(~is_manual[members], kind="stable")]
        n_pool = min(len(order), 3 if len(order) >= 4 else max(1, (len(order) + 1) // 2))
        pooled[order[:n_pool]] = True

    # ---- system quality: group skill + run deviation (+ a bonus for manual runs)
    q_group = rng.normal(0.0, 0.45, n_groups)
    quality = q_group[run_group] + rng.normal(0.0, 0.18, n_runs) + np.where(is_manual, 0.25, 0.0)

    # ---- topics
    topic_ids = [str(401 + i) for i in range(n_topics)]
    vocab = _vocabulary(max(400, 8 * n_topics), seed + 1)
    title_len = rng.integers(2, 5, n_topics)
    titles = [" ".join(vocab[rng.choice(len(vocab), size=int(k), replace=False)]) for k in title_len]
    cats = [categories[int(i)] for i in rng.integers(0, len(categories), n_topics)] if categories else [""] * n_topics
    difficulty = rng.normal(0.0, 0.45, n_topics)             # topic easiness shift (negative = hard)
    max_rel = max(5, min(600, 3 * depth))
    num_rel = np.clip(np.round(np.exp(rng.normal(math.log(45.0), 1.0, n_topics))), 2, max_rel).astype(int)
    interaction = rng.normal(0.0, 0.35, (n_runs, n_topics))  # system x topic
    tie_rate = ties * rng.uniform(0.0, 2.0, n_runs) if ties > 0 else np.zeros(n_runs)
    tie_rate = np.minimum(tie_rate, 0.9)

    pos_grades = np.asarray(grades[1:], dtype=np.int64)
    gp = 0.45 ** np.arange(len(pos_grades))
    gp = gp / gp.sum()
    grade_weight = 1.0 + 0.45 * np.arange(len(pos_grades))   # higher grades are easier to find

    sigma_group, sigma_run = MODEL["sigma_group"], MODEL["sigma_run"]
    base_b = MODEL["base_b"]
    hard_share = MODEL["hard_share"] if manual_bias else 0.0
    hard_penalty = MODEL["hard_penalty"]
    unfindable_share = MODEL["unfindable_share"]
    manual_rho = MODEL["manual_rho"]
    manual_rho_c = float(np.sqrt(1.0 - manual_rho ** 2))

    run_cols = []   # per topic: (doc index matrix (n_runs, depth), score matrix)
    truth_parts = []
    tmeta = []
    for t in range(n_topics):
        R = int(num_rel[t])
        n_nonrel = max(4 * depth, 200)
        M = R + n_nonrel
        # document ids: a random permutation of numbers so relevance does not show in the id
        ids = rng.permutation(M) + 1
        names = np.asarray([f"D{topic_ids[t]}-{i}" for i in ids], dtype=object)
        str_order = np.empty(M, dtype=np.int64)
        str_order[np.argsort(names.astype(str), kind="stable")] = np.arange(M)
        grade = np.full(M, grades[0], dtype=np.int64)
        gidx = rng.choice(len(pos_grades), size=R, p=gp)
        grade[:R] = pos_grades[gidx]
        # relevance signal per doc (relevant docs are indices 0..R-1)
        v = np.zeros(M, dtype=np.float32)
        v[:R] = grade_weight[gidx] + rng.normal(0.0, 0.55, R)
        attract = rng.normal(0.0, 1.0, M).astype(np.float32)
        attract_manual = rng.normal(0.0, 1.0, M).astype(np.float32)   # how manual queries see the docs
        hard = np.zeros(M, dtype=bool)
        unfindable = np.zeros(M, dtype=bool)
        u = rng.random(R)
        hard[:R] = u < hard_share
        unfindable[:R] = (u >= hard_share) & (u < hard_share + unfindable_share)
        if R >= 3 and not unfindable.any():
            unfindable[R - 1] = True
        attract[unfindable] -= 6.0
        attract_manual[unfindable] -= 6.0
        v[unfindable] = 0.0
        b = np.maximum(0.05, base_b + quality + difficulty[t] + interaction[:, t]).astype(np.float32)
        eg = rng.standard_normal((n_groups, M), dtype=np.float32)
        er = rng.standard_normal((n_runs, M), dtype=np.float32)
        vv = np.broadcast_to(v, (n_runs, M)).copy()
        if hard.any():
            auto = ~is_manual
            vv[np.ix_(auto, hard)] -= hard_penalty
        look = np.broadcast_to(attract, (n_runs, M))
        if manual_bias and is_manual.any():
            look = look.copy()
            look[is_manual] = manual_rho * attract + manual_rho_c * attract_manual
        x = b[:, None] * vv + look + sigma_group * eg[run_group] + sigma_run * er
        # top-depth per run, sorted by latent score
        top = np.argpartition(-x, depth - 1, axis=1)[:, :depth]
        xt = np.take_along_axis(x, top, axis=1)
        o = np.argsort(-xt, axis=1, kind="stable")
        top = np.take_along_axis(top, o, axis=1)
        xt = np.take_along_axis(xt, o, axis=1).astype(np.float64)
        sc = np.rint((xt + 10.0) * SCORE_QUANTUM).astype(np.int64)  # non-increasing along each row
        if ties > 0:
            tie = rng.random(sc.shape) < tie_rate[:, None]
            tie[:, 0] = False
            src = np.where(tie, 0, np.arange(depth)[None, :])
            src = np.maximum.accumulate(src, axis=1)
            sc = np.take_along_axis(sc, src, axis=1)
        # final order: trec_eval's (score desc, doc id desc)
        key = sc * M + str_order[top]
        o = np.argsort(-key, axis=1, kind="stable")
        top = np.take_along_axis(top, o, axis=1)
        sc = np.take_along_axis(sc, o, axis=1)
        run_cols.append((top, sc, names))
        retrieved = np.zeros(M, dtype=bool)
        retrieved[top.ravel()] = True
        keep = retrieved | (grade > grades[0])
        truth_parts.append((np.flatnonzero(keep), grade[keep]))
        tmeta.append((topic_ids[t], R, float(difficulty[t]), int(hard.sum()), int(unfindable.sum()),
                      int(((grade > grades[0]) & ~retrieved).sum())))

    # doc column: codes into the concatenation of every topic's names (strings built once, in Arrow)
    name_off = np.concatenate(([0], np.cumsum([len(rc[2]) for rc in run_cols])))
    codes = np.stack([rc[0] + name_off[t] for t, rc in enumerate(run_cols)], axis=1)  # (runs, topics, depth)
    all_names = np.concatenate([rc[2] for rc in run_cols])
    scores = np.stack([rc[1] for rc in run_cols], axis=1)
    n_per_run = n_topics * depth
    runs = pd.DataFrame({
        "run": _str_column(run_names, np.repeat(np.arange(n_runs), n_per_run)),
        "topic": _str_column(topic_ids, np.tile(np.repeat(np.arange(n_topics), depth), n_runs)),
        "doc": _str_column(all_names, codes.reshape(-1)),
        "rank": np.tile(np.arange(1, depth + 1, dtype=np.int64), n_runs * n_topics),
        "score": scores.reshape(-1) / float(SCORE_QUANTUM),
    })
    t_len = [len(tp[0]) for tp in truth_parts]
    truth = pd.DataFrame({
        "topic": _str_column(topic_ids, np.repeat(np.arange(n_topics), t_len)),
        "doc": _str_column(all_names, np.concatenate([tp[0] + name_off[t] for t, tp in enumerate(truth_parts)])),
        "grade": np.concatenate([tp[1] for tp in truth_parts]).astype(np.int64),
    })
    run_meta = pd.DataFrame({"run": run_names, "group": [gnames[g] for g in run_group],
                             "type": np.where(is_manual, "manual", "automatic"),
                             "pooled": pooled, "quality": quality.astype(float)})
    topics = pd.DataFrame({"topic": topic_ids, "title": titles, "category": cats})
    topic_meta = pd.DataFrame(tmeta, columns=["topic", "num_rel", "difficulty", "n_hard", "n_unfindable",
                                              "n_rel_unretrieved"])
    params = {"n_runs": n_runs, "n_topics": n_topics, "depth": depth, "seed": seed, "grades": list(grades),
              "n_groups": n_groups, "manual_fraction": manual_fraction, "manual_bias": bool(manual_bias),
              "ties": ties, "categories": list(categories),
              "model": {"sigma_group": sigma_group, "sigma_run": sigma_run, "base_b": base_b,
                        "hard_share": hard_share, "hard_penalty": hard_penalty,
                        "unfindable_share": unfindable_share, "manual_rho": manual_rho, "nonrel_per_topic": max(4 * depth, 200)}}
    return Simulation(runs, truth, run_meta, topics, params, topic_meta)


# ----------------------------------------------------------------------------- pools and writing

def depth_pool(sim: Simulation, depth: int | None = 100, runs: list[str] | None = None) -> pd.DataFrame:
    """Judgments (topic, doc, grade) of the union of the top `depth` documents of `runs`
    (default: the runs marked pooled; depth None: everything they retrieved)."""
    if runs is None:
        runs = sim.run_meta.loc[sim.run_meta["pooled"].to_numpy(bool), "run"].tolist()
    r = sim.runs
    sel = r["run"].isin(runs).to_numpy().copy()
    if depth is not None:
        sel &= r["rank"].to_numpy() <= depth
    pool = r.loc[sel, ["topic", "doc"]].drop_duplicates()
    out = pool.merge(sim.truth, on=["topic", "doc"], how="left", validate="one_to_one")
    if out["grade"].isna().any():  # cannot happen: the truth holds every retrieved document
        raise AssertionError("truth misses a retrieved document")
    out["grade"] = out["grade"].astype(np.int64)
    return out.sort_values(["topic", "doc"], kind="mergesort").reset_index(drop=True)


def write_campaign(sim: Simulation, out_dir, name: str | None = None, pool_depth: int | None = 100,
                   *, docs: bool | int = False, text_signal: float | None = None) -> Path:
    """Write `sim` as a campaign directory (runs, topics, pooled judgments, truth, campaign.yaml).

    judgments/qrels.txt is the depth-`pool_depth` pool of the pooled runs judged from the truth;
    truth/ keeps the complete judgments. With `docs`, docs/docs.jsonl gets synthetic text for the
    pooled documents (an int: for the documents of the pool of that depth, e.g. deeper than judged);
    `text_signal` makes that text depend on relevance with a known strength (see `write_docs`), and covers
    the top documents of every run, pooled or not, so that unjudged documents can be predicted.
    """
    from ..formats.qrels import write_qrels
    from ..formats.files import write_text

    out = Path(out_dir)
    fs.makedirs(out)
    p = sim.params
    name = name or f"Simulated campaign ({p['n_runs']} runs, {p['n_topics']} topics, seed {p['seed']})"
    # runs
    for run, grp in sim.runs.groupby("run", sort=False):
        _write_run_fast(out / "runs" / f"{run}.txt", grp, str(run))
    # topics
    tsv = "".join(f"{t}\t{ti}\n" for t, ti in zip(sim.topics["topic"], sim.topics["title"]))
    write_text(out / "topics" / "topics.tsv", tsv)
    # judgments: the pool, judged from the truth
    pool = depth_pool(sim, pool_depth)
    write_qrels(out / "judgments" / "qrels.txt", pool)
    write_qrels(out / "truth" / "qrels.txt", sim.truth)
    meta = sim.run_meta
    runs_yaml = {str(r.run): {"group": str(r.group), "type": str(r.type), "pooled": bool(r.pooled),
                              "file": f"runs/{r.run}.txt"} for r in meta.itertuples()}
    truth_yaml = {
        "params": p,
        "pool": {"strategy": "depth", "depth": pool_depth, "judged": int(len(pool)),
                 "relevant": int((pool["grade"] > p["grades"][0]).sum())},
        "runs": {str(r.run): {"group": str(r.group), "type": str(r.type), "pooled": bool(r.pooled),
                              "quality": round(float(r.quality), 6)} for r in meta.itertuples()},
    }
    if sim.topic_meta is not None:
        truth_yaml["topics"] = {str(r.topic): {"num_rel": int(r.num_rel), "difficulty": round(float(r.difficulty), 6),
                                               "manual_only_rel": int(r.n_hard),
                                               "rel_not_retrieved": int(r.n_rel_unretrieved)}
                                for r in sim.topic_meta.itertuples()}
    write_text(out / "truth" / "truth.yaml", yaml.safe_dump(truth_yaml, sort_keys=False))
    config = {
        "name": name,
        "description": (f"Simulated by `cranfield simulate` (seed {p['seed']}): {p['n_runs']} runs from "
                        f"{p['n_groups']} groups, {p['n_topics']} topics, depth {p['depth']}; judgments are the "
                        f"depth-{pool_depth if pool_depth is not None else 'all'} pool of the pooled runs; "
                        f"complete truth in truth/."),
        "relevance": {"scale": _relevance_labels(tuple(p["grades"])),
                      "binary_threshold": int(p["grades"][1])},
        "evaluation": {"depth": int(p["depth"]), "measures": ["map", "P.10", "ndcg_cut.10", "bpref"]},
        "judgments": {"conflict_rule": "last"},
        "runs": runs_yaml,
        "topics": {"categories": {str(t): str(c) for t, c in zip(sim.topics["topic"], sim.topics["category"]) if c}},
        "pool": {"strategy": "depth", "depth": pool_depth},
    }
    if not config["topics"]["categories"]:
        del config["topics"]
    write_text(out / "campaign.yaml", yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    if docs is not False and docs is not None:
        every = sim.run_meta["run"].tolist() if text_signal is not None else None  # text for every run's top docs
        dpool = (pool if every is None else depth_pool(sim, pool_depth, every)) if docs is True \
            else depth_pool(sim, int(docs), every)
        write_docs(sim, out / "docs" / "docs.jsonl", dpool, text_signal=text_signal)
    return out


def _write_run_fast(path: Path, run: pd.DataFrame, tag: str) -> None:
    """Write one run (already in trec_eval order) as `topic Q0 doc rank score tag` lines."""
    from ..formats.files import write_text

    sc = np.rint(run["score"].to_numpy(np.float64) * SCORE_QUANTUM).astype(np.int64)
    neg = sc < 0
    ip, fp = np.divmod(np.abs(sc), SCORE_QUANTUM)
    ip_s = ip.astype(str).astype(object)
    fp_s = np.char.zfill(fp.astype(str), 6).astype(object)
    sign = np.where(neg, "-", "").astype(object)
    score_s = sign + ip_s + "." + fp_s
    body = (run["topic"].astype(str).to_numpy(object) + " Q0 " + run["doc"].astype(str).to_numpy(object) + " "
            + run["rank"].to_numpy().astype(str).astype(object) + " " + score_s + (" " + tag))
    write_text(path, "\n".join(body.tolist()) + "\n")


def write_docs(sim: Simulation, path, judged: pd.DataFrame | None = None, seed: int | None = None,
               text_signal: float | None = None) -> Path:
    """Write docs.jsonl ({"id","title","text"}) with short synthetic text for the documents in `judged`
    (default: the truth). Relevant documents use the topic's title words more, and more so the higher
    the grade, so the text gives an assessor something to go on.

    With `text_signal` S (0 <= S <= 1) the text follows a known model instead: 40-80 words, 5% of them the
    topic's title words in every document whatever its grade, and in a relevant document a share
    S * 0.3 * (grade - g0) / (gmax - g0) of words from the topic's own 20-word vocabulary. S = 0 is the
    control: text then says nothing about relevance."""
    from ..formats.files import write_text

    judged = sim.truth if judged is None else judged
    rng = np.random.default_rng(sim.params["seed"] + 101 if seed is None else seed)
    vocab = _vocabulary(max(400, 8 * len(sim.topics)) + (20 * len(sim.topics) if text_signal is not None else 0),
                        sim.params["seed"] + 1)
    titles = dict(zip(sim.topics["topic"], sim.topics["title"]))
    g0, gmax = sim.params["grades"][0], sim.params["grades"][-1]
    if text_signal is not None:
        if not 0.0 <= text_signal <= 1.0:
            raise ValueError(f"text_signal must be in [0, 1], got {text_signal}")
        n_gen = len(vocab) - 20 * len(sim.topics)
        general, own = vocab[:n_gen], vocab[n_gen:].reshape(len(sim.topics), 20)
        own_of = dict(zip(sim.topics["topic"], own))
    lines = []
    for topic, doc, grade in zip(judged["topic"], judged["doc"], judged["grade"]):
        qwords = titles[topic].split()
        if text_signal is None:
            n = int(rng.integers(10, 19))
            words = vocab[rng.integers(0, len(vocab), n)].tolist()
            share = 0.04 + 0.12 * max(0, int(grade) - g0)
            # every document mentions a query word or two (that is why it was retrieved)
            k = max(1, int(round(share * n)))
            for pos in rng.choice(n, size=min(k, n), replace=False):
                words[pos] = qwords[int(rng.integers(0, len(qwords)))]
        else:
            n = int(rng.integers(40, 81))
            words = general[rng.integers(0, len(general), n)].tolist()
            q = rng.random(n) < 0.05
            rel_share = text_signal * 0.3 * max(0, int(grade) - g0) / max(gmax - g0, 1)
            t = rng.random(n) < rel_share
            for pos in np.flatnonzero(q):
                words[pos] = qwords[int(rng.integers(0, len(qwords)))]
            ow = own_of[topic]
            for pos in np.flatnonzero(t & ~q):
                words[pos] = ow[int(rng.integers(0, len(ow)))]
        text = " ".join(words).capitalize() + "."
        title = " ".join(words[:3]).title()
        lines.append(json.dumps({"id": doc, "title": title, "text": text}))
    write_text(path, "\n".join(lines) + "\n")
    return Path(path)
