"""What a Ray fusion sweep ships a worker (issue 29 item 4), checked without a cluster: the driver's
searcher as its state (its saved files only when that state does not pickle), its embedder and the
vectors it prepared, which the worker puts in an in-memory cache (``EmbeddingCache.put``), no fake
embedder; the worker's cells equal the driver's and it embeds nothing."""
from __future__ import annotations

import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.tune import fusion_cell
from searchkit.index.cache import EmbeddingCache
from searchkit.searcher import Searcher

pytest.importorskip("ray")
from searchkit.scale import sweeps  # noqa: E402 - needs ray

MINI_CONFIG = {"dense": {"embedder": "hashing", "hashing_dim": 64, "batch_size": 8}}


@pytest.fixture(scope="module")
def mini():
    return load_dataset(resolve_dataset("mini"), split="dev")


@pytest.mark.parametrize("shipped", ["state", "files"])
def test_a_sweep_worker_scores_as_the_driver_and_embeds_nothing(mini, tmp_path, monkeypatch, shipped):
    cfg = SearchConfig.from_dict(MINI_CONFIG)
    driver = Searcher.build(mini.records, cfg, cache=EmbeddingCache(tmp_path / "c.sqlite"))
    if shipped == "files":  # a retriever whose state does not pickle: the saved index travels
        monkeypatch.setattr(sweeps, "_searcher_state", lambda searcher: None)
    payload = sweeps.fusion_payload(mini, driver, tmp_path / "saved")
    assert (payload["state"] is None, payload["files"] is None) == ((True, False) if shipped == "files"
                                                                    else (False, True))
    assert (tmp_path / "saved").exists() == (shipped == "files")
    table = payload["queries"]
    assert not any(isinstance(v, type) and v.__name__ == "_QueryTable" for v in vars(sweeps).values())
    assert table["embedder"].fingerprint() == driver.embedder.fingerprint()
    texts, vectors = table["queries"]
    assert texts and vectors.dtype == np.float32 and vectors.shape == (len(texts), 64)
    assert table["sentences"][0], "the mini set has Japanese queries: the reranking stage reads sentences"
    worker = sweeps.searcher_of(payload)
    assert worker.cache is not driver.cache and worker.retrievers.keys() == driver.retrievers.keys()
    stored = worker.cache.stats().misses
    assert stored == len(texts) + len(table["sentences"][0])
    grid = [cfg, SearchConfig.from_dict({**MINI_CONFIG, "fusion": {"method": "rrf"}})]
    for c in grid:
        assert fusion_cell(mini, worker.with_config(c), c, "nDCG@10") == fusion_cell(mini, driver.with_config(c), c,
                                                                                      "nDCG@10")
    assert worker.cache.stats().misses == stored  # every vector the worker read was the driver's
    if shipped == "state":
        dense = worker.retrievers["dense"].index.vectors
        assert dense.tobytes() == driver.retrievers["dense"].index.vectors.tobytes()


def test_an_index_without_an_embedding_retriever_ships_no_vectors():
    assert sweeps._prepared(None) == (None, None)
