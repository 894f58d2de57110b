"""The BM25 variants and the settings an index is built with (part of ``searchkit.index.bm25``).

Each variant is two or three tiny pure functions (idf, tf weight, weight of an absent term) in the
``VARIANTS`` registry; ``_index_config`` checks the config's ``bm25`` section an index stores.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt

from searchkit.errors import InputError
from searchkit import registries
from searchkit.config import BM25Config, ConfigError

_DTYPES = {"float32": np.float32, "float64": np.float64}


# --------------------------------------------------------------------------- variant functions
# idf(df, n_docs, p) -> idf per vocabulary term; tf(tf, rel_len, p) -> weight of a present term,
# where rel_len = doc_len / avgdl; absent(p) -> weight (times idf) every document gets for a query
# term it does not contain (0 except BM25+ as rank_bm25 computes it). ``p`` is the BM25Config
# section: k1 (tf saturation), b (length normalisation), epsilon (Okapi's idf floor factor),
# delta (BM25L / BM25+ lower bound).


def _idf_okapi(df: np.ndarray, n_docs: int, p: BM25Config) -> np.ndarray:
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    if idf.size == 0:
        return idf
    # fsum: the mean must not depend on the order of the vocabulary (a scoped index, H15/H14,
    # lists the same terms in another order than an index built over those documents alone)
    floor = p.epsilon * (math.fsum(idf.tolist()) / idf.size)
    return np.where(idf < 0, floor, idf)


def _idf_lucene(df: np.ndarray, n_docs: int, _p: BM25Config) -> np.ndarray:
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def _idf_bm25l(df: np.ndarray, n_docs: int, _p: BM25Config) -> np.ndarray:
    return math.log(n_docs + 1) - np.log(df + 0.5)


def _idf_bm25plus(df: np.ndarray, n_docs: int, _p: BM25Config) -> np.ndarray:
    return np.log((n_docs + 1) / df)


def _tf_okapi(tf: np.ndarray, rel_len: np.ndarray, p: BM25Config) -> np.ndarray:
    return tf * (p.k1 + 1) / (tf + p.k1 * (1 - p.b + p.b * rel_len))


def _tf_lucene(tf: np.ndarray, rel_len: np.ndarray, p: BM25Config) -> np.ndarray:
    return tf / (tf + p.k1 * (1 - p.b + p.b * rel_len))


def _tf_bm25l(tf: np.ndarray, rel_len: np.ndarray, p: BM25Config) -> np.ndarray:
    ctd = tf / (1 - p.b + p.b * rel_len)
    return tf * (p.k1 + 1) * (ctd + p.delta) / (p.k1 + ctd + p.delta)


def _absent_none(_p: BM25Config) -> float:
    return 0.0


def _absent_delta(p: BM25Config) -> float:
    return p.delta


@dataclass(frozen=True)
class BM25Variant:
    """One BM25 variant: the score of doc d for query q is
    ``sum over query tokens t (with multiplicity) of idf(t) * (tf(t, d) + absent)`` where ``tf``
    is 0 for a term d lacks. ``formula`` states it in words for ``repr``/docs."""

    name: str
    idf: Callable[[np.ndarray, int, BM25Config], np.ndarray]
    tf: Callable[[np.ndarray, np.ndarray, BM25Config], np.ndarray]
    absent: Callable[[BM25Config], float]
    formula: str


VARIANTS: dict[str, BM25Variant] = {
    "okapi": BM25Variant(
        "okapi",
        _idf_okapi,
        _tf_okapi,
        _absent_none,
        "Robertson et al. (TREC-3, 1994) as rank_bm25.BM25Okapi: idf = ln((N-n+0.5)/(n+0.5)), a "
        "negative idf replaced by epsilon * mean idf over the vocabulary; "
        "tf part = tf*(k1+1) / (tf + k1*(1-b+b*dl/avgdl))",
    ),
    "lucene": BM25Variant(
        "lucene",
        _idf_lucene,
        _tf_lucene,
        _absent_none,
        "Lucene 8+ BM25Similarity: idf = ln(1 + (N-n+0.5)/(n+0.5)); "
        "tf part = tf / (tf + k1*(1-b+b*dl/avgdl)) (exact dl, not Lucene's lossy norm encoding)",
    ),
    "bm25l": BM25Variant(
        "bm25l",
        _idf_bm25l,
        _tf_bm25l,
        _absent_none,
        "Lv & Zhai (CIKM 2011) as rank_bm25.BM25L computes it: idf = ln(N+1) - ln(n+0.5); "
        "ctd = tf/(1-b+b*dl/avgdl); tf part = tf*(k1+1)*(ctd+delta)/(k1+ctd+delta) (the leading "
        "tf factor is rank_bm25's, not the paper's)",
    ),
    "bm25plus": BM25Variant(
        "bm25plus",
        _idf_bm25plus,
        _tf_okapi,
        _absent_delta,
        "Lv & Zhai (CIKM 2011) as rank_bm25.BM25Plus computes it: idf = ln((N+1)/n); "
        "contribution = idf * (delta + tf*(k1+1)/(k1*(1-b+b*dl/avgdl) + tf)), the delta part "
        "given to every document, containing the term or not",
    ),
}
registries.provide("BM25 variant", VARIANTS)  # the config reads the names there (issue 42 item 3)


def get_variant(name: str) -> BM25Variant:
    """The registered variant called ``name``; ValueError listing the valid names otherwise."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise InputError(
            f"unknown BM25 variant {name!r}; valid variants: {', '.join(sorted(VARIANTS))}"
        ) from None


# --------------------------------------------------------------------------- validation helpers


_INDEX_FIELDS = ("variant", "k1", "b", "epsilon", "delta")  # what of BM25Config an index stores


def _index_config(cfg: BM25Config) -> BM25Config:
    """The index-relevant part of the ``BM25Config`` section ``cfg`` (variant, k1, b, epsilon,
    delta; the query-time ``depth`` and ``enabled`` left at their defaults), checked.

    A section built inside ``SearchConfig.from_dict`` is checked already; this also catches one
    built by hand (a dataclass does not check the types of its fields)."""
    if not isinstance(cfg, BM25Config):
        raise ValueError(
            f"BM25 settings must be a searchkit.config.BM25Config (the config's bm25 section), "
            f"got {type(cfg).__name__}"
        )
    for name in _INDEX_FIELDS[1:]:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"BM25 parameter {name} must be a number, got {value!r}")
        try:
            finite = math.isfinite(float(value))
        except OverflowError:
            finite = False
        if not finite:
            raise ValueError(f"BM25 parameter {name} must be finite, got {value!r}")
    if not isinstance(cfg.variant, str):
        raise ValueError(f"BM25 variant must be a name, got {cfg.variant!r}")
    problems = cfg.problems()
    if problems:
        raise ConfigError(problems)
    return BM25Config(
        variant=get_variant(cfg.variant).name,
        k1=float(cfg.k1),  # _INDEX_FIELDS[1:], each a float
        b=float(cfg.b),
        epsilon=float(cfg.epsilon),
        delta=float(cfg.delta),
    )


def _dtype_name(dtype: npt.DTypeLike) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in _DTYPES:
        raise InputError(f"BM25 dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    return name
