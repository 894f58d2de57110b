"""The retriever protocol (issue 10 item 1): a new retriever plugs into the Searcher by
registration alone, and its runs, fusion weight and weak-match features follow."""
import numpy as np
import pytest

from searchkit import retrievers
from searchkit.config import ConfigError, SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank.candidates import Candidates
from searchkit.rank.signals import FEATURES
from searchkit.records import Record
from searchkit.retrievers import Retriever, RetrieverSpec
from searchkit.searcher import Searcher


class LengthRetriever:
    """A toy: ranks passages by how many query characters they contain, longest first."""

    name = "toy"

    def __init__(self, passages):
        self.texts = [p.text for p in passages]

    def prepare(self, text):
        return set(text)

    def _all(self, query):
        return np.array([sum(ch in query for ch in t) for t in self.texts], dtype=float)

    def search(self, query, k, mask=None):
        s = self._all(query)
        rows = np.flatnonzero(mask) if mask is not None else np.arange(len(s))
        order = rows[np.lexsort((rows, -s[rows]))][:k]
        return order.astype(np.int64), s[order]

    def scores_for(self, query, rows):
        return self._all(query)[rows]


@pytest.fixture()
def toy_registered():
    spec = retrievers.register(RetrieverSpec(name="toy", section=None, shapes={"top1": retrievers.top1}))
    yield spec
    retrievers.RETRIEVERS.pop("toy", None)


def test_a_toy_retriever_plugs_in_without_touching_the_searcher(toy_registered, tiny_records):
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"},
                                  "fusion": {"weights": {"bm25": 0.3, "dense": 0.3, "toy": 0.4}}})
    base = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    toy = LengthRetriever(base.passages)
    assert isinstance(toy, Retriever)
    s = Searcher(cfg, base.records, base.passages, retrievers={**base.retrievers, "toy": toy}, analyzer=base.analyzer)
    res = s.search("скрипт выгрузки отчётов", k=3)
    assert res.hits and all("toy" in h.scores and "toy" in h.ranks for h in res.hits)
    assert "toy_top1" in FEATURES and res.signals["toy_top1"] > 0
    # its weight counts: with all the weight on the toy, the ranking is the toy's own
    only = cfg.replace(**{"fusion.weights": {"bm25": 0.0, "dense": 0.0, "toy": 1.0}, "fusion.fill_missing": True})
    ranked = Searcher(only, base.records, base.passages, retrievers={**base.retrievers, "toy": toy}).search("abc", k=6)
    toy_scores = [h.scores["toy"] for h in ranked.hits]
    assert toy_scores == sorted(toy_scores, reverse=True)


def test_weights_must_name_registered_retrievers():
    with pytest.raises(ConfigError, match=r"fusion\.weights\.toy: 'toy' is not a known retriever"):
        SearchConfig.from_dict({"fusion": {"weights": {"bm25": 0.5, "toy": 0.5}}})


def test_a_weak_match_feature_of_a_retriever_that_is_off_is_refused():
    with pytest.raises(ConfigError, match="reads the dense retriever"):
        SearchConfig.from_dict({"dense": {"enabled": False}, "weak_match": {"features": ["dense_gap10"], "coef": [1.0]}})


def test_builtins_and_their_features():
    assert retrievers.names()[:2] == ("bm25", "dense")
    assert {"bm25_top1", "bm25_margin", "bm25_z", "bm25_coverage", "dense_top1", "dense_margin", "dense_gap10",
            "dense_z", "fused_z", "term_coverage"} <= set(FEATURES)
    assert FEATURES.reads("dense_gap10") == "dense" and FEATURES.reads("term_coverage") == "bm25"
    assert FEATURES.reads("fused_z") is None


def test_a_record_level_signal_reads_only_candidates(tiny_records):
    """The features come from the frozen Candidates value: computing them twice gives the same."""
    from searchkit.rank.signals import compute_features

    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    cands = s.pipeline.upto("evidence")(Candidates(), s.query("скрипт выгрузки"))
    with pytest.raises(TypeError):
        cands.runs["bm25"] = None  # frozen
    assert compute_features(cands) == compute_features(cands)
    assert compute_features(cands)["term_coverage"] == cands.evidence["bm25_coverage"]


def test_records_fixture_is_shared(tiny_records):
    assert all(isinstance(r, Record) for r in tiny_records)


_SIGNALS_SCRIPT = """
import json, sys
from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.index.cache import EmbeddingCache
from searchkit.searcher import Searcher
ds = load_dataset(resolve_dataset("mini"))
s = Searcher.build(ds.records, SearchConfig.from_dict({"dense": {"embedder": "hashing"}}), cache=EmbeddingCache(None))
out = {q.id: {k: v.hex() for k, v in sorted(s.search(q.text, k=10).signals.items()) if isinstance(v, float)}
       for q in ds.queries[:12]}
sys.stdout.write(json.dumps(out, sort_keys=True))
"""


@pytest.mark.parametrize("seeds", [("1", "2")])
def test_content_evidence_does_not_depend_on_the_hash_seed(seeds):
    """The BM25 content evidence sums term weights in the query's order, never a set's, so every
    weak-match signal is bit-identical from one process to the next whatever PYTHONHASHSEED is."""
    import os
    import subprocess
    import sys

    outs = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _SIGNALS_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=300, check=True)
        outs.append(done.stdout)
    assert outs[0] and outs[0] == outs[1]


