"""Issue 42 item 3: the registries of names the config checks against live in the bottom layer
(``searchkit.registries``); each registry's module hands it there when imported, and the config never
reaches up (no ``importlib``): import-linter sees every dependency. A name registered at run time is
still accepted, and a config checked before anything above it is imported reads the same names."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from searchkit import registries
from searchkit.config import ConfigError, SearchConfig, registry_names

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "searchkit" / "config"
UPPER = ("searchkit.index", "searchkit.rank", "searchkit.retrievers")


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("path", sorted(CONFIG.glob("*.py")), ids=lambda p: p.name)
def test_the_config_never_imports_a_module_by_name(path):
    text = path.read_text(encoding="utf-8")
    assert "importlib" not in text, f"{path.name} uses importlib: the config reads registries.names instead"
    assert "__import__" not in text and "sys.modules" not in text
    assert not {m for m in _imports(path) if m.startswith(UPPER)}


def test_grimp_sees_no_import_from_the_config_up():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("searchkit")
    config = {m for m in graph.modules if m == "searchkit.config" or m.startswith("searchkit.config.")}
    up = {m for m in graph.modules if m.startswith(UPPER)}
    reached = set().union(*(graph.find_modules_that_directly_import(m) for m in up)) & config
    assert not reached, f"config modules import index/rank/retrievers: {sorted(reached)}"
    assert "searchkit.registries" in graph.find_modules_directly_imported_by("searchkit.config.base")
    assert not graph.find_modules_directly_imported_by("searchkit.registries")


FRESH = """
import json, sys
import searchkit.config as C
from searchkit import registries
got = {w: list(C.registry_names(w)) for w in registries.BUILTIN}
problems = []
try:
    C.SearchConfig.from_dict({"bm25": {"variant": "bm26"}})
except C.ConfigError as e:
    problems = list(e.problems)
