"""Document store, relevance classifiers and completion (Buettcher et al. 2007; issue 18)."""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from engine.documents.store import DocStore, iter_documents
from engine.errors import FormatError
from engine.documents.text import Background, balanced_threshold, tokenize
from engine.completion.kld import KLDClassifier
from engine.completion.predict import complete, fill_holes, unjudged_within_depth


SGML = """<DOC>
<DOCNO> FT911-1 </DOCNO>
<HEADLINE>Budget talks stall</HEADLINE>
<TEXT>
The budget <B>talks</B> stalled again.
</TEXT>
</DOC>
<DOC><DOCNO>FT911-2</DOCNO><TEXT>Second document.</TEXT></DOC>
"""


def test_trec_sgml_and_jsonl_import(tmp_path):
    sg = tmp_path / "a.sgml.gz"
    sg.write_bytes(gzip.compress(SGML.encode()))
    js = tmp_path / "b.jsonl"
    js.write_text('{"id": "J1", "title": "T", "text": "jsonl text"}\n\n{"docno": "J2", "contents": "c"}\n')
    st = DocStore.open(tmp_path / "docs.sqlite", create=True)
    assert st.import_file(sg) == 2 and st.import_file(js) == 2
    assert len(st) == 4
    d = st.get("FT911-1")
    assert d.title == "Budget talks stall" and d.text == "The budget talks stalled again."
    assert st.get("FT911-2").text == "Second document." and st.get("J2").text == "c"
    assert st.get("nope") is None and "J1" in st
    assert set(st.get_many(["J1", "x", "FT911-2"])) == {"J1", "FT911-2"}


@pytest.mark.parametrize("text,line,what", [
    ("<DOC>\n<DOCNO>a</DOCNO>\n<DOC>\n", 3, "opened again"),
    ("<DOC>\n<TEXT>x</TEXT>\n</DOC>\n", 1, "without a <DOCNO>"),
    ("<DOC>\n<DOCNO>a</DOCNO>\n", 1, "never closed"),
    ("junk\n", 1, "outside a <DOC>"),
    ("</DOC>\n", 1, "without an opening"),
    ("<DOC>\n<DOCNO>a b</DOCNO>\n</DOC>\n", 1, "white space"),
])
def test_trec_sgml_errors_name_file_and_line(tmp_path, text, line, what):
    p = tmp_path / "bad.trec"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        list(iter_documents(p))
    assert e.value.problems[0].line == line and what in str(e.value) and "bad.trec" in str(e.value)


@pytest.mark.parametrize("text,line,what", [
    ('{"id": "a", "text": "x"}\n{"id": \n', 2, "not valid JSON"),
    ('[1, 2]\n', 1, "expected a JSON object"),
    ('{"text": "x"}\n', 1, "no document id"),
    ('{"id": "a", "text": 3}\n', 1, "must be strings"),
    ('{"id": "a"}\n' + "[" * 100000 + "\n", 2, "nested deeper"),
])
def test_jsonl_errors_name_file_and_line(tmp_path, text, line, what):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        list(iter_documents(p))
    assert e.value.problems[0].line == line and what in str(e.value)


def test_failed_import_leaves_store_unchanged(tmp_path):
    st = DocStore.open(tmp_path / "d.sqlite", create=True)
    good = tmp_path / "g.jsonl"
    good.write_text('{"id": "a", "text": "x"}\n')
    st.import_file(good)
    bad = tmp_path / "b.jsonl"
    bad.write_text("".join(f'{{"id": "n{i}", "text": "y"}}\n' for i in range(12000)) + "oops\n")
    with pytest.raises(FormatError):
        st.import_file(bad)
    assert len(st) == 1 and st.get("n1") is None


def _texts():
    rel = ["apple banana apple cherry", "apple apple banana", "banana apple date", "apple cherry apple apple"]
    non = ["zebra yak xylophone", "zebra apple wolf", "yak wolf vole", "xylophone vole zebra zebra",
           "wolf yak banana", "vole zebra"]
    return rel + non, np.array([1] * len(rel) + [0] * len(non), bool)


