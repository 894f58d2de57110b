"""The embedding cache as a served version reaches it (``tools.version_cache.VersionCache``; issue 30,
SPEC H3): a new text is embedded outside the cache's locks, so other calls' lookups go on while the
model runs, and a version sealed meanwhile stores nothing in the shared cache."""
from __future__ import annotations

import threading

import numpy as np

from searchkit.index.cache import EmbeddingCache
from searchkit.index.local_embedders import HashingEmbedder
from searchkit.tools.version_cache import VersionCache


class _Gated(HashingEmbedder):
    """Embeds as HashingEmbedder; a batch holding ``slow`` waits until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.entered, self.go = threading.Event(), threading.Event()

    def embed_queries(self, texts):
        if "slow" in texts:
            self.entered.set()
            assert self.go.wait(20), "never released"
        return super().embed_queries(texts)


def _start(vc: VersionCache, emb: _Gated, out: dict) -> threading.Thread:
    def run() -> None:
        out["vec"] = vc.embed(emb, ["slow"], "query", show_progress=False)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert emb.entered.wait(20)
    return t


def test_a_lookup_goes_on_while_another_call_embeds_and_the_new_vector_is_stored(tmp_path):
    emb, shared = _Gated(), EmbeddingCache(tmp_path / "c.sqlite")
    vc = VersionCache(shared)
    cached = vc.embed(emb, ["cached query"], "query", show_progress=False)
    out: dict = {}
    t = _start(vc, emb, out)  # the model is busy with "slow"
    done = threading.Event()
    got: dict = {}

    def lookup() -> None:
        got["vec"] = vc.embed(emb, ["cached query"], "query", show_progress=False)
        done.set()
    threading.Thread(target=lookup, daemon=True).start()
    assert done.wait(10), "a lookup waited for another call's embedding"
    assert np.array_equal(got["vec"], cached)
    emb.go.set()
    t.join(20)
    assert np.array_equal(out["vec"], HashingEmbedder(dim=16).embed_queries(["slow"]))
    assert shared.missing(emb, ["slow", "cached query"], "query")[0] == []  # both stored


def test_a_version_sealed_while_it_embeds_stores_nothing(tmp_path):
    emb, shared = _Gated(), EmbeddingCache(tmp_path / "c.sqlite")
    vc = VersionCache(shared)
    out: dict = {}
    t = _start(vc, emb, out)
    vc.seal()  # a newer version is served, erased text leaves the cache
    emb.go.set()
    t.join(20)
    assert np.array_equal(out["vec"], HashingEmbedder(dim=16).embed_queries(["slow"]))  # still answered
    assert shared.missing(emb, ["slow"], "query")[0] == ["slow"]  # and not stored
