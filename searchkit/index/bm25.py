"""BM25 over a sparse matrix of precomputed per-(document, term) contributions.

The bm25s idea (Lù 2024, "BM25S: Orders of magnitude faster lexical search via eager sparse
scoring", arXiv:2407.03618), written for searchkit's own analyzers: every (doc, term) BM25
contribution is computed once at index time into a CSC matrix (docs x vocab), so a query only
slices the columns of its terms and sums them. Tokens come in already analysed (lists of str).

Variants live in ``VARIANTS``; each is two or three tiny pure functions (idf, tf weight, weight
of an absent term). ``okapi``, ``bm25l`` and ``bm25plus`` reproduce rank_bm25 0.2.2
(``BM25Okapi``, ``BM25L``, ``BM25Plus``) score for score; ``lucene`` is Lucene 8+'s BM25Similarity
(with exact rather than lossy-encoded document lengths).

Queries run in the numba kernels of ``_bm25_numba`` when numba imports (compiled on first use,
cached on disk; see :meth:`BM25Index.warm_up`). ``top_k`` sums the query's columns into a
per-thread float64 buffer, then keeps the best k in a bounded heap while clearing the buffer,
reading either every document (many postings) or the postings again (few). Without numba, or with
``SEARCHKIT_NO_NUMBA=1`` in the environment at import (or ``bm25.USE_NUMBA = False`` at run
time), numpy gives bit-identical results, only slower.

The variants and the index settings live in ``bm25_variants``, building in ``bm25_build``, saving
and loading in ``bm25_store``; ``BM25Index`` (here) inherits ``build``, ``save`` and ``load`` from
them and answers the queries.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Iterable, Sequence

import numpy as np

from searchkit.errors import DataError, InputError
from searchkit.config import BM25Config
from searchkit.index.bm25_build import BM25Builder
from searchkit.index.bm25_store import BM25Storage
from searchkit.index.bm25_variants import _INDEX_FIELDS, VARIANTS, BM25Variant, get_variant

__all__ = ["VARIANTS", "BM25Index", "BM25Variant", "get_variant"]

_TINY = float(np.nextafter(0.0, 1.0))  # smallest positive float64: "x >= _TINY" is "x > 0"


def _query_list(query_tokens: Iterable[str]) -> list:
    if isinstance(query_tokens, (str, bytes)):
        raise ValueError(
            f"query_tokens must be a list of tokens, got the string {query_tokens[:50]!r}; "
            "analyze the query first"
        )
    return list(query_tokens)


# --------------------------------------------------------------------------- numba kernels
# The kernels live in ``_bm25_numba`` (numba is imported only when a query first needs them);
# they sum exactly as the numpy path below does, so results are bit-identical.

USE_NUMBA: bool = os.environ.get("SEARCHKIT_NO_NUMBA", "").strip().lower() not in (
    "1", "true", "yes", "on"
)
_KERNELS: Any = None  # None: not tried yet; False: numba unavailable; else (top_k, scores, scope_df)
_KERNELS_LOCK = threading.Lock()
_SCRATCH = threading.local()  # per thread: a float64 buffer of >= n_docs zeros, kept clear
_EMPTY_F8 = np.zeros(0, dtype=np.float64)
_NO_MASK = np.zeros(0, dtype=np.bool_)


def _kernels() -> Any:
    """The compiled (top_k, scores, scope_df) kernels of ``_bm25_numba``, or None when numba is off
    or cannot import.
    numba compiles each dtype combination on its first call (a few seconds) and caches it in
    ``__pycache__``; later processes load it from there."""
    global _KERNELS
    if not USE_NUMBA:
        return None
    if _KERNELS is None:
        with _KERNELS_LOCK:
            if _KERNELS is None:
                try:
                    from searchkit.index import _bm25_numba
                except ImportError:
                    _KERNELS = False
                else:
                    _KERNELS = (_bm25_numba.top_k, _bm25_numba.scores, _bm25_numba.scope_df)
    return _KERNELS or None


def _scratch(n: int) -> np.ndarray:
    """This thread's float64 buffer of >= ``n`` zeros (the kernels leave it zero)."""
    acc = getattr(_SCRATCH, "acc", None)
    if acc is None or acc.shape[0] < n:
        acc = _SCRATCH.acc = np.zeros(n, dtype=np.float64)
    return acc


