"""Fusion sweeps on Ray (``RayEngine.fusion_cells``): what a worker needs for one dataset, and the
task that scores one (grid point, dataset) cell.

The driver ships each dataset's searcher as its state through the object store (records,
passages, analyzer, retrievers; the saved index files only when that state does not pickle), with
its embedder and the vectors its cache holds for the dataset's query texts and for the sentences
the reranking stage reads. A worker builds the searcher once per process, its embedding retriever
reading those vectors from an in-memory cache (``EmbeddingCache.put``), and scores each cell with
``searchkit.evaluate.tune.fusion_cell``, as the sequential loop does: the same numbers.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from searchkit import retrievers
from searchkit.analyze import detect_language
from searchkit.config import SearchConfig
from searchkit.evaluate.tune import fusion_cell
from searchkit.index.cache import EmbeddingCache
from searchkit.scale.portable import _Portable, built, portable
from searchkit.searcher import Searcher

if TYPE_CHECKING:
    from searchkit.evaluate.datasets import Dataset
    from searchkit.index.embedding import Embedder

__all__ = ["fusion_payload", "fusion_task", "searcher_of"]


def fusion_payload(ds: Dataset, searcher: Searcher, folder: Path) -> dict[str, Any]:
    """What a sweep worker needs for one dataset: the searcher's state (``_searcher_state``; the
    saved index, file name -> bytes, written under ``folder`` only when that state does not pickle),
    the base config, the dataset, and the embedder (``portable``) with the vectors the driver's
    cache holds for its query texts and the sentences the reranking stage reads, which the worker
    puts in its own in-memory cache (``EmbeddingCache.put``): its searches find them there, as the
    driver's do."""
    state = _searcher_state(searcher)
    files = None
    if state is None:  # a retriever whose state does not pickle: the index travels as its saved files
        searcher.save(folder)
        files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    table = None
    embeds = retrievers.first(searcher.retrievers, retrievers.Embeds)
    if embeds is not None:
        vec = searcher.retrievers[embeds]
        # what evaluate_dataset does first (batched, through the cache), then each text the
        # per-query search prepares: the vectors the sequential path reads
        warm = sorted({q.text.strip() for q in ds.queries if q.text.strip()})
        searcher.warm(warm)
        texts = set(warm)
        for q in ds.queries:
            try:
                texts.add(searcher.validate_query(q.text))
            except (ValueError, TypeError):  # the sequential search refuses it too
                continue
        queries = sorted(texts)
        sentences = _rerank_sentences(searcher, ds)
        table = {"embedder": portable(vec.embedder), "dim": int(vec.dim),
                 "queries": (queries, np.stack([vec.prepare(t) for t in queries]) if queries else None),
                 "sentences": (list(sentences), np.stack(list(sentences.values())) if sentences else None)}
    # the registry entries of the retrievers that are not built in: a worker registers them (its
    # process imports their modules) before it reads the config and loads the index
    specs = [retrievers.get(n) for n in searcher.retrievers if n not in retrievers.BUILTINS]
    return {"state": state, "files": files, "config": searcher.config.to_json(), "dataset": ds, "queries": table,
            "retrievers": specs}


def _rerank_sentences(searcher: Searcher, ds: Dataset) -> dict[str, np.ndarray]:
    """The vectors of every text the reranking stage may read in this sweep, from the driver's
    cache (embedded there first): when one of the dataset's queries is in a language the stage runs
    for, what it reads of every passage (a query's head holds passages of any language: the
    sentences of one in the stage's languages, the whole text of another, ``rerank.reads``); else none."""
    cfg = searcher.config.rerank
    if not any(cfg.runs_for(detect_language(q.text)) for q in ds.queries):
        return {}
    texts = searcher.rerank_sentences(range(len(searcher.passages)))
    vecs = searcher.cache.embed(searcher.embedder, texts, "passage", show_progress=False) if texts else []
    return dict(zip(texts, vecs))


_LOADED: dict[str, tuple[Any, Any]] = {}
_LOADED_MAX = 4