loaded = sorted(m for m in sys.modules if m.startswith(("searchkit.index", "searchkit.rank", "searchkit.retrievers")))
print(json.dumps({"loaded": loaded, "names": got, "problems": problems}))
"""


def test_the_config_alone_reads_the_built_in_names_without_importing_above_it():
    res = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, cwd=REPO, check=True)
    got = json.loads(res.stdout)
    assert got["loaded"] == [], "checking a config imported modules above the config"
    assert got["names"] == {w: list(n) for w, n in registries.BUILTIN.items()}
    assert got["problems"] == ["bm25.variant: 'bm26' is not a known BM25 variant; valid: bm25l, bm25plus, lucene, okapi"]


def test_the_built_in_names_are_what_the_modules_register():
    """Every registry's module imported, each reads live (``provided``), and its names now are the built-in
    ones: ``BUILTIN`` and ``BUILTIN_FEATURE_READERS`` cannot drift from the modules."""
    code = ("import json, searchkit.searcher, searchkit.index.bm25, searchkit.index.dense, searchkit.rank.fusion\n"
            "import searchkit.rank.rerank, searchkit.rank.adaptive\n"
            "from searchkit import registries\nfrom searchkit.rank.signals import FEATURES\n"
            "print(json.dumps({'provided': sorted(w for w in registries.BUILTIN if registries.provided(w)),\n"
            "  'names': {w: list(registries.names(w)) for w in registries.BUILTIN},\n"
            "  'reads': {f: FEATURES.reads(f) for f in FEATURES if FEATURES.reads(f) is not None},\n"
            "  'fusion': [sorted(searchkit.rank.fusion.FUSION_METHODS), sorted(searchkit.rank.fusion.NORMALIZERS)]}))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    got = json.loads(res.stdout)
    assert got["names"] == {w: list(n) for w, n in registries.BUILTIN.items()}
    assert got["reads"] == dict(registries.BUILTIN_FEATURE_READERS)
    assert set(got["provided"]) >= set(registries.BUILTIN) - {"fusion method", "fusion norm"}
    assert got["fusion"] == [list(registries.BUILTIN["fusion method"]), list(registries.BUILTIN["fusion norm"])]


def test_a_variant_registered_at_run_time_is_accepted():
    from searchkit.index.bm25 import VARIANTS

    with pytest.raises(ConfigError, match=r"bm25\.variant: 'okapi2' is not a known BM25 variant; valid: bm25l, bm25plus"):
        SearchConfig.from_dict({"bm25": {"variant": "okapi2"}})
    VARIANTS["okapi2"] = VARIANTS["okapi"]
    try:
        assert "okapi2" in registry_names("BM25 variant")
        assert SearchConfig.from_dict({"bm25": {"variant": "okapi2"}}).bm25.variant == "okapi2"
    finally:
        del VARIANTS["okapi2"]
    assert "okapi2" not in registry_names("BM25 variant")


@pytest.mark.parametrize("what,module,attr,key", [
    ("embedder", "searchkit.index.embedders", "EMBEDDERS", ("dense", "embedder")),
    ("dense index kind", "searchkit.index.dense", "INDEX_KINDS", ("dense", "index")),
    ("reranker", "searchkit.rank.rerank", "RERANKERS", ("rerank", "method")),
    ("rerank API", "searchkit.rank.http_rerank", "RERANK_APIS", ("rerank", "api")),
])
def test_each_registry_reads_its_module_live(what, module, attr, key):
    import importlib

    import searchkit.rank.rerank  # noqa: F401  (hands on http_rerank's RERANK_APIS until http_rerank does)

    registry = getattr(importlib.import_module(module), attr)
    section, name = key
    registry["probe_x"] = next(iter(registry.values()))
    try:
        assert "probe_x" in registry_names(what)
        SearchConfig.from_dict({section: {name: "probe_x"}})  # accepted (no ConfigError naming it)
    except ConfigError as e:
        assert not [p for p in e.problems if "probe_x" in p], e.problems
    finally:
        del registry["probe_x"]
    with pytest.raises(ConfigError, match=f"{section}\\.{name}: 'probe_x' is not a known {what}"):
        SearchConfig.from_dict({section: {name: "probe_x"}})


def test_a_retriever_registered_at_run_time_is_a_known_retriever():
    from searchkit import retrievers

    retrievers.register(retrievers.RetrieverSpec(name="probe_r", section=None, shapes={"top1": retrievers.top1}))
    try:
        assert "probe_r" in registry_names("retriever")
        assert SearchConfig.from_dict({"tasks": {"retrievers": ["probe_r"]}}).tasks.retrievers == ("probe_r",)
    finally:
        retrievers.unregister("probe_r")
    with pytest.raises(ConfigError, match=r"tasks\.retrievers\[0\]: 'probe_r' is not a known retriever"):
        SearchConfig.from_dict({"tasks": {"retrievers": ["probe_r"]}})


def test_provide_checks_a_registry_against_its_built_in_names():
    with pytest.raises(ValueError, match=r"the BM25 variant registry lacks its built-in names \['okapi'\]"):
        registries.provide("BM25 variant", {"bm25l": 1, "bm25plus": 1, "lucene": 1})
    with pytest.raises(KeyError, match="no registry 'nope'"):
        registries.provide("nope", {})
    with pytest.raises(KeyError):
        registries.names("nope")


def test_a_fusion_method_and_norm_registered_at_run_time_are_accepted(monkeypatch):
    """rank.fusion hands its registries over (issue 42 item 3): a name added there is a valid config."""
    from searchkit.config import SearchConfig
    from searchkit.config.base import ConfigError
    from searchkit.rank import fusion

    with pytest.raises(ConfigError):
        SearchConfig.from_dict({"fusion": {"method": "toyfuse"}})
    monkeypatch.setitem(fusion.FUSION_METHODS, "toyfuse", fusion.FUSION_METHODS["rrf"])
    monkeypatch.setitem(fusion.NORMALIZERS, "toynorm", fusion.NORMALIZERS["minmax"])
    assert SearchConfig.from_dict({"fusion": {"method": "toyfuse"}}).fusion.method == "toyfuse"
    assert SearchConfig.from_dict({"fusion": {"method": "wsum", "norm": "toynorm"}}).fusion.norm == "toynorm"
