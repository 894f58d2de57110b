"""Issue 29 items 2 and 4: the config learns which retriever a weak-match feature reads from the feature
registry, which declares it (``config.register_feature_readers``, called by ``rank.signals`` each time it
builds its table); the config imports nothing above it, and the answer is the same whatever was imported
first. The shipped-default rules of ``SearchConfig`` ask that registry and the sections' ``EMBEDDER``
instead of naming a retriever."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from searchkit import config as config_mod
from searchkit import retrievers
from searchkit.config import SearchConfig, WeakMatchConfig
from searchkit.errors import InputError
from searchkit.rank.signals import FEATURES

REPO = Path(__file__).resolve().parents[1]

SHIPPED_READS = {
    "bm25_coverage": "bm25", "bm25_idf_coverage": "bm25", "bm25_idf_coverage3": "bm25", "bm25_margin": "bm25",
    "bm25_sentence_coverage": "bm25", "bm25_top1": "bm25", "bm25_z": "bm25", "dense_gap10": "dense",
    "dense_margin": "dense", "dense_top1": "dense", "dense_z": "dense", "fused_z": None, "rerank_top1": None,
    "speaker_gap": None, "speaker_named": None, "speaker_other": None, "speaker_query": None,
    "term_coverage": "bm25",
}
"""What ``config._reads`` answered for every feature of the shipped registry before the registry declared
it (when it imported ``rank.signals.FEATURES``)."""

FRESH = """
import json, sys
{prelude}
import searchkit.config as C
loaded = sorted(m for m in ("searchkit.rank.signals", "searchkit.retrievers") if m in sys.modules)
names = json.loads(sys.argv[1])
first = {{f: C._reads(f) for f in names}}
from searchkit.rank.signals import FEATURES
print(json.dumps({{"loaded": loaded, "first": first, "registry": {{f: FEATURES.reads(f) for f in FEATURES}}}}))
"""


def _fresh(prelude: str, names: list[str]) -> dict:
    res = subprocess.run([sys.executable, "-c", FRESH.format(prelude=prelude), json.dumps(names)],
                         capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(res.stdout)


def test_every_feature_reads_what_it_read_before_everything_loaded():
    assert {f: FEATURES.reads(f) for f in FEATURES} == SHIPPED_READS
    assert {f: config_mod._reads(f) for f in FEATURES} == SHIPPED_READS
    assert config_mod._reads("no_such_feature") is None


@pytest.mark.parametrize("prelude", ["", "import searchkit.retrievers.dense", "import searchkit.retrievers",
                                     "import searchkit.rank.signals", "import searchkit.searcher"])
def test_the_answer_does_not_depend_on_what_was_imported_first(prelude):
    names = sorted(FEATURES) + ["no_such_feature"]
    got = _fresh(prelude, names)
    if prelude == "":
        assert got["loaded"] == [], "importing searchkit.config alone loads the feature registry"
    assert got["first"] == {**SHIPPED_READS, "no_such_feature": None}
    assert got["registry"] == SHIPPED_READS


def test_a_registered_retriever_declares_its_features_and_takes_them_back():
    spec = retrievers.RetrieverSpec(name="probe", section=None, shapes={"top1": retrievers.top1},
                                    evidence=("coverage",))
    retrievers.register(spec)
    try:
        assert config_mod._reads("probe_top1") == "probe"
        assert config_mod._reads("probe_coverage") == "probe"
        assert config_mod._reads("term_coverage") == "bm25"  # its query is not the query's terms
    finally:
        retrievers.unregister("probe")
    assert config_mod._reads("probe_top1") is None
    assert {f: config_mod._reads(f) for f in FEATURES} == SHIPPED_READS


def test_the_shipped_stand_ins_when_the_dense_retriever_is_off():
    cfg = SearchConfig.from_dict({"dense": {"enabled": False}})
    assert cfg.weak_match == WeakMatchConfig.bm25_only() and cfg.weak_match.conversation is None
    assert cfg.rerank.enabled is False
    kept = SearchConfig.from_dict({"dense": {"enabled": False}, "weak_match": {"threshold": 0.3, "features": ["bm25_z"],
                                                                              "coef": [1.0]}})
    assert kept.weak_match.conversation is None and kept.weak_match.features == ("bm25_z",)
    on = SearchConfig.from_dict({"bm25": {"enabled": False}})
    assert on.weak_match == WeakMatchConfig() and on.rerank.enabled is True  # nothing the shipped models stand in for
    assert SearchConfig().embedder_section() == "dense" == on.embedder_section()


@dataclasses.dataclass(frozen=True)
class _ProbeEmbedConfig(config_mod.Section):
    KEY: ClassVar[str] = "probe_embed"
    RETRIEVER: ClassVar[bool] = True
    EMBEDDER: ClassVar[bool] = True
    enabled: bool = config_mod.knob(False)
    embedder: str = "hashing"


def test_a_running_section_that_names_an_embedder_serves_the_reranker():
    config_mod.register_section(_ProbeEmbedConfig)
    try:
        data = {"dense": {"enabled": False}, "probe_embed": {"enabled": True}, "rerank": {"depth": 5}}
        cfg = SearchConfig.from_dict(data)
        assert cfg.rerank.enabled and cfg.embedder_section() == "probe_embed"
        with pytest.raises(config_mod.ConfigError) as err:
            SearchConfig.from_dict({**data, "probe_embed": {"enabled": False}})
        assert ("rerank.enabled: rerank.method sentence_maxsim reads the dense or probe_embed retriever's embedder, "
                "which dense.enabled or probe_embed.enabled false leaves out; turn rerank off or dense or probe_embed "
                "on") in err.value.problems
    finally:
        config_mod.unregister_section("probe_embed")


@dataclasses.dataclass(frozen=True)
class _NoEmbedConfig(config_mod.Section):
    KEY: ClassVar[str] = "probe_embed"
    RETRIEVER: ClassVar[bool] = True
    enabled: bool = config_mod.knob(False)


def test_a_retriever_that_embeds_says_so_in_its_section():
    with pytest.raises(InputError, match="its config class must have EMBEDDER = True"):
        retrievers.register(retrievers.RetrieverSpec(name="probe_embed", section="probe_embed", embeds=True,
                                                     config=_NoEmbedConfig))
    assert "probe_embed" not in retrievers.RETRIEVERS
    assert retrievers.get("dense").embeds and type(SearchConfig().dense).EMBEDDER