# --------------------------------------------------------------------------- the index


class BM25Index(BM25Builder, BM25Storage):
    """A BM25 index: a docs x vocab CSC matrix of precomputed contributions.

    Build with :meth:`BM25Index.build`; load with :meth:`BM25Index.load`. ``vocab`` maps a term to
    its column, ``matrix`` is the ``scipy.sparse.csc_array`` (explicit zeros kept: a stored entry
    means "the doc contains the term"), ``idf`` the idf per column.
    """

    def __init__(
        self,
        *,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        idf: np.ndarray,
        doc_len: np.ndarray,
        vocab: dict[str, int],
        config: BM25Config,
        tf: np.ndarray | None = None,
    ) -> None:
        from scipy import sparse

        self._tf = tf
        self._cfg = config
        self._variant = get_variant(config.variant)
        self._vocab = vocab
        self._n_docs = int(doc_len.shape[0])
        self._doc_len = doc_len
        self._idf = idf
        self.matrix = sparse.csc_array(
            (data, indices, indptr), shape=(self._n_docs, len(vocab)), copy=False
        )
        # Query path reads the raw arrays (no scipy dispatch per query).
        self._data = self.matrix.data
        self._indices = self.matrix.indices
        self._indptr = self.matrix.indptr
        # The kernels index with unsigned row numbers (no negative-index wraparound code).
        self._uindices = self._indices.view(np.dtype(self._indices.dtype.str.replace("i", "u")))
        # Columns whose every stored contribution is > 0 (the kernel's fast path).
        self._col_positive = np.ones(len(vocab), dtype=np.bool_)
        not_positive = np.flatnonzero(~(self._data > 0))
        if not_positive.size:
            owner = np.searchsorted(self._indptr, not_positive, side="right") - 1
            self._col_positive[owner] = False
        absent = float(self._variant.absent(config))
        self._offset = idf * absent if absent else None
        total = int(doc_len.sum())
        self._avgdl = total / self._n_docs if self._n_docs else 0.0
        self._n_stat = self._n_docs  # documents the statistics count (a restricted index: its scope)

    def restrict(self, allowed: np.ndarray) -> "BM25Index":
        """The index that the ``allowed`` documents alone would give, with row numbers kept.

        Collection statistics (number of documents, document frequencies, mean length, idf and
        Okapi's idf floor) are computed over the allowed documents only, and the other rows hold
        nothing; so scores equal those of ``BM25Index.build`` over the allowed documents alone,
        and nothing outside them changes a score (SPEC H15: no side channel through term
        statistics). Needs the term frequencies (kept by ``build`` and ``save``).

        Args:
            allowed: bool mask of length ``n_docs``.
        """
        if self._tf is None:
            raise DataError("this BM25 index holds no term frequencies (saved by an older searchkit); rebuild it")
        allowed = np.asarray(allowed)
        if allowed.dtype != np.bool_ or allowed.shape != (self._n_docs,):
            raise ValueError(f"allowed must be a bool array of shape ({self._n_docs},), got {allowed.dtype} {allowed.shape}")
        n_terms = len(self._vocab)
        keep = allowed[self._indices]
        cols = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(self._indptr))[keep]
        df = np.bincount(cols, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        n = int(allowed.sum())
        present = df > 0
        idf = np.zeros(n_terms, dtype=np.float64)
        if present.any():
            idf[present] = self._variant.idf(df[present].astype(np.float64), n, self._cfg)
        avgdl = float(self._doc_len[allowed].sum()) / n if n else 0.0
        docs = self._indices[keep]
        tf = self._tf[keep]
        if tf.size:
            weight = self._variant.tf(tf.astype(np.float64), self._doc_len[docs] / avgdl, self._cfg)
            data = (idf[cols] * weight).astype(self._data.dtype)
        else:
            data = np.zeros(0, dtype=self._data.dtype)
        out = BM25Index(
            data=data, indices=docs, indptr=indptr.astype(self._indptr.dtype), idf=idf,
            doc_len=self._doc_len, vocab=self._vocab, config=self._cfg, tf=tf,
        )
        out._avgdl = avgdl
        out._n_stat = n
        return out

    # ----------------------------------------------------------------------- facts

    @property
    def vocab(self) -> dict[str, int]:
        """Term -> column of ``matrix`` (do not mutate)."""
        return self._vocab

    @property
    def n_docs(self) -> int:
        """Number of documents (rows)."""
        return self._n_docs

    @property
    def avgdl(self) -> float:
        """Mean document length in tokens."""
        return self._avgdl

    @property
    def idf(self) -> np.ndarray:
        """idf per column (float64), after the variant's floor."""
        return self._idf

    @property
    def variant(self) -> str:
        """The variant's registry name."""
        return self._variant.name

    def params(self) -> dict[str, Any]:
        """The build settings: variant, k1, b, epsilon, delta, dtype (JSON-ready)."""
        values = {name: getattr(self._cfg, name) for name in _INDEX_FIELDS}
        return {**values, "dtype": self._data.dtype.name}

    def __repr__(self) -> str:
        return (
            f"BM25Index(variant={self._variant.name!r}, n_docs={self._n_docs}, "
            f"n_terms={len(self._vocab)}, nnz={self._data.size})"
        )

    def warm_up(self) -> bool:
        """Compile the query kernels for this index's dtypes now (or load them from numba's
        on-disk cache), so the first real query does not pay for it: a few seconds the very
        first time, well under a second from the cache. Returns whether the numba kernels
        are in use (False: numba is off or missing, and queries run on numpy)."""
        if _kernels() is None:
            return False
        if self._vocab:
            token = next(iter(self._vocab))
            self.top_k([token], 1)
            self.scores([token])
        return True

    # ----------------------------------------------------------------------- query

    def _columns(self, query_tokens: Iterable[str]) -> tuple[list[int], list[int]]:
        """Distinct in-vocabulary columns of the query and each one's multiplicity."""
        get = self._vocab.get
        counts: dict[int, int] = {}
        for tok in _query_list(query_tokens):
            col = get(tok)
            if col is not None:
                counts[col] = counts.get(col, 0) + 1
        return list(counts), list(counts.values())

    def _gather(self, cols: list[int], mult: list[int]) -> tuple[np.ndarray, np.ndarray, list]:
        """Row indices (intp) and weighted contributions (float64) of the columns, concatenated,
        and each column's [start, end) posting bounds in the matrix."""
        ptr, idx, data = self._indptr, self._indices, self._data
        bounds = ptr[np.asarray(cols)[:, None] + np.arange(2)].tolist()
        rows = [idx[s:e] for s, e in bounds]
        vals = [data[s:e] if m == 1 else data[s:e] * m for (s, e), m in zip(bounds, mult)]
        return (
            np.concatenate(rows, dtype=np.intp, casting="safe"),
            np.concatenate(vals, dtype=np.float64, casting="safe"),
            bounds,
        )

    def _offset_total(self, cols: list[int], mult: list[int]) -> float:
        """BM25+'s constant part, summed in query order (as the kernel sums it)."""
        off = 0.0
        if self._offset is not None:
            for c, m in zip(cols, mult):
                off += float(self._offset[c]) * m
        return off

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        """BM25 score of every document for the query (float64, length ``n_docs``).

        Query tokens count with multiplicity (``["a", "a"]`` scores twice ``["a"]``), as in
        rank_bm25; tokens outside the vocabulary add nothing.
        """
        cols, mult = self._columns(query_tokens)
        if not cols:
            return np.zeros(self._n_docs, dtype=np.float64)
        kernels = _kernels()
        out: np.ndarray
        if kernels is not None:
            out = np.zeros(self._n_docs, dtype=np.float64)
            kernels[1](
                self._indptr,
                self._uindices,
                self._data,
                np.array(cols, dtype=np.int64),
                np.array(mult, dtype=self._data.dtype),
                out,
            )
        else:
            rows, vals, _ = self._gather(cols, mult)
            out = np.bincount(rows, weights=vals, minlength=self._n_docs)
        off = self._offset_total(cols, mult)
        if off:
            out += off
        return out

    def scores_at(self, query_tokens: Iterable[str], rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """``scores(query_tokens)[rows]``, bit for bit, without scoring every document: each query
        column's postings (sorted by document) are searched for ``rows`` alone, and the found
        contributions are summed per row in the same order and precision as :meth:`scores` (column
        by column in order of first appearance, ``data * multiplicity`` in the data's dtype, added
        to a float64 sum, then BM25+'s offset). Cost grows with ``len(rows)`` and log(postings),
        not with the collection: what fusion needs for the few records one retriever missed."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= self._n_docs):
            raise ValueError(f"rows out of range for {self._n_docs} documents")
        out = np.zeros(rows.size, dtype=np.float64)
        cols, mult = self._columns(query_tokens)
        if not cols or not rows.size:
            return out
        ptr, idx, data = self._indptr, self._indices, self._data
        for c, m in zip(cols, mult):
            lo, hi = int(ptr[c]), int(ptr[c + 1])
            postings = idx[lo:hi]
            pos = np.searchsorted(postings, rows)
            inside = pos < postings.size
            hit = np.zeros(rows.size, dtype=np.bool_)
            hit[inside] = postings[pos[inside]] == rows[inside]
            vals = data[lo + pos[hit]]
            if m != 1:
                vals = vals * np.asarray(m, dtype=data.dtype)
            out[hit] += vals.astype(np.float64)
        off = self._offset_total(cols, mult)
        if off:
            out += off
        return out

    def top_k(
        self,
        query_tokens: Iterable[str],
        k: int,
        allowed: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` documents for the query.

        A document is a candidate when it contains at least one query term (whatever its score:
        with few documents Okapi's idf can be 0, or negative when the mean idf is negative, and
        a matching document is still returned) and, when ``allowed`` is given, ``allowed[doc]``
        is True; a filtered-out document never takes a slot. Candidates are ordered by score
        descending, ties by lower document index. Scores equal :meth:`scores`.

        Args:
            query_tokens: analysed query tokens.
            k: how many to return at most (>= 0).
            allowed: optional bool mask of length ``n_docs``.

        Returns:
            (doc indices int64, scores float64), best first, at most ``k`` of each.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise InputError(f"k must be a non-negative integer, got {k!r}")
        if allowed is not None:
            allowed = np.asarray(allowed)
            if allowed.dtype != np.bool_ or allowed.shape != (self._n_docs,):
                raise ValueError(
                    f"allowed must be a bool array of shape ({self._n_docs},), got dtype "
                    f"{allowed.dtype} shape {allowed.shape}"
                )
            flags = allowed.flags
            if not (flags.c_contiguous and flags.writeable):  # one compiled kernel for all
                allowed = allowed.copy()
        k = int(k)
        kernels = _kernels()
        if kernels is None:
            cols, mult = self._columns(query_tokens)
            if not cols or k == 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
            return self._top_k_numpy(cols, mult, k, allowed, self._offset_total(cols, mult))
        get = self._vocab.get
        ids = np.array([get(t, -1) for t in _query_list(query_tokens)], dtype=np.int64)
        if k == 0 or ids.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return kernels[0](
            self._indptr,
            self._uindices,
            self._data,
            ids,
            self._col_positive,
            _EMPTY_F8 if self._offset is None else self._offset,
            self._n_docs,
            k,
            _NO_MASK if allowed is None else allowed,
            _scratch(self._n_docs),
        )

    def _top_k_numpy(
        self, cols: list[int], mult: list[int], k: int, allowed: np.ndarray | None, off: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """``top_k`` without numba: the same documents, order and scores."""
        rows, vals, bounds = self._gather(cols, mult)
        n = self._n_docs
        if rows.size * 8 < n:
            # Few postings: score the candidates only (a sort of the postings, no O(n_docs) pass).
            cand, inv = np.unique(rows, return_inverse=True)
            sc = np.bincount(inv.ravel(), weights=vals, minlength=cand.size)
            if allowed is not None:
                keep = allowed[cand]
                cand, sc = cand[keep], sc[keep]
        elif bool(self._col_positive[cols].all()):
            # Every stored contribution is > 0 here, so "contains a query term" is "sum > 0":
            # select straight on the dense sums.
            dense = np.bincount(rows, weights=vals, minlength=n)
            if allowed is not None:
                np.multiply(dense, allowed, out=dense)
            # A lower bound on the k-th best score: the k-th best among the postings of the
            # shortest column holding >= k documents (a subset of the candidates). Not with an
            # offset: rounding in "sum + offset" can tie sums below the bound with the k-th.
            floor = _TINY
            probe_bounds = [(e - s, s, e) for s, e in bounds if e - s >= k]
            if probe_bounds and not off:
                _, s, e = min(probe_bounds)
                probe = dense[self._indices[s:e]]
                probe = probe[probe > 0] if allowed is not None else probe
                if probe.size >= k:
                    floor = max(np.partition(probe, probe.size - k)[probe.size - k], _TINY)
            cand = np.flatnonzero(dense >= floor)
            sc = dense[cand]
        else:
            dense = np.bincount(rows, weights=vals, minlength=n)
            hit = np.zeros(n, dtype=np.bool_)
            hit[rows] = True
            if allowed is not None:
                hit &= allowed
            cand = np.flatnonzero(hit)
            sc = dense[cand]
        # Select on the final scores (with the offset), so ties are ties of the returned values.
        return _best(cand, sc + off if off else sc, k)

    def term_weights(self, query_tokens: Iterable[str]) -> dict[str, float]:
        """Each distinct query token's weight as evidence, ``ln(1 + (N - df + 0.5) / (df + 0.5))``
        over the documents the statistics count (a token the collection lacks: df = 0), whatever
        the variant; always positive."""
        n = self._n_stat
        out: dict[str, float] = {}
        for tok in _query_list(query_tokens):
            col = self._vocab.get(tok)
            df = int(self._indptr[col + 1] - self._indptr[col]) if col is not None else 0
            out[tok] = math.log1p((n - df + 0.5) / (df + 0.5))
        return out

    def doc_terms(self, query_tokens: Iterable[str], doc_index: int) -> set[str]:
        """The distinct query tokens document ``doc_index`` holds."""
        found = set()
        ptr, idx = self._indptr, self._indices
        for tok in set(_query_list(query_tokens)):
            col = self._vocab.get(tok)
            if col is None:
                continue
            postings = idx[ptr[col] : ptr[col + 1]]
            pos = int(np.searchsorted(postings, doc_index))
            if pos < postings.size and int(postings[pos]) == doc_index:
                found.add(tok)
        return found

    def matched_terms(self, query_tokens: Iterable[str], doc_index: int) -> int:
        """How many distinct query terms occur in document ``doc_index``."""
        if isinstance(doc_index, bool) or not isinstance(doc_index, (int, np.integer)):
            raise InputError(f"doc_index must be an integer, got {doc_index!r}")
        if not 0 <= doc_index < self._n_docs:
            raise InputError(f"doc_index {doc_index} out of range for {self._n_docs} documents")
        cols, _ = self._columns(query_tokens)
        ptr, idx = self._indptr, self._indices
        found = 0
        for c in cols:
            col = idx[ptr[c] : ptr[c + 1]]
            pos = int(np.searchsorted(col, doc_index))
            found += pos < col.size and int(col[pos]) == doc_index
        return found

    def matched_counts(self, query_tokens: Iterable[str]) -> np.ndarray:
        """For every document, how many distinct query terms it contains (int64, ``n_docs``)."""
        cols, _ = self._columns(query_tokens)
        if not cols:
            return np.zeros(self._n_docs, dtype=np.int64)
        rows, _, _ = self._gather(cols, [1] * len(cols))
        return np.bincount(rows, minlength=self._n_docs)


def _best(cand: np.ndarray, sc: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` of candidates ``cand`` (ascending doc indices) with scores ``sc``: score desc,
    then lower index."""
    if cand.size > k:
        # Everything scoring at least the k-th best value, so boundary ties are all seen.
        kth = np.partition(sc, cand.size - k)[cand.size - k]
        keep = sc >= kth
        cand, sc = cand[keep], sc[keep]
    order = np.lexsort((cand, -sc))[:k]
    return cand[order].astype(np.int64, copy=False), sc[order]