def test_abilities_are_declared_protocols(tiny_records, tmp_path):
    """Issue 29 item 2: what a retriever can do besides search is a runtime-checkable protocol the
    Searcher and the stages check with isinstance: the built-ins declare theirs, the toy none."""
    from searchkit.errors import DataError

    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    bm25, dense = s.retrievers["bm25"], s.retrievers["dense"]
    abilities = (retrievers.Scopable, retrievers.Persistable, retrievers.HasEvidence, retrievers.HasTermWeights,
                 retrievers.Warmable)
    assert [isinstance(bm25, a) for a in abilities] == [True, True, True, True, False]
    assert [isinstance(dense, a) for a in abilities] == [True, True, False, False, True]
    toy = LengthRetriever(s.passages)
    assert isinstance(toy, Retriever) and not any(isinstance(toy, a) for a in abilities)
    with_toy = Searcher(cfg, s.records, s.passages, retrievers={**s.retrievers, "toy": toy}, analyzer=s.analyzer)
    with pytest.raises(DataError, match="'toy' cannot be saved"):
        with_toy.save(tmp_path / "idx")
    # the term weights the speaker attribution reads are the BM25 retriever's own
    q = bm25.prepare("скрипт выгрузки отчётов")
    assert bm25.term_weights(q) == bm25.index.term_weights(q) and list(bm25.term_weights(q)) == list(dict.fromkeys(q))


def test_the_embedder_is_asked_of_the_retrievers_that_embed(tiny_records):
    """Issue 29 item 2: the Searcher makes an embedder only for retrievers whose spec says they embed,
    and finds it on the first retriever with the Embeds ability, naming none."""
    assert not retrievers.embedding(("bm25",)) and retrievers.embedding(("bm25", "dense"))
    lexical = Searcher.build(tiny_records, SearchConfig.from_dict({"dense": {"enabled": False}}))
    assert lexical.embedder is None and lexical.cache is None and list(lexical.retrievers) == ["bm25"]
    both = Searcher.build(tiny_records, SearchConfig.from_dict({"dense": {"embedder": "hashing"}}),
                          cache=EmbeddingCache(None))
    assert retrievers.first(both.retrievers, retrievers.Embeds) == "dense"
    assert both.embedder is both.retrievers["dense"].embedder
    assert retrievers.first(both.retrievers, retrievers.HasTermWeights) == "bm25"


def test_the_shipped_harness_reads_the_registry_as_it_named_the_two_before():
    """Issue 29 item 2: what the harness once listed by name now comes from the registry, and for the
    shipped retrievers it is the same, in the same order (so every tune and fit is bit-identical)."""
    from searchkit.evaluate import adaptive as fit_mod
    from searchkit.evaluate.tune import FUSION_GRID, default_grid, fusion_grid
    from searchkit.rank.adaptive import FEATURES as PREFUSION
    from searchkit.rank.signals import FEATURES as SIGNALS

    named = tuple([{"fusion.method": "rrf", "fusion.rrf_k": k} for k in (10, 30, 60)]
                  + [{"fusion.method": "wsum", "fusion.norm": norm,
                      "fusion.weights": {"bm25": round(w, 2), "dense": round(1 - w, 2)}}
                     for norm in ("minmax", "zscore") for w in (0.2, 0.3, 0.4, 0.5, 0.6)])
    assert repr(FUSION_GRID) == repr(named) and default_grid(SearchConfig()) == FUSION_GRID
    assert default_grid(SearchConfig.from_dict({"dense": {"enabled": False}})) == FUSION_GRID
    assert len(fusion_grid(["a", "b", "c"])) == 3 + 2 * 15 and fusion_grid(["a"]) == FUSION_GRID[:3]
    assert sorted(PREFUSION) == sorted(["bm25_top1", "bm25_margin", "bm25_z", "dense_top1", "dense_margin",
                                        "dense_gap10", "dense_z", "overlap10", "top1_agree", "query_terms",
                                        "bm25_top1_per_term"])
    assert SIGNALS.reads("term_coverage") == "bm25"
    assert fit_mod.lead_of(SearchConfig()) == ("bm25", ["dense"])
    assert fit_mod.DEFAULT_FEATURES == SearchConfig().fusion.adaptive.features


def test_a_retriever_section_must_default_to_off():
    """Registering a retriever never changes a config that does not turn it on."""
    from dataclasses import dataclass
    from typing import ClassVar

    from searchkit.config import Section, knob, register_section

    @dataclass(frozen=True)
    class OnByDefault(Section):
        KEY: ClassVar[str] = "eager"
        RETRIEVER: ClassVar[bool] = True
        enabled: bool = knob(True)

    with pytest.raises(ConfigError, match="'eager' must have an 'enabled' key that defaults to false"):
        register_section(OnByDefault)
    with pytest.raises(ValueError, match="KEY = 'other'"):
        retrievers.register(RetrieverSpec(name="eager", section="other", config=OnByDefault))
    assert "eager" not in retrievers.RETRIEVERS
