"""What a Ray fusion sweep ships a worker (issue 29 item 4), checked without a cluster: the driver's
embedder and the vectors it prepared, which the worker puts in an in-memory cache
(``EmbeddingCache.put``), no fake embedder; the worker's cells equal the driver's and embed nothing."""
from __future__ import annotations

import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.tune import fusion_cell
from searchkit.index.cache import EmbeddingCache
from searchkit.searcher import Searcher

pytest.importorskip("ray")
from searchkit.scale import ray_engine  # noqa: E402 - needs ray

MINI_CONFIG = {"dense": {"embedder": "hashing", "hashing_dim": 64, "batch_size": 8}}


def _worker(payload, folder):
    """The (searcher, cache) ``ray_engine._loaded`` makes of a payload."""
    for name, data in payload["files"].items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    embedder, cache = ray_engine._prepared(payload["queries"])
    return Searcher.load(folder, SearchConfig.from_json(payload["config"]), embedder=embedder, cache=cache), cache


def test_a_sweep_worker_scores_as_the_driver_and_embeds_nothing(tmp_path):
    ds = load_dataset(resolve_dataset("mini"), split="dev")
    cfg = SearchConfig.from_dict(MINI_CONFIG)
    driver = Searcher.build(ds.records, cfg, cache=EmbeddingCache(tmp_path / "c.sqlite"))
    payload = ray_engine._fusion_payload(ds, driver, tmp_path / "saved")
    table = payload["queries"]
    assert not any(isinstance(v, type) and v.__name__ == "_QueryTable" for v in vars(ray_engine).values())
    assert table["embedder"].fingerprint() == driver.embedder.fingerprint()
    texts, vectors = table["queries"]
    assert texts and vectors.dtype == np.float32 and vectors.shape == (len(texts), 64)
    assert table["sentences"][0], "the mini set has Japanese queries: the reranking stage reads sentences"
    (tmp_path / "worker").mkdir()
    worker, cache = _worker(payload, tmp_path / "worker")
    stored = cache.stats().misses
    assert stored == len(texts) + len(table["sentences"][0])
    grid = [cfg, SearchConfig.from_dict({**MINI_CONFIG, "fusion": {"method": "rrf"}})]
    for c in grid:
        assert fusion_cell(ds, worker.with_config(c), c, "nDCG@10") == fusion_cell(ds, driver.with_config(c), c,
                                                                                    "nDCG@10")
    assert cache.stats().misses == stored  # every vector the worker read was the driver's


def test_an_index_without_an_embedding_retriever_ships_no_vectors():
    assert ray_engine._prepared(None) == (None, None)
