"""Simulated RAG campaigns with a known truth, and a loopback endpoint that answers from that truth.

`simulate_rag` makes topics with true nuggets (vital or okay), passages carrying them, and answer runs
of known quality: each run includes a topic's nugget with probability `recall` (omissions otherwise),
states an included nugget verbatim (truth: support) or paraphrased (truth: partial_support, at the
run's paraphrase rate), cites a passage carrying it or, at the run's wrong-citation rate, one that does
not (truth: not_support), and adds uncited filler sentences. `TruthEndpoint` is an OpenAI-compatible
chat endpoint on 127.0.0.1 that answers the assignment and citation-support prompts of
engine.nuggets.auto from that truth, changing each label to another one with probability `error`.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..formats.files import write_text
from ..util.prompts import read_blocks
from .answers import Answer, Sentence
from .scores import LABELS
from ..util import fs

_SYL = ("ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe", "gu", "ri", "mo", "ta")


@dataclass
class RagSim:
    """A simulated RAG campaign and its truth."""

    params: dict
    topics: pd.DataFrame                     # topic, title
    nuggets: pd.DataFrame                    # topic, nugget, text, importance
    passages: dict[str, str]                 # passage id -> text
    answers: list[Answer]
    truth: pd.DataFrame                      # run, topic, nugget, label
    support: pd.DataFrame                    # run, topic, sentence, doc, label
    quality: pd.DataFrame                    # run, recall, paraphrase, wrong_citation
    phrases: dict = field(default_factory=dict)   # (topic, nugget) -> (verbatim, paraphrase)


def _word(rng) -> str:
    return "".join(rng.choice(_SYL, size=int(rng.integers(2, 4))))


def simulate_rag(n_runs: int = 20, n_topics: int = 30, nuggets: tuple[int, int] = (6, 12), vital: float = 0.4,
                 passages: int = 8, paraphrase: float = 0.2, wrong_citation: float = 0.1, filler: int = 2,
                 recall: tuple[float, float] = (0.2, 0.9), seed: int = 7) -> RagSim:
    """Simulate topics, nuggets, passages and answer runs of known quality (see the module text)."""
    if n_runs < 1 or n_topics < 1 or passages < 2:
        raise CranfieldError("--runs and --topics must be at least 1, passages per topic at least 2")
    for name, v in (("vital", vital), ("paraphrase", paraphrase), ("wrong-citation", wrong_citation)):
        if not 0 <= v <= 1:
            raise CranfieldError(f"--{name} rate must lie in [0, 1], found {v}")
    lo, hi = nuggets
    if not 1 <= lo <= hi:
        raise CranfieldError("nuggets per topic: need 1 <= min <= max")
    rng = np.random.default_rng(seed)
    topics, nug_rows, passage_text, phrases, carriers = [], [], {}, {}, {}
    for ti in range(n_topics):
        t = f"q{ti + 1}"
        k = int(rng.integers(lo, hi + 1))
        imp = np.where(rng.random(k) < vital, "vital", "okay")
        imp[int(rng.integers(0, k))] = "vital"
        subject = _word(rng)
        topics.append((t, f"what about {subject}"))
        docs = [f"{t}-p{j + 1}" for j in range(passages)]
        bodies: dict[str, list[str]] = {d: [] for d in docs}
        for j in range(k):
            n = f"n{j + 1}"
            a, b, c = _word(rng), _word(rng), _word(rng)
            verb = f"{subject} {a} the {b} of {c}"
            para = f"the {b} of {c} is what {subject} {a}s, roughly"
            phrases[(t, n)] = (verb.capitalize() + ".", para.capitalize() + ".")
            nug_rows.append((t, n, verb, str(imp[j])))
            carry = list(rng.choice(docs, size=int(rng.integers(1, 3)), replace=False))
            carriers[(t, n)] = carry
            for d in carry:
                bodies[d].append(phrases[(t, n)][0])
        for d in docs:
            bodies[d].append(f"{_word(rng).capitalize()} {_word(rng)} {_word(rng)}.")
            passage_text[d] = " ".join(rng.permutation(bodies[d]))
    nug = pd.DataFrame(nug_rows, columns=["topic", "nugget", "text", "importance"])
    run_recall = rng.permutation(np.linspace(recall[0], recall[1], n_runs))
    run_para = np.clip(paraphrase + rng.normal(0, 0.05, n_runs), 0, 1)
    run_wrong = np.clip(wrong_citation + rng.normal(0, 0.03, n_runs), 0, 1)
    runs = [f"rag{r + 1:02d}" for r in range(n_runs)]
    answers, truth, support = [], [], []
    by_topic = {t: g for t, g in nug.groupby("topic", sort=False)}
    for r, run in enumerate(runs):
        for t, _ in topics:
            g = by_topic[t]
            docs = [f"{t}-p{j + 1}" for j in range(passages)]
            sents: list[tuple[str, str | None, str]] = []      # text, cited doc, support label
            for n in g["nugget"]:
                if rng.random() >= run_recall[r]:
                    truth.append((run, t, n, "not_support"))
                    continue
                para = rng.random() < run_para[r]
                text = phrases[(t, n)][1 if para else 0]
                label = "partial_support" if para else "support"
                truth.append((run, t, n, label))
                if rng.random() < run_wrong[r]:
                    others = [d for d in docs if d not in carriers[(t, n)]]
                    doc = str(rng.choice(others)) if others else None
                    sup = "not_support"
                else:
                    doc, sup = str(rng.choice(carriers[(t, n)])), label
                sents.append((text, doc, sup))
            for _ in range(filler):
                sents.append((f"{_word(rng).capitalize()} {_word(rng)} {_word(rng)} {_word(rng)}.", None, ""))
            order = rng.permutation(len(sents))
            refs: list[str] = []
            out_s = []
            for i, o in enumerate(order):
                text, doc, sup = sents[o]
                cites: tuple[int, ...] = ()
                if doc is not None:
                    if doc not in refs:
                        refs.append(doc)
                    cites = (refs.index(doc),)
                    support.append((run, t, i, doc, sup))
                out_s.append(Sentence(text, cites))
            answers.append(Answer(run, t, refs, out_s, 0, dict(topics)[t]))
    params = {"runs": n_runs, "topics": n_topics, "nuggets": [lo, hi], "vital": vital, "passages": passages,
              "paraphrase": paraphrase, "wrong_citation": wrong_citation, "filler": filler,
              "recall": list(recall), "seed": seed}
    return RagSim(params, pd.DataFrame(topics, columns=["topic", "title"]), nug, passage_text, answers,
                  pd.DataFrame(truth, columns=["run", "topic", "nugget", "label"]),
                  pd.DataFrame(support, columns=["run", "topic", "sentence", "doc", "label"]),
                  pd.DataFrame({"run": runs, "recall": run_recall, "paraphrase": run_para,
                                "wrong_citation": run_wrong}), phrases)


def answer_line(a: Answer) -> dict:
    """An Answer as one line of the TREC RAG answer format."""
    return {"run_id": a.run, "topic_id": a.topic, "topic": a.query, "references": a.references,
            "response_length": a.words,
            "answer": [{"text": s.text, "citations": list(s.citations)} for s in a.sentences]}


def write_rag_campaign(sim: RagSim, out, name: str | None = None, with_nuggets: bool = True) -> Path:
    """Write the simulation as a campaign: campaign.yaml, topics/, docs/docs.jsonl (the passages),
    answers/RUN.jsonl, truth/ (true assignments, support, run quality, parameters) and, with
    `with_nuggets`, the true nuggets in the nugget store (provenance person, by `simulation`)."""
    import yaml
    from .store import add_nuggets
    out = Path(out)
    p = sim.params
    cfg = {"name": name or f"Simulated RAG campaign ({p['runs']} runs, {p['topics']} topics, seed {p['seed']})",
           "description": "simulated by cranfield simulate --rag; truth/ holds the true assignments",
           "answers": {"max_words": 400}}
    write_text(out / "campaign.yaml", yaml.safe_dump(cfg, sort_keys=False))
    write_text(out / "topics" / "topics.tsv", "".join(f"{t}\t{ti}\n" for t, ti in sim.topics.itertuples(index=False)))
    write_text(out / "docs" / "docs.jsonl", "".join(json.dumps({"id": d, "title": "", "text": x}) + "\n"
                                                    for d, x in sim.passages.items()))
    by_run: dict[str, list[str]] = {}
    for a in sim.answers:
        by_run.setdefault(a.run, []).append(json.dumps(answer_line(a)) + "\n")
    for run, lines in by_run.items():
        write_text(out / "answers" / f"{run}.jsonl", "".join(lines))
    write_text(out / "truth" / "nuggets.tsv", sim.nuggets.to_csv(sep="\t", index=False))
    write_text(out / "truth" / "assignments.tsv", sim.truth.to_csv(sep="\t", index=False))
    write_text(out / "truth" / "support.tsv", sim.support.to_csv(sep="\t", index=False))
    write_text(out / "truth" / "runs.tsv", sim.quality.to_csv(sep="\t", index=False, float_format="%.6f"))
    write_text(out / "truth" / "rag.yaml", yaml.safe_dump(p, sort_keys=False))
    if with_nuggets:
        for t, g in sim.nuggets.groupby("topic", sort=False):
            add_nuggets(out, t, list(zip(g["text"], g["importance"])), by="simulation")
    return out


def read_truth(root) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(true assignments, true support labels, run quality) from a simulated campaign's truth/."""
    d = Path(root) / "truth"
    if not fs.is_file(d / "assignments.tsv"):
        raise CranfieldError(f"{d}: no assignments.tsv; this is not a simulated RAG campaign "
                             f"(cranfield simulate --rag)")
    sup = _read_tsv(d / "support.tsv")
    sup["sentence"] = sup["sentence"].astype(np.int64)
    with fs.open(d / "runs.tsv", "rb") as fh:
        quality = pd.read_csv(fh, sep="\t")
    return _read_tsv(d / "assignments.tsv"), sup, quality


