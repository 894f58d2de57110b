"""The committed JSON Schema of the config file (issue 9 section 6): generated from the dataclasses,
equal to the committed file, shipped as package data, and in agreement with the dataclass checks."""
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from searchkit.config import SCHEMA_FILE, SearchConfig, json_schema, schema_problems, schema_text

ROOT = Path(__file__).resolve().parents[1]


def test_committed_schema_is_the_generated_one():
    committed = (ROOT / "searchkit" / SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == schema_text(), (
        "searchkit/config.schema.json is stale: regenerate it with "
        "`searchkit config schema > searchkit/config.schema.json`"
    )


def test_schema_is_valid_draft_2020_12_and_shipped_as_package_data():
    jsonschema.Draft202012Validator.check_schema(json_schema())
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert SCHEMA_FILE in pyproject["tool"]["setuptools"]["package-data"]["searchkit"]


@pytest.mark.parametrize("data", [
    {},
    SearchConfig().to_dict(),
    {"dense": {"enabled": False}},
    {"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}},
    {"fusion": {"method": "rrf", "rrf_k": 10}, "diversity": {"per_kind": 3}},
    {"dense": {"embedder": "openai", "base_url": "https://a/v1", "model": "m", "fallbacks": [{"base_url": "https://b/v1"}]}},
])
def test_valid_configs_pass_the_schema(data):
    SearchConfig.from_dict(data)
    assert schema_problems(data) == []
    assert schema_problems(SearchConfig.from_dict(data).to_dict()) == []


@pytest.mark.parametrize("data,key", [
    ({"fusion": {"method": "nosuch"}}, "fusion.method"),
    ({"fusion": {"norm": "l2"}}, "fusion.norm"),
    ({"bm25": {"variant": "bm26"}}, "bm25.variant"),
    ({"dense": {"embedder": "bert"}}, "dense.embedder"),
    ({"dense": {"index": "ivf"}}, "dense.index"),
    ({"weak_match": {"features": ["nope"], "coef": [1.0]}}, "weak_match.features[0]"),
    ({"fusion": {"weights": {"bm25": -1}}}, "fusion.weights.bm25"),
    ({"diversity": {"per_kind": -3}}, "diversity.per_kind"),
    ({"diversity": {"min_relative_score": 1.5}}, "diversity.min_relative_score"),
    ({"weak_match": {"threshold": 2}}, "weak_match.threshold"),
    ({"dense": {"timeout": 0}}, "dense.timeout"),
    ({"fusion": {"date": -0.1}}, "fusion.date"),
    ({"bm25": {"k1": "1.2"}}, "bm25.k1"),
    ({"analyzer": {"split_mode": "D"}}, "analyzer.split_mode"),
    ({"schema_version": 6}, "schema_version"),
    ({"dense": {"fallbacks": [{"timeout": "fast"}]}}, "dense.fallbacks[0].timeout"),
])
def test_schema_and_dataclasses_refuse_the_same_key(data, key):
    with pytest.raises(Exception) as e:
        SearchConfig.from_dict(data)
    assert any(key in p for p in e.value.problems)
    assert any(p.startswith(f"{key}:") for p in schema_problems(data)), schema_problems(data)


def test_unknown_keys_fail_the_schema_too():
    problems = schema_problems({"bm25": {"k3": 1}})
    assert problems and problems[0].startswith("bm25:") and "'k3'" in problems[0]


def test_schema_carries_defaults_ranges_and_registry_names():
    s = json_schema()
    fusion = s["$defs"]["FusionConfig"]["properties"]
    assert fusion["method"]["enum"] == ["rrf", "wsum"] and fusion["method"]["default"] == "wsum"
    assert fusion["weights"]["additionalProperties"]["minimum"] == 0.0
    assert fusion["weights"]["default"] == {"bm25": 0.4, "dense": 0.6}
    assert set(fusion["weights"]["propertyNames"]["enum"]) >= {"bm25", "dense"}
    div = s["$defs"]["DiversityConfig"]["properties"]
    assert div["per_kind"] == {"type": "integer", "minimum": 1, "default": 2}
    assert div["min_relative_score"]["maximum"] == 1.0
    assert s["properties"]["schema_version"]["const"] == 5
    assert json.loads(schema_text()) == s


def test_schema_problems_never_quote_the_value():
    """A config value may be a credential: the schema's findings name the key and the rule only
    (issue 27 items 5, 8)."""
    problems = schema_problems({"dense": {"batch_size": "S3CRET-token-zz", "base_url": 12},
                                "fusion": {"method": "S3CRET-x"}})
    assert problems and all("S3CRET" not in p for p in problems), problems
    assert any(p.startswith("dense.batch_size: must be of type integer") for p in problems)
