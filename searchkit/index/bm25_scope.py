"""BM25 over one scope's documents, made per query (part of ``searchkit.index.bm25``; SPEC H14, H15).

``ScopedBM25(index, allowed)`` answers as ``index.restrict(allowed)`` does, score for score and
bit for bit, without building the restricted matrix: at construction it counts the scope's
documents, their mean length and each term's document frequency within the scope (one pass over
the postings: a gather and a cumulative sum), and computes the idf of every term from those, as
``restrict`` does (Okapi's idf floor reads the mean over every term present in the scope). A query
then weighs only the postings of its own terms: each of its columns' postings inside the scope,
their contributions computed by the very same element-wise formula as ``restrict`` (the variant's
tf weight of ``tf`` and ``doc_len / avgdl``, times the term's idf, cast to the index's dtype), into
a small ``BM25Index`` of those columns alone whose statistics are the scope's. Its ``top_k``,
``scores_at``, ``term_weights`` and ``doc_terms`` are those of the restricted index: the kernels sum
the same values in the same (query) order.

A scope then costs a pass over the postings and two arrays of the vocabulary's length, instead of
a copy of the scope's postings (a first search by a caller on a new version of a 100k-passage
index spent most of its time in ``restrict``); nothing outside the scope changes a score (H15).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Iterable, Sequence

import numpy as np

from searchkit.errors import DataError
from searchkit.index import bm25 as bm25_module
from searchkit.index.bm25 import BM25Index, _query_list

QUERY_VIEWS = 8
"""The per-query indexes a scope keeps (one search asks for the same query's several times)."""


def scope_df(index: BM25Index, allowed: np.ndarray) -> np.ndarray:
    """Each column's number of postings whose document is ``allowed`` (int64): on the numba kernel
    when ``bm25`` queries run on numba, else numpy (the same counts)."""
    ptr = index._indptr
    kernels = bm25_module._kernels()
    if kernels is not None:
        df = np.empty(ptr.shape[0] - 1, dtype=np.int64)
        kernels[2](ptr, index._uindices, allowed, df)
        return df
    seen = np.zeros(index._indices.size + 1, dtype=np.int64)
    np.cumsum(allowed[index._indices], out=seen[1:])
    return seen[ptr[1:]] - seen[ptr[:-1]]


class ScopedBM25:
    """``index.restrict(allowed)``'s answers, its matrix made per query (see the module)."""

    def __init__(self, index: BM25Index, allowed: np.ndarray) -> None:
        if index._tf is None:
            raise DataError("this BM25 index holds no term frequencies (saved by an older searchkit); rebuild it")
        allowed = np.asarray(allowed)
        if allowed.dtype != np.bool_ or allowed.shape != (index.n_docs,):
            raise ValueError(f"allowed must be a bool array of shape ({index.n_docs},), got {allowed.dtype} {allowed.shape}")
        self._base = index
        self._allowed = allowed.copy()
        self._allowed.flags.writeable = False
        self._df = scope_df(index, self._allowed)  # each term's documents within the scope
        n = int(self._allowed.sum())
        present = self._df > 0
        idf = np.zeros(len(index.vocab), dtype=np.float64)
        if present.any():  # as restrict: the variant's idf over the terms present in the scope
            idf[present] = index._variant.idf(self._df[present].astype(np.float64), n, index._cfg)
        self._idf = idf
        self._n = n
        self._avgdl = float(index._doc_len[self._allowed].sum()) / n if n else 0.0
        self._views: OrderedDict[tuple[str, ...], BM25Index] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def n_docs(self) -> int:
        return self._base.n_docs

    @property
    def avgdl(self) -> float:
        return self._avgdl

    def view(self, query_tokens: Iterable[str]) -> BM25Index:
        """The restricted index of the query's columns alone (the scope's statistics, the same
        contributions as ``restrict``'s), kept for the next few calls with the same tokens."""
        tokens = tuple(_query_list(query_tokens))
        with self._lock:
            hit = self._views.get(tokens)
            if hit is not None:
                self._views.move_to_end(tokens)
                return hit
        made = self._make(tokens)
        with self._lock:
            self._views[tokens] = made
            while len(self._views) > QUERY_VIEWS:
                self._views.popitem(last=False)
        return made

    def _make(self, tokens: Sequence[str]) -> BM25Index:
        base = self._base
        vocab: dict[str, int] = {}
        cols: list[int] = []
        for tok in tokens:
            col = base.vocab.get(tok)
            if col is not None and tok not in vocab:
                vocab[tok] = len(cols)
                cols.append(col)
        ptr, idx, tfs, doc_len = base._indptr, base._indices, base._tf, base._doc_len
        assert tfs is not None  # checked at construction
        dtype = base._data.dtype
        rows: list[np.ndarray] = []
        data: list[np.ndarray] = []
        tf: list[np.ndarray] = []
        for col in cols:
            s, e = int(ptr[col]), int(ptr[col + 1])
            keep = self._allowed[idx[s:e]]
            docs = idx[s:e][keep]
            t = tfs[s:e][keep]
            if t.size:  # restrict's formula, element by element
                weight = base._variant.tf(t.astype(np.float64), doc_len[docs] / self._avgdl, base._cfg)
                d = (np.full(t.size, self._idf[col]) * weight).astype(dtype)  # restrict's idf[cols] * weight
            else:
                d = np.zeros(0, dtype=dtype)
            rows.append(docs)
            data.append(d)
            tf.append(t)
        indptr = np.zeros(len(cols) + 1, dtype=np.int64)
        np.cumsum([r.size for r in rows], out=indptr[1:])
        out = BM25Index(
            data=np.concatenate(data) if data else np.zeros(0, dtype=dtype),
            indices=np.concatenate(rows) if rows else np.zeros(0, dtype=idx.dtype),
            indptr=indptr.astype(ptr.dtype), idf=self._idf[np.asarray(cols, dtype=np.intp)], doc_len=doc_len,
            vocab=vocab, config=base._cfg, tf=np.concatenate(tf) if tf else np.zeros(0, dtype=tfs.dtype),
        )
        out._avgdl = self._avgdl
        out._n_stat = self._n
        return out

    # -- the restricted index's answers ----------------------------------------------------
    def top_k(self, query_tokens: Iterable[str], k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        tokens = _query_list(query_tokens)
        return self.view(tokens).top_k(tokens, k, allowed)

    def scores_at(self, query_tokens: Iterable[str], rows: Sequence[int] | np.ndarray) -> np.ndarray:
        tokens = _query_list(query_tokens)
        return self.view(tokens).scores_at(tokens, rows)

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        tokens = _query_list(query_tokens)
        return self.view(tokens).scores(tokens)

    def term_weights(self, query_tokens: Iterable[str]) -> dict[str, float]:
        tokens = _query_list(query_tokens)
        return self.view(tokens).term_weights(tokens)

    def doc_terms(self, query_tokens: Iterable[str], doc_index: int) -> set[str]:
        tokens = _query_list(query_tokens)
        return self.view(tokens).doc_terms(tokens, doc_index)

    def save(self, folder: object) -> None:  # noqa: ARG002 - a scope is never saved
        raise TypeError("a scoped BM25 index is a view of a search's scope; save the index it was made from")
