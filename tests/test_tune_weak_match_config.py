"""Issue 40 item 1 (SPEC H11, E4): ``tune weak-match`` writes its model only into the config that
produced the runs' signals, and refuses a fit it cannot trust (too few queries of a class, separated
classes) unless asked; the threshold is held to a false-warning rate, 10% by default."""
import json

import numpy as np
import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig

BM25_ONLY = {"dense": {"enabled": False}}
HTTP_RERANK = {"rerank": {"method": "http", "api": "tei", "base_url": "http://gpu-box:8080",
                          "model": "BAAI/bge-reranker-v2-m3", "languages": [], "depth": 30, "weight": 0.5}}


def _queries(n=400, seed=0, prefix="q"):
    """Overlapping classes (about a third unanswerable): a fit any rule accepts."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ans = bool(i % 3)
        out.append({"id": f"{prefix}{i}", "answerable": ans,
                    "signals": {"bm25_margin": float(rng.normal(0.86 if ans else 0.80, 0.02)),
                                "term_coverage": float(rng.normal(0.03 if ans else 0.01, 0.01)),
                                "conversation_model": 0.0}})
    return out


def _json_run(path, cfg, queries=None, dataset="set"):
    """What ``eval --json --queries`` prints, of ``cfg`` (its fingerprint)."""
    fp = cfg if isinstance(cfg, str) else cfg.fingerprint()
    data = {"dataset": dataset, "split": "dev", "config_fingerprint": fp, "shape": "documents",
            "queries": _queries() if queries is None else queries}
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _folder_run(path, cfg, queries=None, dataset="set"):
    """A run folder as ``eval --out`` writes it (the files tune reads: metrics.json, config.json)."""
    path.mkdir(parents=True)
    _json_run(path / "metrics.json", cfg, queries, dataset)
    (path / "config.json").write_text(cfg.to_json() + "\n", encoding="utf-8")
    (path / "provenance.json").write_text(json.dumps({"format": "searchkit-run/1", "config_fingerprint":
                                                      cfg.fingerprint()}), encoding="utf-8")
    return str(path)


ARGS = ["--features", "bm25_margin,term_coverage", "--refit", "documents", "--quiet"]


def _one_line(capsys):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_runs_of_another_config_are_refused_when_written_into_the_shipped_one(tmp_path, capsys):
    """Runs from a BM25-only config gave a config with dense on: the fit went into the shipped config."""
    bm25 = SearchConfig.from_dict(BM25_ONLY)
    run = _json_run(tmp_path / "run.json", bm25)
    out = tmp_path / "tuned.json"
    assert main(["tune", "weak-match", "--runs", run, *ARGS, "--out", str(out)]) == 2
    err = _one_line(capsys)
    assert bm25.fingerprint() in err and SearchConfig().fingerprint() in err
    assert not out.exists()


def test_run_folders_write_into_their_own_config(tmp_path, capsys):
    """No --config: the model goes into the config the run folders hold (dense stays off)."""
    from searchkit.evaluate.weak_match_runs import fit_fingerprint

    bm25 = SearchConfig.from_dict(BM25_ONLY)
    run = _folder_run(tmp_path / "runs" / "set", bm25)
    out = tmp_path / "tuned.json"
    assert main(["tune", "weak-match", "--runs", run, *ARGS, "--out", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    tuned = SearchConfig.load(out)
    assert tuned.dense.enabled is False and fit_fingerprint(tuned) == fit_fingerprint(bm25)
    assert tuned.weak_match.features == ("bm25_margin", "term_coverage")
    assert res["config"]["written_into"] == "the runs' own config" and res["config"]["runs"] == [bm25.fingerprint()]


@pytest.mark.parametrize("made_with", [BM25_ONLY, HTTP_RERANK], ids=["bm25-only", "http-reranker"])
def test_a_config_other_than_the_runs_is_refused(tmp_path, capsys, made_with):
    """Runs made with the HTTP reranker gave a config with the shipped reranker: refused, naming both."""
    runs_cfg = SearchConfig.from_dict(made_with)
    shipped = tmp_path / "shipped.json"
    SearchConfig().save(shipped)
    out = tmp_path / "tuned.json"
    for run in (_folder_run(tmp_path / "folder", runs_cfg), _json_run(tmp_path / "run.json", runs_cfg)):
        assert main(["tune", "weak-match", "--runs", run, *ARGS, "--config", str(shipped), "--out", str(out)]) == 2
        err = _one_line(capsys)
        assert runs_cfg.fingerprint() in err and SearchConfig().fingerprint() in err and "--config" in err
        assert not out.exists()


def test_a_config_that_differs_only_in_the_weak_match_models_is_accepted(tmp_path, capsys):
    """Refitting into a config whose weak-match models differ (an earlier fit) is what tuning is for."""
    from dataclasses import replace

    base = SearchConfig()
    earlier = base.replace(weak_match=replace(base.weak_match, coef=(1.0, 2.0, 3.0), threshold=0.3))
    cfg = tmp_path / "earlier.json"
    earlier.save(cfg)
    run = _folder_run(tmp_path / "folder", base)
    out = tmp_path / "tuned.json"
    assert main(["tune", "weak-match", "--runs", run, *ARGS, "--config", str(cfg), "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["written_into"] == f"--config {cfg}"
    # eval --json files carry only the fingerprint: the config must be the very one
    json_run = _json_run(tmp_path / "run.json", base)
    assert main(["tune", "weak-match", "--runs", json_run, *ARGS, "--config", str(cfg), "--out", str(out)]) == 2
    err = _one_line(capsys)
    assert base.fingerprint() in err and earlier.fingerprint() in err and "eval --out" in err
    same = tmp_path / "same.json"
    base.save(same)
    assert main(["tune", "weak-match", "--runs", json_run, *ARGS, "--config", str(same), "--out", str(out)]) == 0


def test_runs_of_several_configs_are_refused_naming_them(tmp_path, capsys):
    a, b = SearchConfig(), SearchConfig.from_dict(BM25_ONLY)
    runs = [_json_run(tmp_path / "a.json", a, dataset="a"), _json_run(tmp_path / "b.json", b, dataset="b")]
    assert main(["tune", "weak-match", "--runs", *runs, *ARGS]) == 2
    err = _one_line(capsys)
    assert a.fingerprint() in err and b.fingerprint() in err and "a.json" in err and "b.json" in err
    # a folder and a JSON file of the same config are one config
    same = [_folder_run(tmp_path / "fa", b, dataset="a"), _json_run(tmp_path / "c.json", b, dataset="c")]
    assert main(["tune", "weak-match", "--runs", *same, *ARGS]) == 0


def test_a_run_that_names_no_config_is_refused(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"dataset": "set", "queries": _queries()}), encoding="utf-8")
    assert main(["tune", "weak-match", "--runs", str(path), *ARGS]) == 2
    err = _one_line(capsys)
    assert "config_fingerprint" in err and "run.json" in err
