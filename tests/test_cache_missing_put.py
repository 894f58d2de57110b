"""EmbeddingCache.missing / put (issue 29 item 4): an engine that embeds elsewhere asks the cache
which texts it lacks and hands it the vectors, checked as any embedder's answer; no fake embedders."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from searchkit.index import engine
from searchkit.index.cache import EmbeddingCache
from searchkit.errors import ResourceError
from searchkit.index.embedders import HashingEmbedder


def _rows(cache: EmbeddingCache) -> list[tuple]:
    return sorted(cache._conn.execute("SELECT fingerprint, kind, text_sha256, dim, vector FROM embeddings"))


def test_missing_lists_distinct_uncached_texts_in_first_occurrence_order(tmp_path):
    emb = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    assert cache.missing(emb, ["b", "a", "b"], "passage") == (["b", "a"], None)  # nothing cached: no family
    cache.embed(emb, ["a", "b"], "passage", show_progress=False)
    before = _rows(cache)
    assert cache.missing(emb, ["b", "c", "a", "d", "c"], "passage") == (["c", "d"], 16)
    assert cache.missing(emb.fingerprint(), ["d", "a"], "passage") == (["d"], 16)  # a fingerprint will do
    assert cache.missing(emb, ["a"], "query") == (["a"], 16)  # the kind is part of the key
    assert cache.missing(emb, [], "passage") == ([], 16)
    assert cache.missing(emb, ["a"], "passage", dim=32) == (["a"], 32)  # the caller's dimension rules
    assert _rows(cache) == before and cache.stats().hits == 0  # asked, nothing stored or counted


def test_missing_counts_a_cached_vector_of_another_dimension_as_missing(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    emb = HashingEmbedder(dim=8)
    cache.embed(emb, ["q"], "query", show_progress=False)
    with caplog.at_level(logging.WARNING, logger="searchkit.index.cache"):
        assert cache.missing(emb, ["q"], "query", dim=16) == (["q"], 16)
    assert any("not the family's 16" in r.getMessage() for r in caplog.records)


def test_missing_agrees_with_what_embed_embeds(tmp_path):
    emb = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.embed(emb, ["x", "y"], "passage", show_progress=False)
    texts = ["z", "y", "w", "z", "x", "v"]
    todo, _ = cache.missing(emb, texts, "passage")

    class Recording:
        name, dim = "rec", 16
        seen: list[str] = []

        def fingerprint(self):
            return emb.fingerprint()

        def embed_passages(self, batch):
            self.seen.extend(batch)
            return emb.embed_passages(batch)

    rec = Recording()
    cache.embed(rec, texts, "passage", batch_size=2, show_progress=False)
    assert todo == rec.seen == ["z", "w", "v"]


def test_put_stores_what_embed_would_and_keeps_cached_vectors(tmp_path):
    emb = HashingEmbedder(dim=16)
    texts = ["a", "b", "c", "d"]
    direct = EmbeddingCache(tmp_path / "direct.sqlite")
    direct.embed(emb, texts, "passage", show_progress=False)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.embed(emb, ["a"], "passage", show_progress=False)
    vectors = emb.embed_passages(texts)
    vectors[0] = 0.5  # "a" is cached: its vector stays
    cache.put(emb, texts, vectors, "passage")
    assert _rows(cache) == _rows(direct)  # the same rows, byte for byte
    assert cache.stats().misses == 1 + 3 and cache.missing(emb, texts, "passage") == ([], 16)
    np.testing.assert_array_equal(cache.embed(emb, texts, "passage", show_progress=False),
                                  emb.embed_passages(texts))
    cache.put(emb.fingerprint(), ["e"], emb.embed_passages(["e"]), "passage")  # a fingerprint will do
    assert cache.missing(emb, ["e"], "passage") == ([], 16)
    cache.put(emb, [], np.zeros((0, 16), np.float32), "passage")  # nothing to store


def test_engine_missing_and_store_are_the_cache_s(tmp_path):
    emb = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    assert engine.missing(cache, emb, ["a", "b", "a"]) == (["a", "b"], None)
    engine.store(cache, emb, ["a", "b"], emb.embed_passages(["a", "b"]))
    assert engine.missing(cache, emb, ["a", "b"]) == ([], 16)
    assert not any(hasattr(engine, n) for n in ("_Probe", "_Given", "_Missing"))


@pytest.mark.parametrize("bad, message", [
    (np.ones((2, 8), np.float32), r"8-dimensional.*16"),  # another dimension than the family's
    (np.full((2, 16), np.nan, np.float32), "NaN or infinity"),
    (np.array([[np.inf] * 16, [0.0] * 16], np.float32), "NaN or infinity"),
    (np.ones((2, 16, 1), np.float32), "shape"),
    (np.array([["x"] * 16] * 2), "dtype"),
])
def test_a_bad_put_is_refused_and_writes_nothing(tmp_path, bad, message):
    emb = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.embed(emb, ["kept"], "passage", show_progress=False)
    before = _rows(cache)
    with pytest.raises(ResourceError, match=message):
        cache.put(emb, ["new 1", "new 2"], bad, "passage")
    assert _rows(cache) == before and cache.stats().misses == 1


def test_put_checks_the_dimension_the_caller_expects(tmp_path):
    emb = HashingEmbedder(dim=8)
    cache = EmbeddingCache(tmp_path / "c.sqlite")  # empty: the family is only what dim says
    with pytest.raises(ResourceError, match=r"8-dimensional.*16"):
        cache.put(emb, ["q"], emb.embed_queries(["q"]), "query", dim=16)
    assert len(cache) == 0
    cache.put(emb, ["q"], emb.embed_queries(["q"]), "query", dim=8)
    assert cache.missing(emb, ["q"], "query") == ([], 8)
    with pytest.raises(ResourceError, match=r"16-dimensional.*8"):  # now the cached family rules
        cache.put(emb, ["r"], np.ones((1, 16), np.float32), "query")
    assert len(cache) == 1


def test_bad_arguments_of_missing_and_put(tmp_path):
    emb = HashingEmbedder(dim=4)
    cache = EmbeddingCache(None)
    with pytest.raises(ValueError, match="kind"):
        cache.missing(emb, ["a"], "doc")
    with pytest.raises(ValueError, match="dim"):
        cache.missing(emb, ["a"], "query", dim=0)
    with pytest.raises(TypeError):
        cache.missing(emb, "a", "query")
    with pytest.raises(TypeError):
        cache.put(emb, [b"a"], np.ones((1, 4)), "query")
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        cache.put(emb, ["a", "b"], np.ones((1, 4)), "query")
    with pytest.raises(ValueError, match="fingerprint"):
        cache.put("", ["a"], np.ones((1, 4)), "query")
    assert len(cache) == 0
