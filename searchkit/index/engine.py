"""Embedding engines: who embeds the passages an index build needs.

The dense retriever's build asks the *current* engine for its passage vectors, always through the
embedding cache (SPEC H16: nothing is embedded twice). ``LocalEngine`` (the default) embeds the
texts the cache lacks in this process, batch after batch (``EmbeddingCache.embed``). The Ray engine
(``searchkit.scale.ray_engine.RayEngine``, the ``scale`` extra) sends the same texts, cut into the
same batches, to a pool of Ray actors and writes the vectors back into the cache from the driver;
the vectors, the index and its fingerprint are the same either way.

An engine is chosen for a block of code with ``using(engine)`` (the CLI's ``--engine``); code that
builds indexes (``Searcher.build``, the eval harness, ``tune_fusion``) needs no parameter for it.

An engine that embeds elsewhere asks the cache itself: ``EmbeddingCache.missing`` (which distinct
texts it lacks, in the order ``EmbeddingCache.embed`` would embed them, and the family's dimension)
and ``EmbeddingCache.put`` (write vectors computed elsewhere, checked as any embedder's are); this
module's ``missing`` and ``store`` are those two calls.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence

import numpy as np

from searchkit.errors import InputError

if TYPE_CHECKING:
    from .cache import EmbeddingCache
    from .embedding import Embedder

__all__ = ["EmbeddingEngine", "LocalEngine", "LOCAL", "current", "using", "make_engine", "missing", "store",
           "register", "names"]

_MAKERS: dict[str, Callable[..., Any]] = {}
"""Engines other than ``local`` by name: ``make(address=..., workers=...)`` gives one. Filled by
the packages that provide them (``searchkit.scale`` registers ``ray`` when imported), so
this module, a layer below them, never imports them."""


def register(name: str, make: Callable[..., Any]) -> None:
    """Make ``name`` an engine ``make_engine`` accepts: ``make(address=..., workers=...)`` returns it."""
    if name == "local":
        raise ValueError("'local' is this process's engine and cannot be replaced")
    _MAKERS[name] = make


def names() -> tuple[str, ...]:
    """The engine names ``make_engine`` accepts now: ``local`` and every registered one."""
    return ("local", *sorted(_MAKERS))


class EmbeddingEngine(Protocol):
    """Embeds the passages of a build through the cache; ``name`` is ``local`` or ``ray``."""

    name: str

    def embed_passages(self, cache: EmbeddingCache, embedder: Embedder, texts: Sequence[str], *, batch_size: int,
                       show_progress: bool = False, desc: str | None = None) -> np.ndarray:
        """Vectors of ``texts`` (float32, in input order), exactly as ``cache.embed(embedder, texts,
        "passage", batch_size=batch_size)`` gives them, embedding only what the cache lacks."""


class LocalEngine:
    """This process embeds, batch after batch (``EmbeddingCache.embed``)."""

    name = "local"

    def embed_passages(self, cache: EmbeddingCache, embedder: Embedder, texts: Sequence[str], *, batch_size: int,
                       show_progress: bool = False, desc: str | None = None) -> np.ndarray:
        return cache.embed(embedder, texts, "passage", batch_size=batch_size, show_progress=show_progress,
                           desc=desc)

    def __repr__(self) -> str:
        return "LocalEngine()"


LOCAL = LocalEngine()

_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("searchkit_embedding_engine", default=LOCAL)


def current() -> Any:
    """The engine builds use now (``LOCAL`` unless inside ``using``)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(engine: EmbeddingEngine | None) -> Iterator[Any]:
    """Builds inside this block embed their passages with ``engine``."""
    token = _CURRENT.set(engine if engine is not None else LOCAL)
    try:
        yield engine
    finally:
        _CURRENT.reset(token)


def make_engine(name: str, *, address: str | None = None, workers: int | None = None) -> Any:
    """The engine called ``name``: ``local``, or a registered one (``ray``, once
    ``searchkit.scale`` is imported: joins the cluster at ``address``, else starts a local
    one; ``workers`` embedding actors). ``ray`` needs the ``scale`` extra: without it this raises
    ``ModuleNotFoundError`` for ``ray`` (the CLI prints the install hint)."""
    if name == "local":
        if address is not None or workers is not None:
            raise InputError("address and workers are options of the ray engine")
        return LOCAL
    make = _MAKERS.get(name)
    if make is None:
        raise InputError(f"unknown engine {name!r}; valid: {', '.join(names())}")
    return make(address=address, workers=workers)


# --------------------------------------------------------------------------- the cache, seen by an engine


def missing(cache: EmbeddingCache, embedder: Embedder | str, texts: Sequence[str], kind: str = "passage",
            dim: int | None = None) -> tuple[list[str], int | None]:
    """The distinct texts of ``texts`` the cache lacks under ``embedder``'s fingerprint and
    ``kind``, in the order ``cache.embed`` would embed them (first occurrence), and the family's
    dimension when the cache (or ``dim``) fixes it: ``cache.missing``. Embeds and stores nothing."""
    return cache.missing(embedder, texts, kind, dim=dim)


def store(cache: EmbeddingCache, embedder: Embedder | str, texts: Sequence[str], vectors: np.ndarray, kind: str = "passage",
          dim: int | None = None) -> None:
    """Write ``vectors`` (row i for ``texts[i]``), computed by ``embedder`` elsewhere, into the
    cache in one transaction, checked as the cache checks any embedder's answer (shape, finite
    values, the family's dimension): ``cache.put``. Texts already cached keep their vector."""
    cache.put(embedder, texts, vectors, kind, dim=dim)
