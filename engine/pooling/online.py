"""Online document selection: each judgment updates what is asked next.

Per topic, a selector holds the (run x document) rank matrix of the pooled runs and answers
`next()` (the document to judge) and `update(doc_index, relevant)`.

- `MoveToFront` (Cormack, Palmer and Clarke): judge down the run at the front of a queue; a
  non-relevant document sends that run to the back of the queue.
- `Hedge` (Aslam, Pavlu and Savell): every run is an expert with a weight; the next document is the
  unjudged one with the largest weighted vote sum_s w_s v_s(d), v_s(d) = the AP prior of its rank in
  run s scaled to (0, 1]. After a judgment, w_s *= beta ** loss_s with loss v_s(d) for a
  non-relevant document and 1 - v_s(d) for a relevant one.
- `MTC` (Carterette, Allan and Sitaraman): for average precision, c_s(d) is the increase of run s's
  sum of precisions at relevant documents if d were relevant, given the relevant documents found so
  far (1/r_s(d) * (1 + known relevant above) + sum of 1/r over known relevant below). A document's
  weight is sum over run pairs |c_s(d) - c_t(d)|: how much its judgment can move the differences
  between systems. The heaviest unjudged document is judged next; weights are recomputed after
  each relevant judgment.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .candidates import ap_prior


class _Selector:
    """Common state: docs in canonical order (best rank, round-robin, doc id), the rank matrix."""

    name = "online"

    def __init__(self, rows: pd.DataFrame, depth: int, **params):
        # rows: run, doc, rank of one topic (rank <= depth)
        runs = sorted(rows["run"].astype(str).unique())
        run_idx = {r: i for i, r in enumerate(runs)}
        ri = rows["run"].astype(str).map(run_idx).to_numpy(np.int64)
        t = pd.DataFrame({"doc": rows["doc"].astype(str).to_numpy(object), "rank": rows["rank"].to_numpy(np.int64),
                          "ri": ri}).sort_values(["doc", "rank", "ri"], kind="mergesort")
        first = t.groupby("doc", sort=False).first()
        canon = first.reset_index().sort_values(["rank", "ri", "doc"], kind="mergesort")["doc"].to_numpy(object)
        self.docs = canon
        self.doc_index = {d: i for i, d in enumerate(canon)}
        di = rows["doc"].astype(str).map(self.doc_index).to_numpy(np.int64)
        self.depth = int(depth)
        self.n_runs, self.n_docs = len(runs), len(canon)
        self.runs = runs
        self.R = np.zeros((self.n_runs, self.n_docs), np.int64)
        self.R[ri, di] = rows["rank"].to_numpy(np.int64)
        self.judged = np.zeros(self.n_docs, bool)
        self.relevant = np.zeros(self.n_docs, bool)
        self.params = params

    def scores(self) -> np.ndarray:
        raise NotImplementedError

    def next(self) -> int | None:
        """Index of the next document to judge, or None when every document is judged."""
        if self.judged.all():
            return None
        s = np.where(self.judged, -np.inf, self.scores())
        return int(np.argmax(s))  # first maximum = canonical order breaks ties

    def update(self, i: int, relevant: bool) -> None:
        self.judged[i] = True
        self.relevant[i] = bool(relevant)

    def observe(self, doc: str, relevant: bool) -> None:
        """Record a judgment made elsewhere (documents outside this pool are ignored)."""
        i = self.doc_index.get(doc)
        if i is not None and not self.judged[i]:
            self.update(i, relevant)


class MoveToFront(_Selector):
    name = "mtf"

    def __init__(self, rows, depth, **params):
        super().__init__(rows, depth, **params)
        # per run: document indices in rank order
        self.lists = []
        for s in range(self.n_runs):
            present = np.flatnonzero(self.R[s] > 0)
            self.lists.append(present[np.argsort(self.R[s, present], kind="stable")])
        self.queue = list(range(self.n_runs))
        self.ptr = np.zeros(self.n_runs, np.int64)
        self.last_run: int | None = None

    def _advance(self, s: int) -> int | None:
        lst = self.lists[s]
        while self.ptr[s] < len(lst) and self.judged[lst[self.ptr[s]]]:
            self.ptr[s] += 1
        return int(lst[self.ptr[s]]) if self.ptr[s] < len(lst) else None

    def next(self):
        while self.queue:
            s = self.queue[0]
            d = self._advance(s)
            if d is not None:
                self.last_run = s
                return d
            self.queue.pop(0)
        return None

    def update(self, i, relevant):
        super().update(i, relevant)
        if not relevant and self.queue and self.last_run == self.queue[0]:
            self.queue.append(self.queue.pop(0))
        self.last_run = None

    def observe(self, doc, relevant):
        """Replay a judgment: when it is the document the front run offers, the queue moves as if
        it had been judged here; otherwise it is only marked judged."""
        i = self.doc_index.get(doc)
        if i is None or self.judged[i]:
            return
        if self.next() != i:
            self.last_run = None
        self.update(i, relevant)


class Hedge(_Selector):
    name = "hedge"

    def __init__(self, rows, depth, beta: float = 0.5, **params):
        super().__init__(rows, depth, **params)
        self.beta = float(beta)
        present = self.R > 0
        self.V = np.zeros(self.R.shape)
        self.V[present] = ap_prior(self.R[present], self.depth) / ap_prior(np.array([1]), self.depth)[0]
        self.w = np.ones(self.n_runs)

    def scores(self):
        return self.w @ self.V

    def update(self, i, relevant):
        super().update(i, relevant)
        v = self.V[:, i]
        loss = 1.0 - v if relevant else v
        self.w = self.w * self.beta ** loss
        self.w /= self.w.sum()


class MTC(_Selector):
    name = "mtc"

    def __init__(self, rows, depth, **params):
        super().__init__(rows, depth, **params)
        self._w = None

    def _coefficients(self) -> np.ndarray:
        Z = self.depth
        rel_at = np.zeros((self.n_runs, Z + 2))
        s_idx, d_idx = np.nonzero((self.R > 0) & self.relevant[None, :])
        rel_at[s_idx, self.R[s_idx, d_idx]] = 1.0
        cnt_above = np.cumsum(rel_at, axis=1) - rel_at                 # known relevant at ranks < r
        inv = rel_at / np.maximum(np.arange(Z + 2), 1)[None, :]
        suffix = np.cumsum(inv[:, ::-1], axis=1)[:, ::-1] - inv          # sum 1/r' over relevant r' > r
        r = self.R
        rows = np.arange(self.n_runs)[:, None]
        c = (1.0 + cnt_above[rows, r]) / np.maximum(r, 1) + suffix[rows, r]
        return np.where(r > 0, c, 0.0)

    def scores(self):
        if self._w is None:
            c = np.sort(self._coefficients(), axis=0)              # per doc, runs sorted ascending
            k = np.arange(1, self.n_runs + 1)[:, None]
            self._w = ((2 * k - self.n_runs - 1) * c).sum(axis=0)  # sum over pairs |c_s - c_t|
        return self._w

    def update(self, i, relevant):
        super().update(i, relevant)
        if relevant:
            self._w = None


SELECTORS = {"mtf": MoveToFront, "hedge": Hedge, "mtc": MTC}