def _read_tsv(path) -> pd.DataFrame:
    """A truth TSV as strings (through the anchored open)."""
    with fs.open(path, "rb") as fh:
        return pd.read_csv(fh, sep="\t", dtype=str, keep_default_na=False)


# ---------------------------------------------------------------------------- the truth endpoint

class TruthEndpoint:
    """A loopback chat-completions endpoint answering nugget-assignment and citation-support prompts
    from the truth, each label changed to another with probability `error` (deterministic per item)."""

    def __init__(self, sim_or_root, error: float = 0.1, seed: int = 0):
        if isinstance(sim_or_root, RagSim):
            truth, sup, nug = sim_or_root.truth, sim_or_root.support, sim_or_root.nuggets
            answers, passages = sim_or_root.answers, sim_or_root.passages
        else:
            from .campaign import campaign_answers
            root = Path(sim_or_root)
            truth, sup, _ = read_truth(root)
            nug = _read_tsv(root / "truth" / "nuggets.tsv")
            answers = campaign_answers(root)
            from ..judging.auto import read_docs
            passages = {d: r.get("text", "") for d, r in read_docs(root).items()}
        text_of = {(t, n): x for t, n, x in zip(nug["topic"], nug["nugget"], nug["text"])}
        ans_text = {(a.run, a.topic): a.text for a in answers}
        self.assign = {(ans_text[(r, t)], text_of[(t, n)]): lab
                       for r, t, n, lab in zip(truth["run"], truth["topic"], truth["nugget"], truth["label"])
                       if (r, t) in ans_text}
        sent_text = {(a.run, a.topic, i): s.text for a in answers for i, s in enumerate(a.sentences)}
        self.support = {(sent_text[(r, t, int(i))], passages.get(d, "")): lab
                        for r, t, i, d, lab in zip(sup["run"], sup["topic"], sup["sentence"], sup["doc"], sup["label"])}
        self.importance = dict(zip(nug["text"], nug["importance"]))
        self.verbatim = [(x, x.capitalize() + ".") for x in nug["text"]]
        self.error, self.seed = float(error), int(seed)
        self.calls = 0
        self.prompt_chars = 0
        self.unknown = 0
        self.lock = threading.Lock()
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                prompt = body["messages"][0]["content"]
                labels = outer.answer(prompt)
                out = json.dumps({"choices": [{"message": {"content": json.dumps(labels)}}],
                                  "usage": {"prompt_tokens": (len(prompt) + 3) // 4,
                                            "completion_tokens": 6 * len(labels)}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _create(self, prompt: str) -> list[str]:
        """The nuggets so far plus every true nugget stated verbatim in the passages (in order)."""
        found = read_blocks(prompt, "nugget")
        passages = "\n".join(read_blocks(prompt, "passage"))
        for text, verbatim in self.verbatim:
            if verbatim in passages and text not in found:
                found.append(text)
        return found

    def _noisy(self, label: str | None, key: str) -> str:
        if label is None:
            with self.lock:
                self.unknown += 1
            label = "not_support"
        h = int(hashlib.sha256(f"{self.seed}\x00{key}".encode()).hexdigest()[:12], 16)
        u = (h % 1_000_000) / 1_000_000
        if u < self.error:
            others = [x for x in LABELS if x != label]
            return others[(h // 1_000_000) % 2]
        return label

    def answer(self, prompt: str) -> list[str]:
        """The labels for one prompt of engine.nuggets.auto."""
        with self.lock:
            self.calls += 1
            self.prompt_chars += len(prompt)
        if prompt.startswith("Update a list of nuggets"):
            return self._create(prompt)
        if prompt.startswith("Label each nugget vital"):
            out = []
            for text in read_blocks(prompt, "nugget"):
                imp = self.importance.get(text, "okay")
                h = int(hashlib.sha256(f"{self.seed}\x00imp\x00{text}".encode()).hexdigest()[:12], 16)
                if (h % 1_000_000) / 1_000_000 < self.error:
                    imp = "okay" if imp == "vital" else "vital"
                out.append(imp)
            return out
        if prompt.startswith("Does the passage support the sentence?"):
            sent, passage = read_blocks(prompt, "sentence")[0], read_blocks(prompt, "passage")[0]
            return [self._noisy(self.support.get((sent, passage)), sent + "\x00" + passage)]
        ans = read_blocks(prompt, "answer")[0]
        return [self._noisy(self.assign.get((ans, text)), ans + "\x00" + text)
                for text in read_blocks(prompt, "nugget")]

    def __enter__(self) -> "TruthEndpoint":
        self.thread.start()
        return self

    def __exit__(self, *a) -> None:
        self.server.shutdown()
        self.server.server_close()


def import_truth(root, source: str = "truth") -> int:
    """Write a simulated campaign's true assignments and support labels as sources `source` (kind
    `truth`), so they compare with other sources like a person's."""
    from .store import assign, record_support
    truth, sup, _ = read_truth(root)
    n = assign(root, source, list(truth[["run", "topic", "nugget", "label"]].itertuples(index=False, name=None)),
               kind="truth")
    record_support(root, source, list(sup[["run", "topic", "sentence", "doc", "label"]]
                                      .itertuples(index=False, name=None)), kind="truth")
    return n
