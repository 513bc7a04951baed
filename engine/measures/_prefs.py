"""Shared counts of the preference measures (trec_eval's form_prefs_counts), cached per Ranked."""
from __future__ import annotations

import numpy as np

from .registry import MeasureError

PAIR_KINDS = ("all", "ret", "imp")


def _pair_scores(groups, rank_of: dict) -> dict[str, list[float]]:
    """Per document pair judged by any group: fulfilled preferences / stated preferences."""
    docs = sorted({d for jg in groups for d in jg.docs})
    idx = {d: i for i, d in enumerate(docs)}
    n = len(docs)
    c = np.zeros((n, n), dtype=np.int64)
    for jg in groups:
        ii = np.array([idx[d] for d in jg.docs], dtype=np.int64)
        c[np.ix_(ii, ii)] += jg.pref
    big = np.iinfo(np.int64).max
    rank = np.array([rank_of.get(d, big) for d in docs], dtype=np.int64)
    ret = rank < big
    before = rank[:, None] < rank[None, :]          # i retrieved and above j (or j not retrieved)
    iu, ju = np.triu_indices(n, 1)
    tot = c[iu, ju] + c[ju, iu]
    keep = tot > 0
    iu, ju, tot = iu[keep], ju[keep], tot[keep]
    ful = c[iu, ju] * before[iu, ju] + c[ju, iu] * before[ju, iu]
    score = ful / tot
    nret = ret[iu].astype(int) + ret[ju]
    return {"all": score, "ret": score[nret == 2], "imp": score[nret >= 1]}


def prefs_stats(r) -> list[dict]:
    """Per (run, topic) group: {'jgs': [counts per judgment group], 'pairs': pair scores}."""
    cached = r.caches.get("prefs")
    if cached is not None:
        return cached
    from ..formats.prefs import group_counts
    extra = getattr(r, "extra", None) or {}
    groups = extra.get("prefs_groups")
    if groups is None:
        # ordinary judgments: the preferences they imply (trec_eval's -R qrels_prefs)
        q = getattr(r, "qrels", None)
        if q is None:
            raise MeasureError("preference measures need judgments: use -R prefs or -R qrels_prefs")
        from ..formats.prefs import prefs_from_qrels, topic_groups
        groups = topic_groups(prefs_from_qrels(q))
    out = []
    for g in range(r.n_groups):
        topic = r.topic_names[r.g_topic[g]]
        a, b = int(r.offsets[g]), int(r.offsets[g + 1])
        docs, score = r.doc[a:b], r.score[a:b]
        # trec_eval's form_prefs_counts breaks score ties by ascending docno (form_res_rels: descending)
        order = sorted(range(b - a), key=lambda i: (-score[i], docs[i]))
        rank_of = {docs[i]: k for k, i in enumerate(order)}
        tg = groups.get(topic, [])
        out.append({"jgs": [group_counts(jg, rank_of) for jg in tg], "pairs": _pair_scores(tg, rank_of),
                    "groups": tg, "rank_of": rank_of})
    r.caches["prefs"] = out
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def ful_poss(c: dict, kind: str) -> tuple[int, int]:
    """Fulfilled and possible preferences of one group's counts for all / ret / imp."""
    if kind == "ret":
        return c["ful_ret"], c["poss_ret"]
    if kind == "imp":
        return c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"]
    return c["ful_ret"] + c["ful_imp"], c["poss_ret"] + c["poss_imp"] + c["notoccur"]


def simp(r, kind: str) -> np.ndarray:
    """Preferences fulfilled / possible, summed over judgment groups."""
    out = np.zeros(r.n_groups)
    for g, s in enumerate(prefs_stats(r)):
        fp = [ful_poss(c, kind) for c in s["jgs"]]
        out[g] = _ratio(sum(f for f, _ in fp), sum(p for _, p in fp))
    return out


def pair(r, kind: str) -> np.ndarray:
    """Mean over judged document pairs of the fraction of their preferences fulfilled."""
    out = np.zeros(r.n_groups)
    for g, s in enumerate(prefs_stats(r)):
        v = s["pairs"][kind]
        out[g] = float(np.add.accumulate(v)[-1] / len(v)) if len(v) else 0.0
    return out


def avgjg(r, kind: str) -> np.ndarray:
    """Fulfilled / possible within each judgment group, averaged over the groups."""
    out = np.zeros(r.n_groups)
    for g, s in enumerate(prefs_stats(r)):
        if s["jgs"]:
            out[g] = sum(_ratio(*ful_poss(c, kind)) for c in s["jgs"]) / len(s["jgs"])
    return out


