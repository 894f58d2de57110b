"""Dense retrieval over FAISS: exact inner product (``IndexFlatIP``) by default, HNSW as an option.

Vectors are whatever the embedder produced (L2-normalised, so inner product = cosine). Scores
returned by :meth:`DenseIndex.search` and :meth:`DenseIndex.scores_for` are computed the same way
(float64 dot products rounded to float32), so a document scores identically whether it was found
by the dense index or only by BM25.
"""
from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from searchkit.errors import DataError, InputError
from searchkit import registries
from searchkit._omp import prefer_passive_wait
from searchkit.config import ConfigError, DenseConfig
from searchkit.index.writes import write_failure
from searchkit.util import problem_of, atomic_write_text, read_json_file

if TYPE_CHECKING:
    import faiss

__all__ = ["DenseIndex", "INDEX_KINDS", "set_faiss_threads", "write_failure"]


_REASONS = {os.strerror(code): code for code in (errno.ENOSPC, errno.EFBIG, errno.EIO, errno.EROFS, errno.EACCES)
            + ((errno.EDQUOT,) if hasattr(errno, "EDQUOT") else ())}


def _faiss_os_error(message: str) -> OSError | None:
    """The system error a faiss write error ends with (``(No space left on device)``), if any."""
    for reason, code in _REASONS.items():
        if message.rstrip().endswith(f"({reason})"):
            return OSError(code, reason)
    return None


_FORMAT_VERSION = 1
_INDEX_FILE = "dense.faiss"
_META_FILE = "dense.json"
_ADD_CHUNK = 16_384
_EXACT_MAX_ALLOWED = 10_000  # hnsw + mask: score the allowed docs exactly when there are this few

_faiss_mod: Any = None


def _faiss() -> Any:
    """Import faiss on first use and size its OpenMP pool (``$SEARCHKIT_FAISS_THREADS``, else the
    CPUs this process may run on)."""
    global _faiss_mod
    if _faiss_mod is None:
        prefer_passive_wait()
        import faiss

        _faiss_mod = faiss
        env = os.environ.get("SEARCHKIT_FAISS_THREADS", "").strip()
        set_faiss_threads(int(env) if env.isdigit() and int(env) > 0 else None)
    return _faiss_mod


def set_faiss_threads(n: int | None = None) -> int:
    """Set FAISS's OpenMP thread count (None: the CPUs available to this process). Returns it."""
    prefer_passive_wait()
    import faiss

    if n is None:
        try:
            n = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not on Linux
            n = os.cpu_count() or 1
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"faiss thread count must be a positive integer, got {n!r}")
    faiss.omp_set_num_threads(n)
    return n


def _new_flat(dim: int, cfg: DenseConfig) -> Any:  # noqa: ARG001 - every factory takes (dim, cfg)
    return _faiss().IndexFlatIP(dim)


