"""Query-document feature vectors for learning to rank (LETOR / SVMlight format, Parquet).

A feature table has one row per (topic, doc): columns topic (str), doc (str), grade (int) and one
float column per feature, named ``f1`` .. ``fN`` (LETOR feature index i is column ``f{i}``).

Text format, one line per pair (plain or .gz)::

    grade qid:Q 1:v 2:v ... # docid            (LETOR 3.0/4.0 also write "#docid = D inc = .. prob = ..")

Feature indices must increase along a line; absent features are 0 (SVMlight's sparse form). A line
without a document id is given ``<qid>:<line>``. Every malformed line is reported as
``file:line: what is wrong``. Large sets are stored columnar: ``write_features(path.parquet)``.

`simulate_features` gives a simulated campaign's depth-k pool features whose informativeness about
relevance is known: strong, weak and noise features and a BM25-like feature derived from the runs'
ranks (so a ranking by it resembles the systems' rankings).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem
from ..formats.files import PathLike, read_bytes, write_text
from ..util import fs

KEY_COLUMNS = ["topic", "doc", "grade"]
_DOCID = re.compile(r"docid\s*=\s*(\S+)")
_MAX_PROBLEMS = 200


def feature_columns(df: pd.DataFrame) -> list[str]:
    """The feature columns of a feature table, in index order (f1, f2, ...)."""
    cols = [c for c in df.columns if isinstance(c, str) and re.fullmatch(r"f\d+", c)]
    return sorted(cols, key=lambda c: int(c[1:]))


def _parse_line(line: str) -> tuple[int, str, dict[int, float], str | None]:
    """One data line -> (grade, qid, {index: value}, docid); raises ValueError with the reason."""
    body, hash_, comment = line.partition("#")
    doc = None
    if hash_:
        m = _DOCID.search(comment)
        if m:
            doc = m.group(1)
        else:
            toks = comment.split()
            doc = toks[0] if toks else None
    toks = body.split()
    if not toks:
        raise ValueError("no grade before the comment")
    try:
        grade = int(float(toks[0]))
        if float(toks[0]) != grade:
            raise ValueError
    except ValueError:
        raise ValueError(f"grade {toks[0]!r} is not an integer (first field is the relevance grade)") from None
    if len(toks) < 2 or not toks[1].startswith("qid:") or len(toks[1]) == 4:
        raise ValueError("second field must be qid:<query id>")
    qid = toks[1][4:]
    feats: dict[int, float] = {}
    last = 0
    for tok in toks[2:]:
        k, sep, v = tok.partition(":")
        if not sep or not k.isdigit():
            raise ValueError(f"feature {tok!r} is not index:value")
        i = int(k)
        if i < 1:
            raise ValueError(f"feature index {i} must be >= 1")
        if i <= last:
            raise ValueError(f"feature index {i} after {last}: indices must increase along a line")
        try:
            val = float(v)
        except ValueError:
            raise ValueError(f"feature {i} value {v!r} is not a number") from None
        if not np.isfinite(val):
            raise ValueError(f"feature {i} value {v!r} is not finite")
        feats[i] = val
        last = i
    return grade, qid, feats, doc


def read_letor(path: PathLike) -> pd.DataFrame:
    """Read a LETOR / SVMlight feature file (plain or .gz) into a feature table."""
    spath = str(path)
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(Problem(spath, None, f"not UTF-8 text ({exc})")) from None
    problems: list[Problem] = []
    grades, qids, docs, rows = [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    n_feat = 0
    for ln, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            g, q, f, d = _parse_line(line)
        except ValueError as exc:
            problems.append(Problem(spath, ln, f"{exc} (expected `grade qid:Q 1:v 2:v ... # docid`)"))
            if len(problems) >= _MAX_PROBLEMS:
                break
            continue
        d = d if d is not None else f"{q}:{ln}"
        key = (q, d)
        if key in seen:
            problems.append(Problem(spath, ln, f"document {d} of query {q} already given on line {seen[key]} "
                                               "(one line per query-document pair)"))
            continue
        seen[key] = ln
        grades.append(g)
        qids.append(q)
        docs.append(d)
        rows.append(f)
        if f:
            n_feat = max(n_feat, max(f))
    if problems:
        raise FormatError(problems, hint="see docs/training.md for the LETOR feature format")
    if not rows:
        raise FormatError(Problem(spath, None, "no feature lines"),
                          hint="a feature file has lines `grade qid:Q 1:v 2:v ... # docid`")
    X = np.zeros((len(rows), n_feat))
    for r, f in enumerate(rows):
        for i, v in f.items():
            X[r, i - 1] = v
    return make_table(qids, docs, grades, X)


def make_table(topics, docs, grades, X: np.ndarray) -> pd.DataFrame:
    """A feature table from parallel arrays and a feature matrix (rows x features)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(docs):
        raise CranfieldError("feature matrix must have one row per document")
    df = pd.DataFrame({"topic": pd.Series(np.asarray(topics, dtype=object)).astype(str).to_numpy(object),
                       "doc": pd.Series(np.asarray(docs, dtype=object)).astype(str).to_numpy(object),
                       "grade": np.asarray(grades, dtype=np.int64)})
    feats = pd.DataFrame(X, columns=[f"f{i + 1}" for i in range(X.shape[1])])
    return pd.concat([df, feats], axis=1)


def _fmt(v: float) -> str:
    return f"{v:.8g}"


