"""The text an assessor reads for a document, on every judging path (the TUI and served desks, `cranfield
judgments next --text`): the campaign's document store, else the text of a canary planted in a pool (kept in
audit/canaries.jsonl, never in the store), so a canary reaches people like any other document."""
from __future__ import annotations

from ..errors import CranfieldError


def judging_document(root, doc, docs=None) -> dict | None:
    """{id, title, text} of `doc` for an assessor, or None when neither the store nor the canaries hold it.
    `docs`: the caller's open view of the store (`.get(id)` giving such a dict, or a Document), if any."""
    doc = str(doc)
    if docs is None:
        from ..documents.store import DocStore
        try:
            docs = DocStore.for_campaign(root)
        except CranfieldError:
            docs = None
    d = docs.get(doc) if docs is not None else None
    if d is not None:
        return d if isinstance(d, dict) else d.as_dict()
    from ..judgments.canaries import canary_documents
    c = canary_documents(root).get(doc)
    return None if c is None else {"id": doc, **c}
