"""The numba query kernels of :mod:`searchkit.index.bm25`, in small inlined pieces.

Imported only by ``bm25._kernels()`` (numba is slow to import, and ``bm25`` answers on numpy
without it); everything here is compiled on first use and cached on disk. The two kernels,
:func:`scores` and :func:`top_k`, are built from ``@njit(inline="always")`` helpers, in the
manner of bm25s' ``numba/selection.py``:

- :func:`_distinct_columns`: the query's columns without repeats, with multiplicities, and
  :func:`_column_facts` about them (weights, BM25+'s offset, sign, postings count);
- :func:`_accumulate` / :func:`_accumulate_listed`: sum the columns into a float64 buffer;
- :func:`_offer` on a bounded min-heap, over :func:`_sift_up` / :func:`_sift_down`
  (each written once), with :func:`_consider` moving the threshold as the heap fills;
- :func:`_select_dense` / :func:`_select_postings` / :func:`_select_listed`: the three ways
  of walking the buffer (clearing it) to fill the heap;
- :func:`_drain`: the heap, best first.

The kernels sum exactly as the numpy path of ``bm25`` does, so results are bit-identical:
column by column in order of first appearance in the query, each posting's ``data * multiplicity``
computed in the data's dtype and added to a float64 sum; BM25+'s offset is summed in the same
order. Row indices arrive unsigned (no negative-index wraparound code).
"""

from __future__ import annotations

import numpy as np
from numba import njit

TINY = float(np.nextafter(0.0, 1.0))  # smallest positive float64: "x >= TINY" is "x > 0"
DENSE_RATIO = 4  # a positive query scans every doc once postings * ratio >= n_docs
SCAN_LIMIT = 64  # up to this many query tokens, repeats are found by a linear scan

_inline = njit(inline="always")
_kernel = njit(cache=True, nogil=True)


# --------------------------------------------------------------------------- query columns


@_inline
def _distinct_by_scan(ids: np.ndarray):
    cols = np.empty(ids.shape[0], dtype=np.int64)
    mult = np.zeros(ids.shape[0], dtype=np.int64)
    n = 0
    for i in range(ids.shape[0]):
        c = ids[i]
        if c >= 0:
            j = 0
            while j < n and cols[j] != c:
                j += 1
            if j == n:
                cols[n] = c
                n += 1
            mult[j] += 1
    return cols[:n], mult[:n]


@_inline
def _distinct_by_sort(ids: np.ndarray):
    n_ids = ids.shape[0]
    order = np.argsort(ids, kind="mergesort")  # stable: a group starts at its first use
    firsts = np.empty(n_ids, dtype=np.int64)
    counts = np.empty(n_ids, dtype=np.int64)
    n = 0
    g = 0
    while g < n_ids:
        e = g + 1
        while e < n_ids and ids[order[e]] == ids[order[g]]:
            e += 1
        if ids[order[g]] >= 0:
            firsts[n] = order[g]
            counts[n] = e - g
            n += 1
        g = e
    by_first = np.argsort(firsts[:n])
    cols = np.empty(n, dtype=np.int64)
    mult = np.empty(n, dtype=np.int64)
    for i in range(n):
        cols[i] = ids[firsts[by_first[i]]]
        mult[i] = counts[by_first[i]]
    return cols, mult


@_inline
def _distinct_columns(ids: np.ndarray):
    """The query's columns (``ids``, -1 for a token outside the vocabulary) without repeats, in
    order of first appearance, and how often each occurs."""
    if ids.shape[0] <= SCAN_LIMIT:
        return _distinct_by_scan(ids)
    return _distinct_by_sort(ids)


@_inline
def _column_facts(
    indptr: np.ndarray, data: np.ndarray, cols: np.ndarray, mult: np.ndarray, col_positive: np.ndarray, offsets: np.ndarray
):
    """What the kernel needs to know of the query's columns: each one's weight (its
    multiplicity, in the data's dtype), BM25+'s offset summed in query order (``offsets``
    empty: 0), whether every stored value is > 0 ("positive": a doc is then touched iff its
    sum is > 0, and the postings need no bookkeeping beyond the sums), and the postings count."""
    weights = np.empty(cols.shape[0], dtype=data.dtype)
    offset = 0.0
    positive = True
    n_post = 0
    for c in range(cols.shape[0]):
        weights[c] = mult[c]
        if offsets.shape[0]:
            offset += offsets[cols[c]] * mult[c]
        positive = positive and col_positive[cols[c]]
        n_post += indptr[cols[c] + 1] - indptr[cols[c]]
    return weights, offset, positive, n_post


# --------------------------------------------------------------------------- accumulate


@_inline
def _accumulate(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, cols: np.ndarray, weights: np.ndarray, acc: np.ndarray
):
    """``acc[doc] += data * weight`` over the postings of each column, in column order."""
    for c in range(cols.shape[0]):
        col = cols[c]
        w = weights[c]
        if w == 1:
            for j in range(indptr[col], indptr[col + 1]):
                acc[indices[j]] += data[j]
        else:
            for j in range(indptr[col], indptr[col + 1]):
                acc[indices[j]] += data[j] * w