def _loaded(key: str, refs: list[Any]) -> tuple[Any, Any]:
    """The (searcher, dataset) of a payload, loaded once per worker process."""
    if key in _LOADED:
        return _LOADED[key]
    import ray

    payload = ray.get(refs[0])
    searcher = searcher_of(payload)
    while len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = (searcher, payload["dataset"])
    return _LOADED[key]


def searcher_of(payload: dict[str, Any]) -> Any:
    """The searcher of a payload (``fusion_payload``), as the driver's: the retrievers that are not
    built in registered first (this process imports their modules), then its state rebuilt (or its
    saved files loaded), its embedding retriever reading the driver's vectors (``_prepared``)."""
    for spec in payload.get("retrievers", ()):
        retrievers.register(spec)
    embedder, cache = _prepared(payload["queries"])
    config = SearchConfig.from_json(payload["config"])
    if payload["state"] is not None:
        return _rebuilt(payload["state"], config, embedder, cache)
    return _from_files(payload["files"], config, embedder, cache)


def _prepared(table: dict[str, Any] | None) -> tuple[Any, Any]:
    """The (embedder, cache) a sweep worker's index is loaded with: the driver's embedder and an
    in-memory cache holding the vectors the driver prepared (its queries as ``query``, the
    reranking stage's sentences as ``passage``), so nothing is embedded on the worker; (None, None)
    for an index without an embedding retriever."""
    if table is None:
        return None, None
    embedder = built(table["embedder"])
    cache = EmbeddingCache(None)
    for kind, (texts, vectors) in (("query", table["queries"]), ("passage", table["sentences"])):
        if texts:
            cache.put(embedder, texts, vectors, kind, dim=table["dim"])
    return embedder, cache


def fusion_task(key: str, refs: list[Any], config_json: str, metric: str) -> tuple[float, float, dict[str, float]]:
    """One Ray task: config ``config_json`` on the dataset of payload ``refs[0]`` (``fusion_cell``)."""
    searcher, ds = _loaded(key, refs)
    cfg = SearchConfig.from_json(config_json)
    return fusion_cell(ds, searcher.with_config(cfg), cfg, metric)


def _searcher_state(searcher: Searcher) -> bytes | None:
    """The searcher's records, passages, analyzer and retrievers, pickled (``ray.cloudpickle``):
    each retriever as a recipe (``_Portable``: its locks made anew on the worker), a retriever that
    embeds without its embedder and cache (the worker gives its own, ``_prepared``). None when one
    of them does not pickle."""
    from ray import cloudpickle

    if not all(hasattr(r, "__dict__") for r in searcher.retrievers.values()):
        return None
    packed = {name: _Portable(r, leave=("embedder", "cache") if isinstance(r, retrievers.Embeds) else ())
              for name, r in searcher.retrievers.items()}
    state = {"records": searcher.records, "passages": searcher.passages, "analyzer": searcher.analyzer,
             "retrievers": packed}
    try:
        return cloudpickle.dumps(state)
    except Exception:  # noqa: BLE001 - any pickling failure: the saved files travel instead
        return None


def _rebuilt(blob: bytes, config: SearchConfig, embedder: Embedder | None, cache: EmbeddingCache | None) -> Any:
    """The driver's searcher from its pickled state (``_searcher_state``), its embedding retriever
    given ``embedder`` and ``cache``."""
    from ray import cloudpickle

    state = cloudpickle.loads(blob)
    found = {}
    for name, recipe in state["retrievers"].items():
        found[name] = r = recipe.build()
        if isinstance(r, retrievers.Embeds):
            r.embedder, r.cache = embedder, cache
    return Searcher(config, state["records"], state["passages"], retrievers=found, analyzer=state["analyzer"])


def _from_files(files: dict[str, bytes], config: SearchConfig, embedder: Embedder | None,
                cache: EmbeddingCache | None) -> Any:
    """The searcher ``Searcher.load`` reads from the saved index ``files`` (written to a private
    temporary folder, removed after)."""
    tmp = Path(tempfile.mkdtemp(prefix="searchkit-sweep-"))
    try:
        for name, data in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            path.write_bytes(data)
        return Searcher.load(tmp, config, embedder=embedder, cache=cache)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
