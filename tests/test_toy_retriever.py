"""Issue 29 item 2's proof: a third retriever is one module and one registry line.

This module is the whole retriever: its config section (``TrigramConfig``), the retriever
(``TrigramRetriever``: character-trigram overlap) and its registry entry (``SPEC``); the fixture's
``retrievers.register(SPEC)`` is the one registry line. Nothing else in searchkit knows it, and
``searchkit eval``, ``searchkit tune fusion`` (its default grid over the three retrievers) and the
Ray sweep (whose workers import this module to load the index) run it. Its section is in no
shipped config: registering it changes no fingerprint, no schema and no ranking.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from searchkit import retrievers
from searchkit.config import ConfigError, SearchConfig, Section, knob, schema_problems
from searchkit.retrievers import BuildContext, RetrieverSpec

HASHING = {"dense": {"embedder": "hashing", "hashing_dim": 64, "batch_size": 8}}
WITH_TRIGRAM = {**HASHING, "trigram": {"enabled": True},
                "fusion": {"weights": {"bm25": 0.3, "dense": 0.4, "trigram": 0.3}}}


# --------------------------------------------------------------------------- the retriever module


@dataclass(frozen=True)
class TrigramConfig(Section):
    """Character n-gram overlap (a toy retriever)."""

    KEY: ClassVar[str] = "trigram"
    RETRIEVER: ClassVar[bool] = True
    enabled: bool = knob(False, index=True)
    n: int = knob(3, lo=1, index=True)
    depth: int = knob(100, lo=1)


def _grams(text: str, n: int) -> frozenset[str]:
    t = " ".join(text.lower().split())
    return frozenset(t[i:i + n] for i in range(max(0, len(t) - n + 1)))


class TrigramRetriever:
    """Scores a passage by the query n-grams it holds over the square root of its own count."""

    name = "trigram"

    def __init__(self, grams: list[frozenset[str]], n: int) -> None:
        self.grams = grams
        self.n = n

    def prepare(self, text: str) -> frozenset[str]:
        return _grams(text, self.n)

    def scores_for(self, query: frozenset[str], rows: np.ndarray) -> np.ndarray:
        return np.array([len(query & self.grams[int(r)]) / math.sqrt(len(self.grams[int(r)]) or 1)
                         for r in rows], dtype=np.float64)

    def search(self, query: frozenset[str], k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        scores = self.scores_for(query, np.arange(len(self.grams)))
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        order = np.argsort(-scores, kind="stable")
        order = order[scores[order] > 0][:k]
        return order.astype(np.int64), scores[order]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trigram.json").write_text(json.dumps({"n": self.n, "rows": len(self.grams)}), encoding="utf-8")


def _build(cfg: TrigramConfig, ctx: BuildContext) -> TrigramRetriever:
    return TrigramRetriever([_grams(p.text, cfg.n) for p in ctx.passages], cfg.n)


def _load(folder: Path, cfg: TrigramConfig, ctx: BuildContext) -> TrigramRetriever:
    meta = json.loads((folder / "trigram.json").read_text(encoding="utf-8"))
    if meta != {"n": cfg.n, "rows": len(ctx.passages)}:
        raise ValueError(f"trigram index {folder} does not match its passages")
    return _build(cfg, ctx)


SPEC = RetrieverSpec(name="trigram", section="trigram", config=TrigramConfig, build=_build, load=_load,
                     shapes={"top1": retrievers.top1, "margin": retrievers.margin})


# --------------------------------------------------------------------------- the tests


@pytest.fixture
def trigram():
    retrievers.register(SPEC)  # the one registry line
    yield SPEC
    retrievers.unregister("trigram")


def _config(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_its_section_is_part_of_every_config_and_of_none_shipped(trigram):
    shipped = SearchConfig()
    assert shipped.fingerprint() == "c8a2b91f72a01671"  # the shipped config's, as tests/test_config.py pins
    assert shipped.trigram == TrigramConfig() and "trigram" not in shipped.to_dict()
    assert retrievers.enabled(shipped) == ["bm25", "dense"]
    cfg = SearchConfig.from_dict(WITH_TRIGRAM)
    assert cfg.trigram.enabled and cfg.to_dict()["trigram"] == {"enabled": True, "n": 3, "depth": 100}
    assert retrievers.enabled(cfg) == ["bm25", "dense", "trigram"]
    assert SearchConfig.from_json(cfg.to_json()) == cfg and cfg != SearchConfig.from_dict(HASHING)
    # its index knobs are its part of the index fingerprint; its depth is a query-time knob
    assert cfg.replace(**{"trigram.n": 4}).index_fingerprint() != cfg.index_fingerprint()
    assert cfg.replace(**{"trigram.depth": 50}).index_fingerprint() == cfg.index_fingerprint()
    assert schema_problems(cfg.to_dict()) == []
    with pytest.raises(ConfigError, match=r"trigram\.n must be at least 1"):
        SearchConfig.from_dict({"trigram": {"enabled": True, "n": 0}})
    bare = SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"enabled": False}, "trigram": {"enabled": True},
                                   "weak_match": {"enabled": False}})
    assert retrievers.enabled(bare) == ["trigram"]
    with pytest.raises(ConfigError, match=r"at least one of bm25\.enabled, dense\.enabled and trigram\.enabled"):
        SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"enabled": False}})


def test_unregistered_it_is_an_unknown_key():
    with pytest.raises(ConfigError, match="unknown config key 'trigram'"):
        SearchConfig.from_dict({"trigram": {"enabled": True}})


def test_eval_runs_it(trigram, tmp_path, monkeypatch, capsys):
    from searchkit.cli import main
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.searcher import Searcher

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = SearchConfig.from_dict(WITH_TRIGRAM)
    out = {}
    for name, data in (("with", WITH_TRIGRAM), ("without", HASHING)):
        assert main(["eval", "--dataset", "mini", "--config", str(_config(tmp_path, data)), "--json", "--queries"]) == 0
        out[name] = json.loads(capsys.readouterr().out)
    assert out["with"]["config_fingerprint"] == cfg.fingerprint()
    assert out["with"]["metrics"]["nDCG@10"] > 0.5
    assert [q["ranking"] for q in out["with"]["queries"]] != [q["ranking"] for q in out["without"]["queries"]]
    # every hit carries its score, and its score shapes are weak-match features
    ds = load_dataset(resolve_dataset("mini"), split="dev")
    s = Searcher.build(ds.records, cfg)
    res = s.search(ds.queries[0].text, k=5)
    assert list(s.retrievers) == ["bm25", "dense", "trigram"]
    assert any("trigram" in h.scores for h in res.hits) and "trigram_top1" in res.signals
    # and it is saved and loaded with the index
    s.save(tmp_path / "idx")
    again = Searcher.load(tmp_path / "idx", cfg)
    assert [h.record.id for h in again.search(ds.queries[0].text, k=5).hits] == [h.record.id for h in res.hits]


def test_tune_fusion_grids_its_weight(trigram, tmp_path, monkeypatch, capsys):
    from searchkit.cli import main
    from searchkit.evaluate.tune import fusion_grid

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    assert main(["tune", "fusion", "--dataset", "mini", "--config", str(_config(tmp_path, WITH_TRIGRAM)), "--quiet",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    grid = fusion_grid(["bm25", "dense", "trigram"])
    tried = [t["settings"] for t in out["trials"]]
    assert len(tried) == len(grid) and all(p in tried for p in grid)
    assert any((t.get("fusion.weights") or {}).get("trigram", 0) >= 0.5 for t in tried)
    assert "trigram" in out["best"]["settings"].get("fusion.weights", {"trigram": None})


@pytest.fixture
def ray_with_tests_importable():
    """A local Ray cluster whose workers can import this module (as an installed retriever's would be)."""
    ray = pytest.importorskip("ray")
    import logging

    if ray.is_initialized():
        ray.shutdown()
    here = str(Path(__file__).parent)
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False,
             _node_ip_address="127.0.0.1", runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray
    ray.shutdown()


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
@pytest.mark.ray
def test_tune_fusion_on_ray_runs_it_as_the_sequential_loop_does(trigram, ray_with_tests_importable, tmp_path,
                                                                 monkeypatch, capsys):
    from searchkit.cli import main

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps([{"fusion.weights": {"bm25": 0.2, "dense": 0.2, "trigram": 0.6}},
                                {"fusion.weights": {"bm25": 0.5, "dense": 0.5, "trigram": 0.0}},
                                {"fusion.method": "rrf"}]), encoding="utf-8")
    outs = {}
    for name, extra in (("seq", []), ("ray", ["--engine", "ray"])):
        assert main(["tune", "fusion", "--dataset", "mini", "--config", str(_config(tmp_path, WITH_TRIGRAM)),
                     "--grid", str(grid), "--quiet", "--json", *extra]) == 0
        outs[name] = json.loads(capsys.readouterr().out)
    assert outs["seq"] == outs["ray"]  # every trial, both halves, the tests
    assert {t["settings"].get("fusion.weights", {}).get("trigram") for t in outs["ray"]["trials"]} >= {0.6, 0.0}
