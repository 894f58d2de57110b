"""`searchkit eval --mlflow URI` (issue 31 item 7): params = the config's diff against the shipped
default, the figures as metrics, metrics.json / run.trec / config.json as artifacts, against a local
MLflow folder store (file:// + tmp_path). The logging test needs the mlflow extra and skips without
it; the refusals do not."""
from __future__ import annotations

import json
import os

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.evaluate import mlflow_log
from test_metrics import HASHING, tiny_workspace


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    for key in ("MLFLOW_ALLOW_FILE_STORE", *mlflow_log.HTTP_DEFAULTS):
        monkeypatch.delenv(key, raising=False)
    cfg = tmp_path / "hashing.json"
    SearchConfig.from_dict({**HASHING, "fusion": {"method": "rrf"}}).save(cfg)
    return {"data": tiny_workspace(tmp_path / "ws"), "cfg": cfg, "tmp": tmp_path}


def test_config_params_are_the_dotted_diff_against_the_shipped_default():
    assert mlflow_log.config_params(SearchConfig()) == {}
    params = mlflow_log.config_params(SearchConfig.from_dict({**HASHING, "fusion": {"method": "rrf"}}))
    assert params["dense.embedder"] == "hashing" and params["fusion.method"] == "rrf"
    assert params["weak_match.enabled"] == "false"
    assert all(k.split(".")[0] in ("dense", "fusion", "weak_match") for k in params)
    assert mlflow_log.metric_key("nDCG@10") == "nDCG_at_10" and mlflow_log.metric_key("recall@5%FW") == "recall_at_5pctFW"


def test_eval_logs_a_run_to_a_local_file_store(env, capsys, monkeypatch):
    pytest.importorskip("mlflow")
    store = env["tmp"] / "mlruns"
    out = env["tmp"] / "runs" / "rrf"
    rc = main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(out), "--quiet",
               "--mlflow", store.as_uri(), "--mlflow-experiment", "t31"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "logged to MLflow" in err and "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # set for the call only
    run_id = err.strip().split()[-1]

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store.as_uri())
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "rrf"
    assert client.get_experiment(run.info.experiment_id).name == "t31"
    config = SearchConfig.load(env["cfg"])
    assert run.data.params == mlflow_log.config_params(config) and run.data.params["fusion.method"] == "rrf"
    metrics = json.loads((out / "metrics.json").read_text())
    assert run.data.metrics["nDCG_at_10"] == pytest.approx(metrics["metrics"]["nDCG@10"])
    assert run.data.metrics["no_answer/AUROC"] == pytest.approx(metrics["no_answer"]["AUROC"])
    group, figures = next(iter(metrics["by_lang"].items()))
    assert run.data.metrics[f"by_lang/{group}/n"] == figures["n"]
    assert "no_answer/warn-precision" not in run.data.metrics  # undefined: left out
    assert run.data.tags["searchkit.config_fingerprint"] == config.fingerprint()
    assert run.data.tags["searchkit.dataset"] == metrics["dataset"]
    assert sorted(a.path for a in client.list_artifacts(run_id)) == ["config.json", "metrics.json", "run.trec"]
    got = client.download_artifacts(run_id, "", str(env["tmp"] / "got"))
    for name in ("run.trec", "metrics.json"):
        assert (env["tmp"] / "got" / name).read_text() == (out / name).read_text(), got
    assert SearchConfig.load(env["tmp"] / "got" / "config.json") == config


def test_mlflow_refusals_are_one_line_before_anything_is_indexed(env, capsys, monkeypatch):
    from searchkit.evaluate import run

    monkeypatch.setattr(run, "evaluate_dataset", lambda *a, **k: pytest.fail("indexed before refusing"))
    args = ["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--quiet", "--mlflow"]
    assert main(args + ["https://alice:S3CRET@mlflow.example/"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "user name or password" in err and "S3CRET" not in err and "alice" not in err
    assert main(args + ["https://mlflow.example/?token=S3CRET"]) == 2
    err = capsys.readouterr().err
    assert "secret in its query string" in err and "S3CRET" not in err
    monkeypatch.setattr(mlflow_log, "is_available", lambda: False)
    assert main(args + [(env["tmp"] / "mlruns").as_uri()]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'mlflow' extra" in err and "searchkit[mlflow]" in err


def test_an_mlflow_error_never_repeats_the_uri_s_user_part_or_query():
    uri = "http://bob:pw123456@mlflow.example:5000/x?session=S3CRETVALUE"
    exc = RuntimeError(f"request to {uri.replace('bob:pw123456@', '')}/api failed: bob:pw123456@ ?session=S3CRETVALUE")
    text = mlflow_log._short(exc, uri, mlflow_log.shown_uri(uri))
    assert "S3CRETVALUE" not in text and "pw123456" not in text and "mlflow.example" in text
    assert mlflow_log.shown_uri(uri) == "http://mlflow.example:5000/x"
