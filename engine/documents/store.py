"""The campaign's document text: an SQLite store with random access by id, imported in a streamed pass.

`docs/docs.sqlite` holds one row per document (id, title, text). It is filled from TREC SGML
(`<DOC> <DOCNO>id</DOCNO> ... <TEXT>...</TEXT> </DOC>`, plain or .gz) and from JSONL
(`{"id", "title", "text"}`; `docno`/`doc_id` and `contents`/`body` are accepted too), in batches, so
memory stays bounded whatever the size of the input. Every import is one SQLite transaction: a kill
leaves the store as it was before. A campaign that only has the older `docs/docs.jsonl` is read through
an in-memory store built from it, so nothing is written into the campaign for reading.

The judging screen and the relevance classifiers read the same store.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import CranfieldError, FormatError, Problem
from ..formats.safeload import loads_json
from ..util import fs

STORE_NAME = "docs.sqlite"
LEGACY_JSONL = "docs.jsonl"
BATCH = 5000
MAX_DOC_BYTES = 64 << 20  # one document larger than this is refused (a missing </DOC>, most likely)
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, cf INTEGER NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Document:
    """One document's text."""

    id: str
    title: str
    text: str

    def as_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "text": self.text}


def _open_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text file, gzip-decompressed when it is gzip data; streamed. Only a
    regular file is opened, and no line may pass the read limit (`--max-read`): memory stays bounded."""
    from ..formats.files import max_read, regular_file
    regular_file(path, whole=False)
    limit, _ = max_read()
    base = fs.open(path, "rb")
    magic = base.read(2)
    base.seek(0)
    raw = gzip.open(base, "rb") if magic == b"\x1f\x8b" else base
    try:
        with io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline=None) as fh:
            n = 0
            try:
                while line := fh.readline(limit + 1):
                    n += 1
                    if len(line) > limit:
                        raise FormatError(Problem(str(path), n, f"a line longer than the read limit of {limit:,} "
                                                                f"characters; refused"),
                                          hint="raise the limit with --max-read SIZE if the file is genuine")
                    yield n, line
            except UnicodeDecodeError as exc:
                raise FormatError(Problem(str(path), n + 1, f"not valid UTF-8 ({exc.reason})"),
                                  hint="convert the file to UTF-8 (iconv -f latin1 -t utf-8)") from None
            except (OSError, EOFError, zlib.error) as exc:
                raise FormatError(Problem(str(path), n + 1, f"corrupt or truncated gzip data ({exc})"),
                                  hint="compress the file again, or import the uncompressed file") from None
    finally:
        raw.close()
        base.close()


_TAG = re.compile(r"<[^>]{0,200}>")
_WS = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _WS.sub(" ", _TAG.sub(" ", text)).strip()


def iter_trec_sgml(path) -> Iterator[tuple[int, Document]]:
    """(line of <DOC>, Document) for each document of a TREC SGML file. Title from <TITLE>/<HEADLINE>/
    <HEAD>; text from every <TEXT> element (or, without one, the whole body less its markup)."""
    path = Path(path)
    start = 0
    buf: list[str] | None = None
    size = 0
    for n, line in _open_lines(path):
        s = line.strip()
        if s[:5].upper() == "<DOC>":
            if buf is not None:
                raise FormatError(Problem(str(path), n, f"<DOC> opened again before the <DOC> of line {start} was closed"),
                                  hint="add the missing </DOC>")
            buf, start, size = [], n, 0
            s = line = s[5:]
        if s[-6:].upper() == "</DOC>":
            if buf is None:
                raise FormatError(Problem(str(path), n, "</DOC> without an opening <DOC>"),
                                  hint="remove the stray </DOC> or add its <DOC>")
            buf.append(s[:-6])
            yield start, _parse_doc(path, start, "\n".join(buf))
            buf = None
            continue
        if buf is None:
            if s:
                raise FormatError(Problem(str(path), n, f"text outside a <DOC> element: {s[:40]!r}"),
                                  hint="every document must be enclosed in <DOC> ... </DOC>")
            continue
        buf.append(line.rstrip("\n"))
        size += len(line)
        if size > MAX_DOC_BYTES:
            raise FormatError(Problem(str(path), start, f"document longer than {MAX_DOC_BYTES >> 20} MB"),
                              hint="a </DOC> is probably missing")
    if buf is not None:
        raise FormatError(Problem(str(path), start, "<DOC> never closed (the file ends inside it)"),
                          hint="add the missing </DOC>; the file may be truncated")


_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_TITLE = re.compile(r"<(TITLE|HEADLINE|HEAD)>(.*?)</\1>", re.S | re.I)
_TEXT = re.compile(r"<TEXT>(.*?)</TEXT>", re.S | re.I)


def _parse_doc(path: Path, line: int, body: str) -> Document:
    m = _DOCNO.search(body)
    if not m or not m.group(1).strip():
        raise FormatError(Problem(str(path), line, "document without a <DOCNO>...</DOCNO>"),
                          hint="every <DOC> needs its document id in <DOCNO>")
    doc_id = m.group(1).strip()
    if any(c.isspace() for c in doc_id):
        raise FormatError(Problem(str(path), line, f"document id {doc_id[:40]!r} contains white space"),
                          hint="document ids are single tokens, as in run and qrels files")
    t = _TITLE.search(body)
    title = _clean(t.group(2)) if t else ""
    texts = _TEXT.findall(body)
    if texts:
        text = _clean(" ".join(texts))
    else:
        rest = _DOCNO.sub(" ", body)
        rest = _TITLE.sub(" ", rest) if t else rest
        text = _clean(rest)
    return Document(doc_id, title, text)


_ID_KEYS = ("id", "docno", "doc_id", "docid", "_id")
_TEXT_KEYS = ("text", "contents", "body")


def iter_jsonl(path) -> Iterator[tuple[int, Document]]:
    """(line, Document) for each line of a JSONL file of {"id", "title", "text"} objects."""
    path = Path(path)
    for n, line in _open_lines(path):
        if not line.strip():
            continue
        try:
            rec = loads_json(line, str(path), n)
        except json.JSONDecodeError as exc:
            raise FormatError(Problem(str(path), n, f"not valid JSON ({exc.msg} at column {exc.colno})"),
                              hint="one object per line: {\"id\": ..., \"title\": ..., \"text\": ...}") from None
        except ValueError as exc:           # nested too deeply (engine.formats.safeload's limit)
            raise FormatError(Problem(str(path), n, f"JSON {exc}"),
                              hint="one flat object per line: {\"id\": ..., \"title\": ..., \"text\": ...}") from None
        if not isinstance(rec, dict):
            raise FormatError(Problem(str(path), n, f"expected a JSON object, got {type(rec).__name__}"),
                              hint="one object per line: {\"id\": ..., \"title\": ..., \"text\": ...}")
        doc_id = next((rec[k] for k in _ID_KEYS if k in rec), None)
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or not str(doc_id).strip():
            raise FormatError(Problem(str(path), n, "no document id (expected a string field \"id\")"),
                              hint="add \"id\" (or \"docno\") to every line")
        doc_id = str(doc_id).strip()
        if any(c.isspace() for c in doc_id):
            raise FormatError(Problem(str(path), n, f"document id {doc_id[:40]!r} contains white space"),
                              hint="document ids are single tokens, as in run and qrels files")
        title = rec.get("title", "")
        text = next((rec[k] for k in _TEXT_KEYS if k in rec), "")
        if not isinstance(title, str) or not isinstance(text, str):
            raise FormatError(Problem(str(path), n, "\"title\" and \"text\" must be strings"),
                              hint="write the document text as a JSON string")
        yield n, Document(doc_id, title, text)


def iter_documents(path, fmt: str | None = None) -> Iterator[tuple[int, Document]]:
    """Documents of a TREC SGML or JSONL file (format from `fmt`, else from the name, else the content)."""
    from ..formats.files import regular_file
    p = Path(path)
    regular_file(p, whole=False)     # missing, a folder, a FIFO or a device: refused before opening
    if fmt is None:
        name = p.name.lower().removesuffix(".gz")
        if name.endswith((".jsonl", ".json", ".ndjson")):
            fmt = "jsonl"
        elif name.endswith((".sgml", ".sgm", ".trec", ".xml")):
            fmt = "trec"
        else:
            first = next((ln for _, ln in _open_lines(p) if ln.strip()), "")
            fmt = "jsonl" if first.lstrip().startswith("{") else "trec"
    if fmt == "jsonl":
        return iter_jsonl(p)
    if fmt == "trec":
        return iter_trec_sgml(p)
    raise CranfieldError(f"unknown document format {fmt!r} (use trec or jsonl)")


class DocStore:
    """Random access to document text by id. Open with `DocStore.open(path)` or `for_campaign(root)`."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None):
        self._conn = conn
        self.path = path

    # --- opening -------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path, *, create: bool = False) -> "DocStore":
        """The store at `path` (an SQLite file); `create` makes an empty one when it does not exist."""
        p = Path(path)
        if not fs.exists(p) and not create:
            raise CranfieldError(f"{p}: no document store (cranfield docs import CAMPAIGN FILE... makes one)")
        try:
            conn = fs.sqlite_connect(p, create=create, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            raise CranfieldError(f"{p}: not a readable document store ({exc}); "
                                 f"move it away and import the documents again") from None
        return cls(conn, p)

    @classmethod
    def memory(cls) -> "DocStore":
        """An empty in-memory store."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.executescript(_SCHEMA)
        return cls(conn, None)

    @classmethod
    def for_campaign(cls, root) -> "DocStore | None":
        """The campaign's store: docs/docs.sqlite, else one built in memory from docs/docs.jsonl, else None."""
        from engine.util.confine import campaign_path, confine
        d = campaign_path(root, "docs")
        if confine(root, d / STORE_NAME).is_file():
            return cls.open(d / STORE_NAME)
        if confine(root, d / LEGACY_JSONL).is_file():
            st = cls.memory()
            st.import_file(d / LEGACY_JSONL, fmt="jsonl")
            return st
        return None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- import --------------------------------------------------------------------------------------
    def import_file(self, path, fmt: str | None = None, *, replace: bool = True) -> int:
        """Import one file in a single transaction; returns the number of documents read.
        A later document with an id already stored replaces it (`replace`) or is refused."""
        return self.import_documents(iter_documents(path, fmt), source=str(path), replace=replace)

    def import_documents(self, docs: Iterable[tuple[int, Document]], *, source: str = "<documents>",
                         replace: bool = True) -> int:
        """Import (line, Document) pairs in batches inside one transaction."""
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        sql = f"{verb} INTO docs VALUES (?, ?, ?)"
        cur = self._conn.cursor()
        count = 0
        cur.execute("BEGIN IMMEDIATE")
        try:
            batch: list[tuple[str, str, str]] = []
            lines: list[int] = []
            for line, d in docs:
                batch.append((d.id, d.title, d.text))
                lines.append(line)
                if len(batch) >= BATCH:
                    self._insert(cur, sql, batch, lines, source)
                    count += len(batch)
                    batch, lines = [], []
            if batch:
                self._insert(cur, sql, batch, lines, source)
                count += len(batch)
            cur.execute("DELETE FROM terms")  # term statistics describe the old collection
            cur.execute("DELETE FROM meta WHERE key LIKE 'terms_%'")
            cur.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, sqlite3.OperationalError):
                raise self._write_failed(exc, f"importing {source}") from None
            raise
        return count

    def _rollback(self) -> None:
        """Undo the open transaction, if any: a failed COMMIT (a full disk) may have ended it already."""
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _write_failed(self, exc: sqlite3.Error, doing: str) -> CranfieldError:
        """The one message of a store that could not be written (`doing`: what was being done)."""
        return CranfieldError(f"{self.path or 'document store'}: cannot be written while {doing} ({exc}): the disk may "
                              f"be full or a file-size limit reached; free space or raise the limit and run the "
                              f"command again (nothing was changed)")

    @staticmethod
    def _insert(cur, sql, batch, lines, source) -> None:
        try:
            cur.executemany(sql, batch)
        except sqlite3.IntegrityError:
            seen = set()
            for (doc_id, *_), line in zip(batch, lines):
                if doc_id in seen or cur.execute("SELECT 1 FROM docs WHERE id=?", (doc_id,)).fetchone():
                    raise FormatError(Problem(source, line, f"document {doc_id!r} is already in the store"),
                                      hint="drop the duplicate, or import with replacement") from None
                seen.add(doc_id)
            raise

    # --- reading -------------------------------------------------------------------------------------
    def get(self, doc_id: str) -> Document | None:
        """The document with this id, or None."""
        row = self._conn.execute("SELECT id, title, text FROM docs WHERE id=?", (str(doc_id),)).fetchone()
        return Document(*row) if row else None

    def get_many(self, ids: Iterable[str]) -> dict[str, Document]:
        """The stored documents among `ids`, by id (missing ids are absent)."""
        ids = list(dict.fromkeys(str(i) for i in ids))
        out: dict[str, Document] = {}
        for i in range(0, len(ids), 900):
            part = ids[i:i + 900]
            q = f"SELECT id, title, text FROM docs WHERE id IN ({','.join('?' * len(part))})"
            for row in self._conn.execute(q, part):
                out[row[0]] = Document(*row)
        return out

    def __contains__(self, doc_id: object) -> bool:
        return self._conn.execute("SELECT 1 FROM docs WHERE id=?", (str(doc_id),)).fetchone() is not None

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    def __iter__(self) -> Iterator[Document]:
        for row in self._conn.execute("SELECT id, title, text FROM docs ORDER BY id"):
            yield Document(*row)

    def ids(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT id FROM docs ORDER BY id")]

    # --- term statistics (cached in the store, rebuilt after an import) ------------------------------
    def term_stats(self) -> tuple[dict[str, int], dict[str, int], int]:
        """(collection frequency, document frequency, number of documents) over every stored document."""
        from .text import tokenize

        n = self._conn.execute("SELECT value FROM meta WHERE key='terms_ndocs'").fetchone()
        if n is None:
            cf: dict[str, int] = {}
            df: dict[str, int] = {}
            ndocs = 0
            for (title, text) in self._conn.execute("SELECT title, text FROM docs"):
                toks = tokenize(f"{title} {text}")
                ndocs += 1
                for t in toks:
                    cf[t] = cf.get(t, 0) + 1
                for t in set(toks):
                    df[t] = df.get(t, 0) + 1
            if self.path is not None and not os.access(self.path, os.W_OK):
                return cf, df, ndocs
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                cur.execute("DELETE FROM terms")
                cur.executemany("INSERT INTO terms VALUES (?, ?, ?)", ((t, c, df[t]) for t, c in cf.items()))
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('terms_ndocs', ?)", (str(ndocs),))
                cur.execute("COMMIT")
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.OperationalError):
                    raise self._write_failed(exc, "counting terms") from None
                raise
            return cf, df, ndocs
        cf, df = {}, {}
        for t, c, d in self._conn.execute("SELECT term, cf, df FROM terms"):
            cf[t] = c
            df[t] = d
        return cf, df, int(n[0])