def _new_hnsw(dim: int, cfg: DenseConfig) -> Any:
    faiss = _faiss()
    index = faiss.IndexHNSWFlat(dim, cfg.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = cfg.ef_construction
    index.hnsw.efSearch = cfg.ef_search
    return index


INDEX_KINDS: dict[str, Callable[[int, Any], Any]] = {"flat": _new_flat, "hnsw": _new_hnsw}
"""Dense index kinds (``dense.index``): name -> factory(dim, DenseConfig) returning an empty FAISS
index: ``flat`` (exact inner product) or ``hnsw`` (approximate, Malkov & Yashunin 2018; graph
degree ``dense.hnsw_m``, candidate lists ``dense.ef_construction`` / ``dense.ef_search``)."""
registries.provide("dense index kind", INDEX_KINDS)  # the config reads the names there (issue 42 item 3)


def _stored_vectors(index: Any, n: int, dim: int) -> np.ndarray:
    """A read-only, zero-copy view of the vectors held by a flat or HNSW-flat FAISS index."""
    faiss = _faiss()
    flat = index if isinstance(index, faiss.IndexFlat) else faiss.downcast_index(index.storage)
    if n == 0:
        return np.zeros((0, dim), dtype=np.float32)
    view = faiss.rev_swig_ptr(flat.get_xb(), n * dim).reshape(n, dim)
    view.flags.writeable = False
    return view


class DenseIndex:
    """A FAISS index over document vectors; doc ``i`` is row ``i`` of the vectors it was built on.

    Build with :meth:`build`, or :meth:`load` a saved one. ``n`` docs of dimension ``dim``.
    """

    def __init__(self, index: faiss.IndexFlat | faiss.IndexHNSW, cfg: DenseConfig) -> None:
        self._index = index
        self.cfg = cfg
        self.n = int(index.ntotal)
        self.dim = int(index.d)
        self._vectors = _stored_vectors(index, self.n, self.dim)

    def __repr__(self) -> str:
        return f"DenseIndex(kind={self.cfg.index!r}, n={self.n}, dim={self.dim})"

    @property
    def kind(self) -> str:
        return self.cfg.index

    @property
    def vectors(self) -> np.ndarray:
        """The indexed vectors, ``(n, dim)`` float32, read-only (a view into the FAISS index)."""
        return self._vectors

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        cfg: DenseConfig | None = None,
        *,
        show_progress: bool = False,
        desc: str = "indexing vectors",
    ) -> "DenseIndex":
        """Index ``vectors`` (``(n, dim)``, finite; float32 or convertible) as the ``DenseConfig``
        ``cfg`` says (``index``, ``hnsw_m``, ``ef_construction``, ``ef_search``; default: the shipped one).

        Raises:
            ValueError: vectors that are not a finite 2-D array with ``dim >= 1``.
        """
        if cfg is None:
            cfg = DenseConfig()
        x = np.asarray(vectors)
        if x.ndim != 2 or x.shape[1] < 1:
            raise ValueError(f"vectors must be a 2-D array (n, dim) with dim >= 1, got shape {x.shape}")
        if not np.issubdtype(x.dtype, np.number) or np.iscomplexobj(x):
            raise ValueError(f"vectors must be real numbers, got dtype {x.dtype}")
        x = np.ascontiguousarray(x, dtype=np.float32)
        finite = np.isfinite(x).all(axis=1)
        if not finite.all():
            raise ValueError(f"vectors row {int(np.flatnonzero(~finite)[0])} holds NaN or infinity")
        index = INDEX_KINDS[cfg.index](x.shape[1], cfg)
        from tqdm.auto import tqdm

        with tqdm(total=x.shape[0], desc=desc, unit="vec",
                  disable=not show_progress or x.shape[0] == 0) as bar:
            for start in range(0, x.shape[0], _ADD_CHUNK):
                chunk = x[start:start + _ADD_CHUNK]
                index.add(chunk)
                bar.update(chunk.shape[0])
        return cls(index, cfg)

    # -- search ----------------------------------------------------------------
    def search(self, qvec: np.ndarray, k: int,
               allowed: np.ndarray | None = None, *, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` docs with the highest inner product with ``qvec``.

        Args:
            qvec: query vector, shape ``(dim,)`` or ``(1, dim)``.
            k: number of docs wanted (fewer come back when fewer docs exist or are allowed).
            allowed: optional bool mask of shape ``(n,)``; a doc whose entry is False never takes
                a slot. Exact for ``flat``; for ``hnsw`` the allowed docs are scored exactly when
                there are at most 10,000 of them, else the graph is searched with the mask as a
                FAISS ``IDSelectorBitmap`` (and scored exactly should it come back short).
            exact: score every allowed doc exactly whatever the index kind, so docs outside
                ``allowed`` cannot change the result (an ANN graph walks through them).

        Returns:
            ``(idx, scores)``: int64 doc rows and float32 scores, best first (ties by row).
        """
        q = self._check_query(qvec)
        k = self._check_k(k)
        mask = self._check_mask(allowed)
        if k == 0 or self.n == 0:
            return _empty()
        if self.kind == "flat" or exact:
            return self._exact_subset(q, k, None if mask is None else np.flatnonzero(mask))
        faiss = _faiss()
        if mask is None:
            n_allowed = self.n
            params = faiss.SearchParametersHNSW(efSearch=max(self.cfg.ef_search, k)) \
                if self.kind == "hnsw" else None
            keep: tuple[Any, ...] = ()
        else:
            n_allowed = int(mask.sum())
            if n_allowed == 0:
                return _empty()
            if self.kind == "hnsw" and n_allowed <= _EXACT_MAX_ALLOWED:
                return self._exact_subset(q, k, np.flatnonzero(mask))
            bits = np.packbits(mask, bitorder="little")
            selector = faiss.IDSelectorBitmap(self.n, faiss.swig_ptr(bits))
            keep = (bits, selector)  # the selector only points at bits: keep both alive
            params = (faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.cfg.ef_search, k))
                      if self.kind == "hnsw" else faiss.SearchParameters(sel=selector))
        _, labels = self._index.search(q[None, :], min(k, n_allowed), params=params)
        del keep
        idx = labels[0][labels[0] >= 0].astype(np.int64)
        if self.kind == "hnsw" and idx.shape[0] < min(k, n_allowed):
            rows = np.arange(self.n) if mask is None else np.flatnonzero(mask)
            return self._exact_subset(q, k, rows)
        return _ranked(idx, self._exact_scores(q, idx))

    def scores_for(self, qvec: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Exact inner products of ``qvec`` with docs ``idx`` (any order, float32, same order).

        Raises:
            ValueError: a doc row outside ``0..n-1``, or a query of the wrong dimension.
        """
        q = self._check_query(qvec)
        rows = np.asarray(idx)
        if rows.size == 0:
            return np.zeros(0, dtype=np.float32)
        if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"idx must be a 1-D array of integer doc rows, got {rows.dtype} shape {rows.shape}")
        bad = (rows < 0) | (rows >= self.n)
        if bad.any():
            raise ValueError(f"doc row {int(rows[bad][0])} is out of range for an index of {self.n} docs")
        return self._exact_scores(q, rows.astype(np.int64))

    # -- persistence -------------------------------------------------------------
    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``dense.faiss`` and ``dense.json`` into ``folder`` (created if missing); each
        file is written to a temporary name and renamed, so a crash leaves no half file."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        c = self.cfg
        meta = {"format_version": _FORMAT_VERSION, "n": self.n, "dim": self.dim, "kind": c.index,
                "hnsw_m": c.hnsw_m, "ef_construction": c.ef_construction, "ef_search": c.ef_search}
        faiss = _faiss()
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".dense-", suffix=".tmp")
        os.close(fd)
        try:
            try:
                faiss.write_index(self._index, tmp)
            except RuntimeError as e:  # faiss: "... write error in PATH: N != M (No space left on device)"
                raise write_failure(out / _INDEX_FILE, _faiss_os_error(str(e))) from None
            os.replace(tmp, out / _INDEX_FILE)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        atomic_write_text(out / _META_FILE, json.dumps(meta, indent=2, sort_keys=True) + "\n")
        return out

    @classmethod
    def load(cls, folder: str | os.PathLike[str], *, ef_search: int | None = None) -> "DenseIndex":
        """Load an index written by :meth:`save` (``ef_search``, a query-time knob, replaces the
        stored one when given).

        Raises:
            FileNotFoundError: ``dense.json`` or ``dense.faiss`` is missing (names the path).
            ValueError: the files are unreadable, of another format version, or disagree.
        """
        root = Path(folder)
        meta_path, index_path = root / _META_FILE, root / _INDEX_FILE
        for p in (meta_path, index_path):
            if not p.is_file():
                raise FileNotFoundError(f"dense index file {p} is missing")
        try:
            meta = read_json_file(meta_path)  # a regular file only: a FIFO is refused, never waited on
        except DataError as e:
            raise ValueError(f"dense index metadata {meta_path} is unreadable: {problem_of(e)}") from None
        except OSError as e:
            raise ValueError(f"dense index metadata {meta_path} is unreadable: {e.strerror or type(e).__name__}") from None
        if not isinstance(meta, dict) or meta.get("format_version") != _FORMAT_VERSION:
            got = meta.get("format_version") if isinstance(meta, dict) else None
            raise ValueError(f"dense index {meta_path}: format_version {got!r}, expected {_FORMAT_VERSION}")
        try:
            cfg = DenseConfig(index=meta["kind"], hnsw_m=meta["hnsw_m"], ef_construction=meta["ef_construction"],
                              ef_search=ef_search if ef_search is not None else meta["ef_search"])
        except (KeyError, TypeError, ValueError, ConfigError) as e:
            raise ValueError(f"dense index metadata {meta_path} is invalid: {str(e)[:200]}") from None
        faiss = _faiss()
        try:
            index = faiss.read_index(str(index_path))
        except RuntimeError as e:
            raise ValueError(f"dense index file {index_path} is unreadable: {str(e).splitlines()[0]}") from None
        # read_index already returns the concrete class (downcasting again would drop ownership)
        expected_type = faiss.IndexHNSWFlat if cfg.index == "hnsw" else faiss.IndexFlatIP
        if not isinstance(index, expected_type) or index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise ValueError(f"dense index file {index_path} holds a {type(index).__name__}, "
                             f"but {meta_path} says kind {cfg.index!r}")
        if index.ntotal != meta.get("n") or index.d != meta.get("dim"):
            raise ValueError(f"dense index file {index_path} has n={index.ntotal}, dim={index.d}; "
                             f"{meta_path} says n={meta.get('n')}, dim={meta.get('dim')}")
        if cfg.index == "hnsw":
            index.hnsw.efSearch = cfg.ef_search
        return cls(index, cfg)

    # -- internals ---------------------------------------------------------------
    def _check_query(self, qvec: np.ndarray) -> np.ndarray:
        q = np.asarray(qvec)
        if q.ndim == 2 and q.shape[0] == 1:
            q = q[0]
        if q.ndim != 1 or q.shape[0] != self.dim:
            raise ValueError(f"query vector must have shape ({self.dim},), got {np.shape(qvec)}")
        if not np.issubdtype(q.dtype, np.number):
            raise ValueError(f"query vector must be numeric, got dtype {q.dtype}")
        q = np.ascontiguousarray(q, dtype=np.float32)
        if not np.isfinite(q).all():
            raise ValueError("query vector holds NaN or infinity")
        return q

    @staticmethod
    def _check_k(k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise InputError(f"k must be a non-negative integer, got {k!r}")
        return int(k)

    def _check_mask(self, allowed: np.ndarray | None) -> np.ndarray | None:
        if allowed is None:
            return None
        mask = np.asarray(allowed)
        if mask.dtype != np.bool_ or mask.shape != (self.n,):
            raise ValueError(f"allowed must be a bool array of shape ({self.n},), "
                             f"got {mask.dtype} shape {mask.shape}")
        return mask

    def _exact_scores(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return (self._vectors[rows].astype(np.float64) @ q.astype(np.float64)).astype(np.float32)

    def _exact_subset(self, q: np.ndarray, k: int, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k over ``rows`` (None: every doc) by a BLAS mat-vec; for one query this is
        about twice as fast as FAISS's flat scan on 2 cores (benchmarks/README.md)."""
        if rows is None:
            rough = self._vectors @ q
            rows = np.arange(self.n)
        elif rows.shape[0] and (span := int(rows[-1]) - int(rows[0]) + 1) <= rows.shape[0] * _GATHER_SHARE:
            # a large share of the rows between the first and the last allowed one (a caller's
            # scope: a space's passages are indexed together): one pass over that stretch in place
            # and a pick is several times cheaper than copying the rows out first (the exact
            # scores below decide the ranking; ``rows`` is sorted, flatnonzero's)
            lo = int(rows[0])
            rough = (self._vectors[lo:lo + span] @ q)[rows - lo]
        else:
            rough = self._vectors[rows] @ q
        if rows.shape[0] > k:
            # keep a margin over k so float32 rounding can't push a true top-k doc out
            top = np.argpartition(-rough, k - 1)[:k]
            cut = rough[top].min()
            top = np.flatnonzero(rough >= cut - 1e-5)
        else:
            top = np.arange(rows.shape[0])
        idx = rows[top].astype(np.int64)
        idx, scores = _ranked(idx, self._exact_scores(q, idx))
        return idx[:k], scores[:k]


_GATHER_SHARE = 6
"""``_exact_subset`` scores every row from the first allowed to the last and picks the allowed ones
when they are at least 1 in this many of that stretch (copying a row out costs several times
scoring it in place: 102k x 384, a quarter of the rows: 19 ms CPU copied, 13 ms through every row;
an eighth: 7.6 and 8.4). A caller of one space of four reads that space's quarter of the vectors."""


def _ranked(idx: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((idx, -scores.astype(np.float64)))
    return idx[order], scores[order]


def _empty() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)

