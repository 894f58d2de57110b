"""The embedding cache as one served version of a history index reaches it (issue 30; SPEC H3;
part of ``searchkit.tools.history``): ``VersionCache`` over the shared cache, sealed when a newer
version is served and erased text leaves the shared cache."""
from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from searchkit.index.cache import EmbeddingCache
from searchkit.index.embedding import Embedder

if TYPE_CHECKING:
    from searchkit.searcher import Searcher


class VersionCache:
    """The embedding cache as one version of a history index reaches it: the shared cache, until
    ``seal`` (a newer version is served and erased text): then ``embed`` still answers, from a
    private in-memory cache, and stores nothing in the shared one. A text the shared cache lacks is
    embedded with no lock held (a served call's new query takes tens of milliseconds of the model
    while other calls' lookups go on) and stored under this cache's lock, only if not sealed
    (``EmbeddingCache.embed``'s ``store_guard``); ``seal`` takes the same lock, so once it returns
    no call of this version writes to the shared cache."""

    def __init__(self, cache: Any) -> None:
        self.shared = cache
        self._lock = threading.Lock()
        self._sealed = False

    def embed(self, embedder: Embedder, texts: Sequence[str], kind: str, *args: Any, **kw: Any) -> np.ndarray:
        with self._lock:
            sealed = self._sealed
        if not sealed:
            return self.shared.embed(embedder, texts, kind, *args, store_guard=self._storing, **kw)
        private = EmbeddingCache(None)
        try:
            return private.embed(embedder, texts, kind, *args, **kw)
        finally:
            private.close()

    @contextlib.contextmanager
    def _storing(self) -> Iterator[bool]:
        """Whether this version may store in the shared cache, held until the store is done."""
        with self._lock:
            yield not self._sealed

    def seal(self) -> None:
        with self._lock:
            self._sealed = True

    def __getattr__(self, name: str) -> Any:
        if name == "shared":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.shared, name)

    def __len__(self) -> int:
        return len(self.shared)

    def __repr__(self) -> str:
        return f"VersionCache({self.shared!r})"


def shared_cache(cache: EmbeddingCache | VersionCache | None) -> EmbeddingCache | None:
    return cache.shared if isinstance(cache, VersionCache) else cache


def own_cache(searcher: Searcher) -> None:
    """Give this version's retrievers their own ``VersionCache`` over the shared cache."""
    for retriever in getattr(searcher, "retrievers", {}).values():
        cache = getattr(retriever, "cache", None)
        if cache is not None:
            retriever.cache = VersionCache(shared_cache(cache))


def version_caches(searcher: Searcher) -> list[VersionCache]:
    return [r.cache for r in getattr(searcher, "retrievers", {}).values()
            if isinstance(getattr(r, "cache", None), VersionCache)]