def write_letor(path: PathLike, df: pd.DataFrame, sparse: bool = False) -> Path:
    """Write a feature table as LETOR text (gzip when the name ends in .gz). `sparse` omits zeros."""
    cols = feature_columns(df)
    idx = [int(c[1:]) for c in cols]
    X = df[cols].to_numpy(np.float64)
    lines = []
    for g, q, d, x in zip(df["grade"].to_numpy(), df["topic"].astype(str), df["doc"].astype(str), X):
        parts = [str(int(g)), f"qid:{q}"]
        parts += [f"{i}:{_fmt(v)}" for i, v in zip(idx, x) if not (sparse and v == 0.0)]
        lines.append(" ".join(parts) + f" # {d}")
    write_text(path, "\n".join(lines) + ("\n" if lines else ""))
    return Path(path)


def read_features(path: PathLike) -> pd.DataFrame:
    """Read a feature table from LETOR text (.txt, .letor, .svm, .gz) or Parquet (.parquet)."""
    p = Path(path)
    if not fs.exists(p):
        raise CranfieldError(f"{p}: no such feature file")
    if p.suffix == ".parquet":
        try:
            with fs.open(p, "rb") as fh:
                df = pd.read_parquet(fh)
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise FormatError(Problem(str(p), None, f"not a readable Parquet file ({exc})")) from None
        missing = [c for c in KEY_COLUMNS if c not in df.columns]
        if missing or not feature_columns(df):
            raise FormatError(Problem(str(p), None, f"Parquet feature table needs columns topic, doc, grade, f1.. "
                                                   f"(missing {', '.join(missing) or 'feature columns'})"))
        df["topic"] = df["topic"].astype(str)
        df["doc"] = df["doc"].astype(str)
        return df
    return read_letor(p)


def write_features(path: PathLike, df: pd.DataFrame) -> Path:
    """Write a feature table: Parquet when the name ends in .parquet, LETOR text otherwise."""
    p = Path(path)
    if p.suffix == ".parquet":
        with fs.atomic_file(p) as fh:
            df[KEY_COLUMNS + feature_columns(df)].to_parquet(fh, index=False)
        return p
    return write_letor(p, df)


# ----------------------------------------------------------------------------- simulation

FEATURE_MODEL = {"strong": 1.4, "weak": 0.45, "bm25_noise": 0.6, "shared": 0.8}
"""Effect sizes: a relevant document's shift in a strong / weak feature (noise sd 1); the BM25-like
feature's noise around the standardized run-rank signal; the weight of a per-document 'topicality'
shared by every informative feature (documents the systems rank high look alike)."""


def simulate_features(runs: pd.DataFrame, qrels: pd.DataFrame, depth: int = 100, *, n_strong: int = 2,
                      n_weak: int = 3, n_noise: int = 3, seed: int = 0, model: dict | None = None
                      ) -> tuple[pd.DataFrame, dict]:
    """Features for every document of the depth-`depth` pool of `runs` with known informativeness.

    Column f1 is BM25-like: a noisy copy of the document's rank signal over the runs (mean of
    -log(rank), unretrieved = depth + 1), so ranking by it looks like a system's ranking. Then
    `n_strong` strong features (relevant documents shifted by model['strong'] sd), `n_weak` weak ones
    and `n_noise` pure noise. The informative features also carry the rank signal times
    model['shared'], so the documents the systems rank high are similar to each other, relevant
    or not (the thesis's explanation of hedge and LETOR's weak training sets).
    Returns (feature table, truth) where truth names each column's role.
    """
    from ..pooling.candidates import ranked_runs
    m = dict(FEATURE_MODEL, **(model or {}))
    rr = ranked_runs(runs, depth)
    n_runs = rr.groupby("topic", sort=False)["run"].nunique()
    sig = rr.assign(lr=-np.log(rr["rank"].to_numpy(np.float64))).groupby(["topic", "doc"], sort=True)["lr"].sum()
    sig = sig.reset_index()
    cnt = rr.groupby(["topic", "doc"], sort=True).size().to_numpy()
    nr = sig["topic"].map(n_runs).to_numpy(np.float64)
    s = (sig["lr"].to_numpy() + (nr - cnt) * -np.log(depth + 1.0)) / nr
    # standardize the rank signal per topic
    s = pd.Series(s).groupby(sig["topic"].to_numpy()).transform(lambda v: (v - v.mean()) / (v.std() or 1.0)).to_numpy()
    key = qrels.assign(topic=qrels["topic"].astype(str), doc=qrels["doc"].astype(str))
    grade = sig.merge(key[["topic", "doc", "grade"]], on=["topic", "doc"], how="left")["grade"]
    grade = grade.fillna(0).to_numpy(np.int64)
    rel = (grade > 0).astype(np.float64)
    rng = np.random.default_rng(seed)
    n = len(sig)
    cols = [s + m["bm25_noise"] * rng.standard_normal(n)]
    roles = ["bm25"]
    for kind, k, eff in (("strong", n_strong, m["strong"]), ("weak", n_weak, m["weak"])):
        for _ in range(k):
            cols.append(eff * rel + m["shared"] * s + rng.standard_normal(n))
            roles.append(kind)
    for _ in range(n_noise):
        cols.append(rng.standard_normal(n))
        roles.append("noise")
    X = np.column_stack(cols)
    table = make_table(sig["topic"].to_numpy(object), sig["doc"].to_numpy(object), grade, X)
    truth = {"roles": {f"f{i + 1}": r for i, r in enumerate(roles)}, "model": m, "depth": depth, "seed": seed}
    return table, truth
