"""Saving and loading a BM25 index (part of ``searchkit.index.bm25``): ``bm25.npz`` (the arrays, no
pickle) and ``bm25.json`` (the settings and the vocabulary), each written to a temporary name and
renamed; a load checks every array before the compiled kernels may index with it.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np

from searchkit.errors import DataError
from searchkit.config import BM25Config
from searchkit.index.bm25_variants import _DTYPES, _INDEX_FIELDS, _dtype_name, _index_config
from searchkit.index.writes import write_failure
from searchkit.util import problem_of, read_json_file

if TYPE_CHECKING:  # the class these methods belong to (it imports this module)
    from searchkit.index.bm25 import BM25Index

_FORMAT = "searchkit.bm25"
_FORMAT_VERSION = 1
_JSON_NAME = "bm25.json"
_NPZ_NAME = "bm25.npz"


class BM25Storage:
    """``BM25Index.save`` and ``BM25Index.load``. A base of ``BM25Index``; ``save`` reads the
    index's arrays, ``load`` (``cls``) makes the index class."""

    # what ``save`` reads, set by ``BM25Index.__init__`` (annotations only: no class attributes)
    _vocab: dict[str, int]
    _n_docs: int
    _data: np.ndarray
    _indices: np.ndarray
    _indptr: np.ndarray
    _idf: np.ndarray
    _doc_len: np.ndarray
    _tf: np.ndarray | None
    params: Callable[[], dict[str, Any]]  # BM25Index.params

    def save(self, folder: str | os.PathLike) -> Path:
        """Write ``bm25.npz`` (arrays) and ``bm25.json`` (params, vocabulary) into ``folder``.

        Each file is written to a temporary name and renamed, so a crash leaves no half file.
        No pickle. Returns the folder.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        vocab_list = [""] * len(self._vocab)
        for term, col in self._vocab.items():
            vocab_list[col] = term
        meta = {
            "format": _FORMAT,
            "format_version": _FORMAT_VERSION,
            "params": self.params(),
            "n_docs": self._n_docs,
            "n_terms": len(vocab_list),
            "nnz": int(self._data.size),
            "vocab": vocab_list,
        }
        npz_tmp = folder / f".{_NPZ_NAME}.tmp"
        json_tmp = folder / f".{_JSON_NAME}.tmp"
        try:
            with open(npz_tmp, "wb") as fh:
                # Any: savez's keywords are arrays but for its own bool allow_pickle
                arrays: dict[str, Any] = {
                    "data": self._data,
                    "indices": self._indices,
                    "indptr": self._indptr,
                    "idf": self._idf,
                    "doc_len": self._doc_len,
                }
                if self._tf is not None:
                    arrays["tf"] = self._tf
                np.savez(fh, **arrays)
            json_tmp.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        except OSError as exc:  # a full disk: say so, naming the file (issue 27, item 13)
            for tmp in (npz_tmp, json_tmp):
                tmp.unlink(missing_ok=True)
            raise write_failure(folder / _NPZ_NAME, exc) from None
        os.replace(npz_tmp, folder / _NPZ_NAME)
        os.replace(json_tmp, folder / _JSON_NAME)
        return folder

    @classmethod
    def load(cls, folder: str | os.PathLike) -> BM25Index:
        """Load an index written by :meth:`save`; ValueError/FileNotFoundError naming the file
        when something is missing, malformed or from another format version."""
        folder = Path(folder)
        json_path, npz_path = folder / _JSON_NAME, folder / _NPZ_NAME
        for path in (json_path, npz_path):
            if not path.is_file():
                raise FileNotFoundError(f"BM25 index file missing: {path}")
        try:
            meta = read_json_file(json_path)  # a regular file only: a FIFO is refused, never waited on
        except DataError as exc:
            raise ValueError(f"{json_path}: {problem_of(exc)}") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError(f"{json_path}: not a searchkit BM25 index (format {_FORMAT!r} expected)")
        if meta.get("format_version") != _FORMAT_VERSION:
            raise ValueError(
                f"{json_path}: format_version {meta.get('format_version')!r}, this searchkit reads "
                f"{_FORMAT_VERSION}; rebuild the index"
            )
        try:
            p = meta["params"]
            values = {name: p[name] for name in _INDEX_FIELDS}
            dtype = _DTYPES[_dtype_name(p["dtype"])]
            vocab_list = meta["vocab"]
            n_docs = int(meta["n_docs"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{json_path}: missing or malformed field {exc}") from None
        try:
            params = _index_config(BM25Config(**values))
        except ValueError as exc:
            raise ValueError(f"{json_path}: {exc}; rebuild the index") from None
        try:
            with np.load(npz_path, allow_pickle=False) as z:
                arrays = {name: z[name] for name in ("data", "indices", "indptr", "idf", "doc_len")}
                tf = z["tf"] if "tf" in z.files else None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{npz_path}: unreadable BM25 arrays ({str(exc)[:100]})") from None
        n_terms = len(vocab_list)
        vocab = {term: col for col, term in enumerate(vocab_list)}
        problems = []
        if len(vocab) != n_terms:
            problems.append("vocab lists a term twice")
        if arrays["indptr"].shape != (n_terms + 1,):
            problems.append(f"indptr has {arrays['indptr'].shape[0]} entries, vocab {n_terms} terms")
        elif arrays["data"].shape != arrays["indices"].shape or arrays["data"].shape[0] != int(
            arrays["indptr"][-1]
        ):
            problems.append("data/indices lengths disagree with indptr")
        else:  # the compiled query kernels index with these unchecked
            ptr, idx = arrays["indptr"], arrays["indices"]
            if ptr.dtype.kind != "i" or idx.dtype.kind != "i":
                problems.append(f"indptr/indices must be integers, got {ptr.dtype}/{idx.dtype}")
            elif ptr[0] != 0 or (np.diff(ptr) < 0).any():
                problems.append("indptr does not start at 0 and never decrease")
            elif idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n_docs):
                problems.append(f"indices outside [0, n_docs={n_docs})")
        if arrays["doc_len"].shape != (n_docs,):
            problems.append(f"doc_len has {arrays['doc_len'].shape} entries, n_docs is {n_docs}")
        if arrays["idf"].shape != (n_terms,):
            problems.append("idf length differs from the vocabulary")
        if arrays["data"].dtype != dtype:
            problems.append(f"data dtype {arrays['data'].dtype} but params say {p['dtype']}")
        if tf is not None and (tf.shape != arrays["data"].shape or tf.dtype.kind != "i"):
            problems.append("tf must be integers, one per stored entry")
        if problems:
            raise ValueError(f"{folder}: inconsistent BM25 index: {'; '.join(problems)}")
        index_class = cast("type[BM25Index]", cls)  # this base's one subclass (its only user)
        return index_class(
            data=arrays["data"],
            indices=arrays["indices"],
            indptr=arrays["indptr"],
            idf=arrays["idf"],
            doc_len=arrays["doc_len"],
            vocab=vocab,
            config=params,
            tf=tf,
        )