def count(r, field: str) -> np.ndarray:
    """A preference count summed over judgment groups."""
    out = np.zeros(r.n_groups)
    for g, s in enumerate(prefs_stats(r)):
        if field == "ful":
            out[g] = sum(ful_poss(c, "all")[0] for c in s["jgs"])
        elif field == "poss":
            out[g] = sum(ful_poss(c, "all")[1] for c in s["jgs"])
        else:
            out[g] = sum(c[field] for c in s["jgs"])
    return out


def _docid_ranks(jg, rank_of: dict) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's docid ranks of a group's documents: retrieved ones by rank, then the others by docno
    (`jg.docs` is sorted), and whether each was retrieved."""
    rank = np.array([rank_of.get(d, -1) for d in jg.docs], dtype=np.int64)
    ret = rank >= 0
    return np.where(ret, rank, len(rank_of) + np.arange(len(rank))), ret


def _rnonrel_ec(jg, dr: np.ndarray, ret: np.ndarray, k: int, ret_only: bool) -> tuple[int, int]:
    """Recount of a one-subgroup group keeping k documents of its lowest level (trec_eval's recalculate):
    pairs of higher levels, plus every document (the lowest level's own included, as trec_eval counts
    them) against the first k lowest-level documents in rank order; `ret_only` drops unretrieved ones."""
    ec = np.unique(-jg.level, return_inverse=True)[1].ravel()      # 0 = highest level
    last = ec.max()
    if ret_only:
        dr, ec, ret = dr[ret], ec[ret], ret[ret]
    low = np.flatnonzero(ec == last)
    kept = low[np.argsort(dr[low], kind="stable")[:k]]
    m = (ec[:, None] < ec[None, :]) & (ec[None, :] < last)
    m[:, kept] = True
    ful = m & (dr[:, None] < dr[None, :]) & ret[:, None]
    return int(ful.sum()), int(m.sum())


def _rnonrel_pa(jg, rank_of: dict, dr: np.ndarray, ret: np.ndarray, num_rel: int,
                ret_only: bool) -> tuple[int, int]:
    """Recount of a several-subgroup group keeping only its first num_rel level-0 documents in rank order
    (for `ret_only`, the first num_rel retrieved ones)."""
    from ..formats.prefs import JudgmentGroup, group_counts
    zero = np.flatnonzero((jg.level == 0) & (ret if ret_only else True))
    keep = np.ones(len(dr), dtype=bool)
    keep[zero[np.argsort(dr[zero], kind="stable")[num_rel:]]] = False
    sub = JudgmentGroup(jg.docs[keep], jg.pref[np.ix_(keep, keep)], jg.level[keep], False)
    return ful_poss(group_counts(sub, rank_of), "ret" if ret_only else "all")


def rnonrel(r, ret_only: bool) -> np.ndarray:
    """prefs_avgjg with each group's non-relevant count set to its relevant count R (trec_eval's
    prefs_avgjg_Rnonrel; `ret_only`: retrieved documents only, prefs_avgjg_Rnonrel_ret). With N <= R
    non-relevant documents, R * (R - N) preferences are added, fulfilled for each retrieved relevant
    document; with N > R the counts are formed again over the first R non-relevant documents."""
    out = np.zeros(r.n_groups)
    for g, s in enumerate(prefs_stats(r)):
        total = 0.0
        for jg, c in zip(s["groups"], s["jgs"]):
            dr, ret = _docid_ranks(jg, s["rank_of"])
            rel = jg.level > 0
            nonrel = (jg.level <= 0) if jg.single else (jg.level == 0)
            num_rel, num_rel_ret = int(rel.sum()), int((rel & ret).sum())
            if ret_only:
                big_r, big_n = num_rel_ret, int((nonrel & ret).sum())
            else:
                big_r, big_n = num_rel, int(nonrel.sum())
            if big_r >= big_n:
                ful, poss = ful_poss(c, "ret" if ret_only else "all")
                ful += num_rel_ret * (big_r - big_n)
                poss += num_rel * (big_r - big_n)
            elif jg.single:
                ful, poss = _rnonrel_ec(jg, dr, ret, num_rel_ret if ret_only else num_rel, ret_only)
            else:
                ful, poss = _rnonrel_pa(jg, s["rank_of"], dr, ret, num_rel, ret_only)
            # trec_eval divides 0 by 0 here: the NaN makes the topic's value 0 (below)
            total += ful / poss if poss else float("nan")
        if total > 0.0:
            out[g] = total / len(s["jgs"])
    return out
