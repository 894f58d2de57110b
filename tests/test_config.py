"""SearchConfig: JSON round trip, unknown keys, wrong types, fingerprints (issue 2 item 2)."""
import json

import pytest

from searchkit.config import ConfigError, SearchConfig


def test_default_round_trips_through_json():
    cfg = SearchConfig()
    back = SearchConfig.from_json(cfg.to_json())
    assert back == cfg
    assert back.fingerprint() == cfg.fingerprint()
    assert json.loads(cfg.to_json())["schema_version"] == 1


def test_fingerprint_is_stable_and_changes_with_any_knob():
    a = SearchConfig()
    assert a.fingerprint() == SearchConfig().fingerprint()
    b = a.replace(**{"fusion.rrf_k": 10})
    assert b.fusion.rrf_k == 10
    assert b.fingerprint() != a.fingerprint()
    # query-time knobs leave the index fingerprint alone; analysis knobs do not
    assert b.index_fingerprint() == a.index_fingerprint()
    c = a.replace(**{"analyzer.split_mode": "A"})
    assert c.index_fingerprint() != a.index_fingerprint()


def test_unknown_key_is_named():
    d = SearchConfig().to_dict()
    d["bm25"]["k3"] = 1.0
    with pytest.raises(ConfigError, match=r"bm25\.k3"):
        SearchConfig.from_dict(d)
    with pytest.raises(ConfigError, match="'colour'"):
        SearchConfig.from_dict({"colour": "red"})


@pytest.mark.parametrize(
    "key,value,pattern",
    [
        ("bm25.k1", "1.2", r"bm25\.k1.*number"),
        ("bm25.depth", 1.5, r"bm25\.depth.*integer"),
        ("dense.enabled", "yes", r"dense\.enabled.*true or false"),
        ("analyzer.stop_pos", "助詞", r"analyzer\.stop_pos.*list"),
        ("analyzer.split_mode", "D", r"split_mode"),
        ("bm25.b", 2.0, r"bm25\.b"),
    ],
)
def test_wrong_type_or_value_is_named(key, value, pattern):
    d = SearchConfig().to_dict()
    section, name = key.split(".")
    d[section][name] = value
    with pytest.raises(ConfigError, match=pattern):
        SearchConfig.from_dict(d)


def test_schema_version_and_coef_length_checked():
    with pytest.raises(ConfigError, match="schema_version"):
        SearchConfig.from_dict({"schema_version": 99})
    with pytest.raises(ConfigError, match="one weight per feature"):
        SearchConfig.from_dict({"weak_match": {"features": ["dense_top1"], "coef": [1.0, 2.0]}})


def test_partial_dict_fills_defaults_and_ints_become_floats():
    cfg = SearchConfig.from_dict({"bm25": {"k1": 1}})
    assert cfg.bm25.k1 == 1.0 and isinstance(cfg.bm25.k1, float)
    assert cfg.dense == SearchConfig().dense


def test_save_and_load_file(tmp_path):
    p = tmp_path / "cfg.json"
    cfg = SearchConfig().replace(**{"fusion.method": "wsum"})
    cfg.save(p)
    assert SearchConfig.load(p) == cfg
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="bad.json"):
        SearchConfig.load(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        SearchConfig.load(tmp_path / "missing.json")


def test_at_least_one_retriever():
    with pytest.raises(ConfigError, match="at least one"):
        SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"enabled": False}})