def test_kld_hand_computed_and_threshold_gives_precision_equal_recall():
    texts, y = _texts()
    bg = Background.from_texts(texts)
    clf = KLDClassifier(bg).fit(texts, y)
    # hand computation of KLD(M_D, M_R) for the first document over the whole vocabulary
    vocab = sorted({w for t in texts for w in tokenize(t)})
    allw = [w for t in texts for w in tokenize(t)]
    pc = {w: allw.count(w) / len(allw) for w in vocab}
    relw = [w for t, r in zip(texts, y) if r for w in tokenize(t)]
    pr = {w: 0.8 * relw.count(w) / len(relw) + 0.2 * pc[w] for w in vocab}
    dw = tokenize(texts[0])
    pd_ = {w: 0.8 * dw.count(w) / len(dw) + 0.2 * pc[w] for w in vocab}
    want = sum(pd_[w] * np.log(pd_[w] / pr[w]) for w in vocab)
    assert clf.score([texts[0]])[0] == pytest.approx(want, rel=1e-12)
    s = clf.score(texts)
    pred = s < clf.threshold
    assert pred.sum() == y.sum()                     # exactly |R| below the threshold
    tp = (pred & y).sum()
    assert tp / pred.sum() == tp / y.sum()           # precision = recall
    p = clf.predict_proba(texts)
    assert np.all((p >= 0) & (p <= 1)) and p[y].mean() > p[~y].mean()


def test_balanced_threshold_with_few_relevant():
    s = np.array([0.1, 0.5, 0.3, 0.9])
    y = np.array([0, 1, 0, 0], bool)
    th = balanced_threshold(s, y, lower_is_relevant=True)
    assert (s < th).sum() == 1 and th == pytest.approx(0.2)
    assert balanced_threshold(s, np.zeros(4, bool), lower_is_relevant=True) == -np.inf


def test_svm_equals_sklearn_on_the_same_vectors():
    pytest.importorskip("sklearn")
    from sklearn.svm import SVC
    from engine.completion.svm import SVMClassifier, svmlight_c

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    texts = [" ".join(rng.choice(words[:30] if i % 3 == 0 else words[20:], 25)) for i in range(60)]
    y = np.array([i % 3 == 0 for i in range(60)])
    bg = Background.from_texts(texts)
    clf = SVMClassifier(bg, max_terms=40).fit(texts[:40], y[:40])
    x = clf.vectors(texts)
    assert x.shape[1] == 40 and np.allclose(np.asarray(abs(x).sum(axis=1)).ravel(), 1.0)
    ref = SVC(kernel="linear", C=svmlight_c(x[:40])).fit(x[:40], y[:40])
    assert np.array_equal(clf.predict(texts[40:]), ref.predict(x[40:]))
    assert np.allclose(clf.decision_function(texts[40:]), ref.decision_function(x[40:]))
    # TF-IDF by hand for one document: f x log(N / df), L1-normalized, top-40 vocabulary only
    toks = tokenize(texts[5])
    top = sorted(bg.index, key=lambda w: bg.index[w])[:40]
    v = {w: toks.count(w) * np.log(bg.ndocs / bg.df[bg.index[w]]) for w in set(toks) if w in top}
    norm = sum(abs(a) for a in v.values())
    row = x[5].toarray().ravel()
    for w, a in v.items():
        assert row[bg.index[w]] == pytest.approx(a / norm)