@_inline
def _accumulate_listed(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, cols: np.ndarray, weights: np.ndarray, n_docs: int, acc: np.ndarray
):
    """As :func:`_accumulate`, also listing each touched doc once; returns (touched, count).

    Branch-free: every posting writes its doc into the next slot, which is kept only when the
    doc is new (a sum can be 0 or negative here, so "touched" cannot be read off the sums)."""
    touched = np.empty(n_docs + 1, dtype=np.int64)
    seen = np.zeros(n_docs, dtype=np.uint8)
    m = 0
    for c in range(cols.shape[0]):
        col = cols[c]
        w = weights[c]
        for j in range(indptr[col], indptr[col + 1]):
            d = indices[j]
            touched[m] = d
            m += 1 - seen[d]
            seen[d] = 1
            acc[d] += data[j] * w
    return touched, m


# --------------------------------------------------------------------------- bounded heap
# A min-heap (hs scores, hd docs) whose root is the worst entry kept; its capacity is the
# arrays' length, at least 1 once anything is offered (no bounds checks in compiled code).


@_inline
def _worse(s1: float, d1: int | np.integer, s2: float, d2: int | np.integer):
    """(s1, d1) ranks below (s2, d2): a lower score, or the same score and a higher doc index."""
    return s1 < s2 or (s1 == s2 and d1 > d2)


@_inline
def _sift_up(hs: np.ndarray, hd: np.ndarray, pos: int, key: float, d: int | np.integer):
    """Place (key, d) in the hole at ``pos``, moving better parents down into it."""
    while pos > 0:
        parent = (pos - 1) >> 1
        if not _worse(key, d, hs[parent], hd[parent]):
            break
        hs[pos] = hs[parent]
        hd[pos] = hd[parent]
        pos = parent
    hs[pos] = key
    hd[pos] = d


@_inline
def _sift_down(hs: np.ndarray, hd: np.ndarray, size: int, key: float, d: int | np.integer):
    """Place (key, d) in the hole at the root of a heap of ``size`` entries, moving worse
    children up into it."""
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        right = child + 1
        if right < size and _worse(hs[right], hd[right], hs[child], hd[child]):
            child = right
        if not _worse(hs[child], hd[child], key, d):
            break
        hs[pos] = hs[child]
        hd[pos] = hd[child]
        pos = child
    hs[pos] = key
    hd[pos] = d


@_inline
def _offer(hs: np.ndarray, hd: np.ndarray, size: int, key: float, d: int | np.integer):
    """Offer (key, d) to the heap holding ``size`` entries; returns the new size. A full heap
    takes it only when it beats the root, which it replaces."""
    if size < hs.shape[0]:
        _sift_up(hs, hd, size, key, d)
        return size + 1
    if _worse(hs[0], hd[0], key, d):
        _sift_down(hs, hd, size, key, d)
    return size


@_inline
def _drain(hs: np.ndarray, hd: np.ndarray, size: int):
    """The heap's entries best first, as (docs, scores); pops the worst into the last free
    slot. Leaves the heap arrays scrambled."""
    out_s = np.empty(size, dtype=np.float64)
    out_d = np.empty(size, dtype=np.int64)
    while size > 0:
        size -= 1
        out_s[size] = hs[0]
        out_d[size] = hd[0]
        _sift_down(hs, hd, size, hs[size], hd[size])
    return out_d, out_s


# --------------------------------------------------------------------------- select
# Each walk reads and clears every visited sum and compares it with rthr, a bound at or below
# every raw sum (before BM25+'s offset) that can still enter the heap, and above 0 for a
# positive query, so untouched docs fail it; the few that pass it and the mask go to
# _consider, where the heap compares the exact key = raw + offset. The read-clear-compare step
# is written out in each loop on purpose: as one inlined helper (read, clear, compare, offer,
# returning size and rthr) it made top_k about a third slower, for a reason not pinned down.


@_inline
def _raw_bound(root: float, offset: float, raw_floor: float):
    """A raw sum below this cannot reach ``root`` once the offset is added (rounding slack)."""
    return max(raw_floor, root - offset - (abs(root) + abs(offset)) * 1e-15)


@_inline
def _admits(allowed: np.ndarray, d: int | np.integer):
    """Whether the mask ``allowed`` (empty: no mask) lets doc ``d`` in."""
    return allowed.shape[0] == 0 or allowed[d]


@_inline
def _consider(raw: float, d: int | np.integer, hs: np.ndarray, hd: np.ndarray, size: int, offset: float, raw_floor: float):
    """Offer doc ``d`` (raw sum ``raw``, past the threshold and the mask) to the heap; returns
    the new (size, rthr)."""
    size = _offer(hs, hd, size, raw + offset, d)
    rthr = raw_floor
    if size == hs.shape[0]:
        rthr = _raw_bound(hs[0], offset, raw_floor)
    return size, rthr


