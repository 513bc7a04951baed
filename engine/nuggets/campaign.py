"""A campaign's answer runs, nugget leaderboard, citation support and human-vs-automatic agreement."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import CranfieldError, FormatError, Problem, Warnings
from ..judgments.agreement import cohen_kappa
from ..stability.correlation import kendall_tau
from ..util.confine import allowed_roots, refuse_outside
from ..util.names import natural_key, natural_sorted
from .answers import Answer, answers_dir, read_answers
from .scores import LABELS, MEASURES, citation_rows, run_scores, score_table, support_table
from .store import current_nuggets, read_assignments, read_support
from ..util import fs


def answer_files(root) -> list[Path]:
    """answers/*.jsonl and *.jsonl.gz (hidden files skipped), each confined to the campaign."""
    d = answers_dir(root)
    if not fs.is_dir(d):
        return []
    roots = allowed_roots(Path(root), {})[:1]     # the campaign directory only, as before person roots
    files = sorted(p for p in fs.glob(d) if not p.name.startswith(".")
                   and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz")))
    for p in files:
        refuse_outside(p, roots, str(d), "answer run")
    return files


def campaign_answers(root, warnings: Warnings | None = None) -> list[Answer]:
    """Every answer of every answer run; a run found in two files is an error naming both."""
    out: list[Answer] = []
    where: dict[str, str] = {}
    for p in answer_files(root):
        run = read_answers(p, warnings)
        for r in run.runs:
            if r in where:
                raise FormatError(Problem(str(p), None, f"run {r} is also in {where[r]}"),
                                  hint="keep each answer run in one file")
            where[r] = str(p)
        out.extend(run.answers)
    return out


def answer_runs(root, warnings: Warnings | None = None) -> pd.DataFrame:
    """Per answer run: run, file (under answers/), topics answered; in natural order of run ids."""
    rows = {}
    for a in campaign_answers(root, warnings):
        r = rows.setdefault(a.run, [Path(a.path).name if a.path else "", set()])
        r[1].add(a.topic)
    return pd.DataFrame([(run, f, len(t)) for run, (f, t) in sorted(rows.items(), key=lambda kv: natural_key(kv[0]))],
                        columns=["run", "file", "topics"])


def answer_frame(answers: list[Answer]) -> pd.DataFrame:
    return pd.DataFrame([(a.run, a.topic) for a in answers], columns=["run", "topic"])


def per_topic_scores(root, source: str, warnings: Warnings | None = None,
                     answers: list[Answer] | None = None) -> pd.DataFrame:
    """Nugget scores per (run, topic) from one assignment source."""
    w = warnings if warnings is not None else Warnings()
    ans = answers if answers is not None else campaign_answers(root, w)
    nug = current_nuggets(root, warnings=w)
    if not len(nug):
        raise CranfieldError(f"{Path(root) / 'nuggets'}: no nuggets yet; add some (cranfield nuggets add) first")
    return score_table(nug, read_assignments(root, source, w), answer_frame(ans), w, f"assignments {source}")


def leaderboard(root, source: str, warnings: Warnings | None = None, support_source: str | None = None,
                answers: list[Answer] | None = None) -> pd.DataFrame:
    """Per run: the nugget measures averaged over the topics that have nuggets (a topic a run did not
    answer scores 0), best first by `all`; with `support_source`, citation support too."""
    w = warnings if warnings is not None else Warnings()
    ans = answers if answers is not None else campaign_answers(root, w)
    pt = per_topic_scores(root, source, w, ans)
    topics = natural_sorted(set(current_nuggets(root)["topic"]))
    order = ("all",) + tuple(m for m in MEASURES if m != "all")
    board = run_scores(pt, topics, order)
    if support_source:
        st = support_table(citation_rows(ans), read_support(root, support_source, w), w,
                           f"support {support_source}")
        m = run_scores(st, topics, ("support_precision", "support_recall")).drop(columns="topics")
        board = board.merge(m, on="run", how="left")
    return board


@dataclass
class SourceAgreement:
    """Human (or reference) assignments against another source's."""

    pairs: int
    kappa: float
    accuracy: float
    tau: float
    measure: str
    runs: int
    per_topic: pd.DataFrame | None = None     # topic, pairs, kappa, accuracy (lowest kappa first)


def agreement(root, reference: str, other: str, measure: str = "all",
              warnings: Warnings | None = None) -> SourceAgreement:
    """Cohen's kappa over the (run, topic, nugget) both sources assigned, and Kendall's tau between
    the runs' mean `measure` by each source."""
    w = warnings if warnings is not None else Warnings()
    a, b = read_assignments(root, reference, w), read_assignments(root, other, w)
    both = a.merge(b, on=["run", "topic", "nugget"], suffixes=("_a", "_b"))
    idx = {x: i for i, x in enumerate(LABELS)}
    ka = cohen_kappa(both["label_a"].map(idx).to_numpy(), both["label_b"].map(idx).to_numpy(),
                     labels=[0, 1, 2]) if len(both) else float("nan")
    acc = float((both["label_a"] == both["label_b"]).mean()) if len(both) else float("nan")
    ans = campaign_answers(root, w)
    la = leaderboard(root, reference, w, answers=ans).set_index("run")[measure]
    lb = leaderboard(root, other, w, answers=ans).set_index("run")[measure].reindex(la.index)
    tau = kendall_tau(la.to_numpy(float), lb.to_numpy(float))
    rows = []
    for t, g in both.groupby("topic", sort=True):
        k = cohen_kappa(g["label_a"].map(idx).to_numpy(), g["label_b"].map(idx).to_numpy(), labels=[0, 1, 2])
        rows.append((t, len(g), k, float((g["label_a"] == g["label_b"]).mean())))
    per = pd.DataFrame(rows, columns=["topic", "pairs", "kappa", "accuracy"]).sort_values(
        ["kappa", "topic"], kind="mergesort", na_position="first").reset_index(drop=True)
    return SourceAgreement(len(both), ka, acc, float(tau), measure, len(la), per)


def assessor_seconds(root, source: str) -> dict:
    """Assessor time from a source's log: assignments, those with a time, mean and total seconds."""
    a = read_assignments(root, source)
    s = a["seconds"].dropna()
    return {"assignments": len(a), "timed": len(s), "mean_seconds": float(s.mean()) if len(s) else float("nan"),
            "total_seconds": float(s.sum())}


def time_model(root, source: str, warnings: Warnings | None = None) -> dict:
    """Assessor time for nugget creation and assignment, measured from the logs, and the projection of
    the assignment work left: remaining (answer, nugget) pairs x mean seconds per timed assignment.
    Creation: nuggets people made (create, merge and split operations with `seconds`) per topic."""
    from .store import nugget_log
    w = warnings if warnings is not None else Warnings()
    ops = [r for r in nugget_log(root, w) if r.get("provenance", "person") == "person"
           and r["op"] in ("create", "merge", "split")]
    made = [float(r["seconds"]) for r in ops if isinstance(r.get("seconds"), (int, float))]
    nug = current_nuggets(root, warnings=w)
    ans = answer_frame(campaign_answers(root, w))
    per_topic = nug.groupby("topic").size()
    pairs = int(ans["topic"].map(per_topic).fillna(0).sum())
    a = assessor_seconds(root, source)
    done = a["assignments"]
    remaining = max(0, pairs - done)
    mean_a = a["mean_seconds"]
    return {"nugget_ops": len(ops), "nugget_ops_timed": len(made),
            "seconds_per_nugget": sum(made) / len(made) if made else float("nan"),
            "topics_with_nuggets": int(len(per_topic)),
            "pairs": pairs, "assigned": done, "remaining": remaining, "timed": a["timed"],
            "seconds_per_assignment": mean_a,
            "hours_spent": (a["total_seconds"] + sum(made)) / 3600,
            "hours_to_finish": remaining * mean_a / 3600 if a["timed"] else float("nan")}


def score_matrix(root, source: str, measure: str = "all", warnings: Warnings | None = None) -> pd.DataFrame:
    """Topics x runs matrix of one nugget measure (topics with nuggets; an unanswered topic scores 0),
    the input of the significance tests and the G-study (engine.stability)."""
    if measure not in MEASURES:
        raise CranfieldError(f"nugget measure {measure!r}: use one of {', '.join(MEASURES)}")
    w = warnings if warnings is not None else Warnings()
    ans = campaign_answers(root, w)
    pt = per_topic_scores(root, source, w, ans)
    topics = sorted(set(current_nuggets(root)["topic"]))
    runs = sorted({a.run for a in ans})
    m = pt.pivot(index="topic", columns="run", values=measure)
    return m.reindex(index=topics, columns=runs).fillna(0.0)


def significance(root, source: str, measure: str = "all", tests=("t", "randomization"), n_perm: int = 10000,
                 alpha: float = 0.05, seed: int = 0, warnings: Warnings | None = None) -> pd.DataFrame:
    """Every pair of answer runs on a nugget measure: engine.stability.significance.pairwise."""
    from ..stability.significance import pairwise
    return pairwise(score_matrix(root, source, measure, warnings), tests, n_perm=n_perm, alpha=alpha, seed=seed)


def g_study_report(root, source: str, measure: str = "all", warnings: Warnings | None = None) -> dict:
    """The G- and D-study of a nugget measure over topics x answer runs (engine.stability.gtheory)."""
    from ..stability.gtheory import g_study, gstudy_report
    return gstudy_report(g_study(score_matrix(root, source, measure, warnings)))


def topic_passages(root, how: str = "cited", warnings: Warnings | None = None) -> tuple[dict, dict]:
    """(topic -> passage texts, topic -> question) for nugget creation: the passages the answer runs
    cite (`cited`, in order of first citation) or the judged relevant ones (`judged`: grade >= the
    campaign's binary threshold), texts from docs/docs.jsonl."""
    from ..judging.auto import read_docs
    w = warnings if warnings is not None else Warnings()
    docs = read_docs(root)
    if not docs:
        raise CranfieldError(f"{Path(root) / 'docs' / 'docs.jsonl'}: no passage texts; nuggets are made from them")
    ids: dict[str, list[str]] = {}
    queries: dict[str, str] = {}
    if how == "cited":
        for a in campaign_answers(root, w):
            lst = ids.setdefault(a.topic, [])
            queries.setdefault(a.topic, a.query)
            for s in a.sentences:
                for c in s.citations:
                    if a.references[c] not in lst:
                        lst.append(a.references[c])
    elif how == "judged":
        from ..campaign.campaign import load_campaign
        camp = load_campaign(root, warnings=w)
        q = camp.qrels()
        thr = int(camp.config["relevance"]["binary_threshold"])
        rel = q[q["grade"] >= thr]
        for t, d in zip(rel["topic"].astype(str), rel["doc"].astype(str)):
            ids.setdefault(t, []).append(d)
        tt = camp.topics()
        if len(tt):
            queries = dict(zip(tt["topic"].astype(str), tt["title"].astype(str)))
    else:
        raise CranfieldError(f"passages {how!r}: use cited or judged")
    missing = sum(d not in docs for lst in ids.values() for d in lst)
    if missing:
        w.add(str(Path(root) / "docs" / "docs.jsonl"), None, f"{missing} passage(s) have no text and are left out")
    out = {t: [f"{docs[d].get('title', '')} {docs[d].get('text', '')}".strip() for d in lst if d in docs]
           for t, lst in ids.items()}
    return {t: v for t, v in out.items() if v}, queries