def test_completion_predicts_only_unjudged_within_depth():
    texts, y = _texts()
    st = DocStore.memory()
    from engine.documents.store import Document
    docs = [f"d{i}" for i in range(len(texts))] + ["n1", "n2", "deep"]
    extra = ["apple banana apple", "zebra wolf yak", "apple apple apple"]
    st.import_documents(((i, Document(d, "", t)) for i, (d, t) in enumerate(zip(docs, texts + extra))))
    qrels = pd.DataFrame({"topic": "1", "doc": docs[:10], "grade": y.astype(int) * 2})
    runs = pd.DataFrame({"run": "r", "topic": "1", "doc": ["n1", "d0", "n2", "deep"], "score": [4.0, 3, 2, 1]})
    cand = unjudged_within_depth(qrels, runs, depth=3)
    assert cand["doc"].tolist() == ["n1", "n2"]
    comp = complete(qrels, cand, st, classifier="kld", rel_level=1, grades=(0, 1), depth=3)
    got = dict(zip(comp.predictions["doc"], comp.predictions["grade"]))
    assert got == {"n1": 1, "n2": 0}
    assert comp.topics.loc[0, "n_train"] == 10 and comp.topics.loc[0, "n_rel"] == 4
    filled = fill_holes(qrels, comp.predictions)
    assert len(filled) == 12 and set(filled.loc[filled["source"] == "predicted", "doc"]) == {"n1", "n2"}


def test_expected_precision_and_ap_hand_computed():
    from engine.completion.expected import expected_measures, relevance_probabilities

    qrels = pd.DataFrame({"topic": ["1", "1", "1"], "doc": ["a", "b", "z"], "grade": [1, 0, 1]})
    pred = pd.DataFrame({"topic": ["1", "1"], "doc": ["c", "b"], "prob": [0.5, 0.9]})  # b is judged: ignored
    probs = relevance_probabilities(qrels, pred)
    assert dict(zip(probs["doc"], probs["prob"])) == {"a": 1.0, "b": 0.0, "z": 1.0, "c": 0.5}
    runs = pd.DataFrame({"run": "r", "topic": "1", "doc": ["c", "a", "b", "x"], "score": [4.0, 3, 2, 1]})
    ev = expected_measures(runs, probs, cutoffs=(2, 4)).set_index("measure")["value"]
    assert ev["eP_2"] == pytest.approx((0.5 + 1.0) / 2)
    assert ev["eP_4"] == pytest.approx(1.5 / 4)
    # ranks: c (0.5), a (1), b (0), x (0); E[R] = 1 + 1 + 0.5
    want = (0.5 / 1 * (1 + 0) + 1.0 / 2 * (1 + 0.5)) / 2.5
    assert ev["eAP"] == pytest.approx(want)
    # with certain labels only, eAP is trec_eval's AP
    from engine.evaluation.evaluate import evaluate
    ev0 = expected_measures(runs, relevance_probabilities(qrels, None), cutoffs=(2,)).set_index("measure")["value"]
    ap = evaluate(qrels, runs, ["map", "P.2"]).set_index("measure")["value"]
    assert ev0["eAP"] == pytest.approx(ap["map"]) and ev0["eP_2"] == pytest.approx(ap["P_2"])


def test_predict_command_writes_a_source_and_refuses_deeper(tmp_path):
    from cranfield.cli import main
    from engine.completion.predict import read_predictions
    from engine.simulation.campaigns import simulate, write_campaign
    out = tmp_path / "c"
    write_campaign(simulate(6, 4, 40, 2, grades=(0, 1)), out, pool_depth=10, docs=20, text_signal=0.8)
    assert main(["judgments", "predict", str(out), "--depth", "20"]) == 3          # beyond the pool depth
    assert not (out / "judgments" / "sources").exists()
    assert main(["judgments", "predict", str(out), "--depth", "10"]) == 0
    p = read_predictions(out, "predicted-kld")
    assert len(p) and p["prob"].between(0, 1).all() and set(p["grade"]) <= {0, 1}
    # only unjudged documents within depth 10 of some run were predicted
    from engine.campaign.campaign import load_campaign
    c = load_campaign(out)
    q = c.qrels()
    judged = set(zip(q["topic"], q["doc"]))
    assert not judged & set(zip(p["topic"], p["doc"]))
    from engine.pooling.candidates import ranked_runs
    top = set(zip(*[ranked_runs(c.runs(), 10)[k] for k in ("topic", "doc")]))
    assert set(zip(p["topic"], p["doc"])) <= top
    assert q.equals(load_campaign(out).qrels())       # official judgments unchanged