@_inline
def _select_dense(
    acc: np.ndarray, n_docs: int, hs: np.ndarray, hd: np.ndarray, offset: float, allowed: np.ndarray, raw_floor: float
):
    """Every doc, 8 at a time: one max decides whether the block is worth a closer look.
    Returns the heap's size."""
    size = 0
    rthr = raw_floor
    n_full = n_docs - n_docs % 8
    for b in range(0, n_full, 8):
        top = acc[b]
        for i in range(b + 1, b + 8):
            top = acc[i] if acc[i] > top else top
        if top >= rthr:
            for d in range(b, b + 8):
                raw = acc[d]
                acc[d] = 0.0
                if raw >= rthr and _admits(allowed, d):
                    size, rthr = _consider(raw, d, hs, hd, size, offset, raw_floor)
        else:
            for d in range(b, b + 8):
                acc[d] = 0.0
    for d in range(n_full, n_docs):
        raw = acc[d]
        acc[d] = 0.0
        if raw >= rthr and _admits(allowed, d):
            size, rthr = _consider(raw, d, hs, hd, size, offset, raw_floor)
    return size


@_inline
def _select_postings(
    indptr: np.ndarray,
    indices: np.ndarray,
    cols: np.ndarray,
    acc: np.ndarray,
    hs: np.ndarray,
    hd: np.ndarray,
    offset: float,
    allowed: np.ndarray,
    raw_floor: float,
):
    """The query's postings again; a repeated doc reads its cleared 0 and fails the test.
    Returns the heap's size."""
    size = 0
    rthr = raw_floor
    for c in range(cols.shape[0]):
        col = cols[c]
        for j in range(indptr[col], indptr[col + 1]):
            d = np.int64(indices[j])
            raw = acc[d]
            acc[d] = 0.0
            if raw >= rthr and _admits(allowed, d):
                size, rthr = _consider(raw, d, hs, hd, size, offset, raw_floor)
    return size


@_inline
def _select_listed(
    touched: np.ndarray,
    m: int,
    acc: np.ndarray,
    hs: np.ndarray,
    hd: np.ndarray,
    offset: float,
    allowed: np.ndarray,
    raw_floor: float,
):
    """The ``m`` docs listed by :func:`_accumulate_listed`, each once. Returns the heap's size."""
    size = 0
    rthr = raw_floor
    for t in range(m):
        d = touched[t]
        raw = acc[d]
        acc[d] = 0.0
        if raw >= rthr and _admits(allowed, d):
            size, rthr = _consider(raw, d, hs, hd, size, offset, raw_floor)
    return size


# --------------------------------------------------------------------------- kernels


@_kernel
def scores(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, cols: np.ndarray, weights: np.ndarray, out: np.ndarray
):  # pragma: no cover - jitted
    """``out[doc] += `` the weighted contributions of ``cols`` (distinct, in query order)."""
    _accumulate(indptr, indices, data, cols, weights, out)


@_kernel
def top_k(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    ids: np.ndarray,
    col_positive: np.ndarray,
    offsets: np.ndarray,
    n_docs: int,
    k: int,
    allowed: np.ndarray,
    acc: np.ndarray,
):  # pragma: no cover - jitted
    """The best ``k`` docs (docs int64, scores float64; by score, then lower doc index) among
    those holding a query term and ``allowed`` (empty: all).

    ``ids``: the query's columns, -1 for a token outside the vocabulary. ``col_positive``: per
    column, whether every stored value is > 0. ``offsets``: BM25+'s per-column offset, or
    empty. ``acc``: >= n_docs float64 zeros, left all zero on return.
    """
    cols, mult = _distinct_columns(ids)
    if cols.shape[0] == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    weights, offset, positive, n_post = _column_facts(
        indptr, data, cols, mult, col_positive, offsets
    )
    if positive:
        _accumulate(indptr, indices, data, cols, weights, acc)
        hs = np.empty(min(k, n_post), dtype=np.float64)
        hd = np.empty(hs.shape[0], dtype=np.int64)
        if n_post * DENSE_RATIO >= n_docs:
            size = _select_dense(acc, n_docs, hs, hd, offset, allowed, TINY)
        else:
            size = _select_postings(indptr, indices, cols, acc, hs, hd, offset, allowed, TINY)
    else:
        touched, m = _accumulate_listed(indptr, indices, data, cols, weights, n_docs, acc)
        hs = np.empty(min(k, m), dtype=np.float64)
        hd = np.empty(hs.shape[0], dtype=np.int64)
        size = _select_listed(touched, m, acc, hs, hd, offset, allowed, -np.inf)
    return _drain(hs, hd, size)


@_kernel
def scope_df(indptr: np.ndarray, indices: np.ndarray, allowed: np.ndarray, df: np.ndarray):  # pragma: no cover - jitted
    """``df[c]``: how many of column ``c``'s postings are of an ``allowed`` document (a scope's
    document frequencies, ``bm25_scope.ScopedBM25``), in one pass and no temporary array."""
    for c in range(indptr.shape[0] - 1):
        n = 0
        for j in range(indptr[c], indptr[c + 1]):
            if allowed[indices[j]]:
                n += 1
        df[c] = n
