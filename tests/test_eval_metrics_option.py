"""`searchkit eval --metrics` over the metric registry (issue 40 item 4; SPEC E4): any ir_measures measure
beside ragas / ragas-llm, written per query, so compare, gate and report read it. Hashing embedder.

These run once eval is wired to the registry (``evaluate_dataset(metrics=...)`` and ``eval --metrics``
taking names: the wiring engineer I's report lists); until then they are skipped, saying why."""
from __future__ import annotations

import inspect
import json

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.evaluate.measures import DEFAULT_METRICS
from searchkit.evaluate.run import evaluate_dataset, summarize
from test_compare import _refuse
from test_metrics import HASHING, tiny_workspace

pytestmark = pytest.mark.skipif("metrics" not in inspect.signature(evaluate_dataset).parameters,
                                reason="eval is not wired to the metric registry yet (evaluate_dataset has no metrics=)")


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg = tmp_path / "hashing.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    return {"data": tiny_workspace(tmp_path / "ws"), "cfg": cfg, "tmp": tmp_path}


def test_eval_metrics_takes_ir_measures_names(env, capsys):
    out = env["tmp"] / "runs" / "a"
    args = ["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--quiet", "--out", str(out)]
    assert main(args + ["--metrics", "AP,P@5,nDCG@20", "--metrics", "Judged@10,MAP", "--json", "--queries"]) == 0
    d = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert list(d["metrics"]) == ["AP", "P@5", "nDCG@20", "Judged@10"]  # MAP is AP: written once
    judged = [q for q in d["queries"] if q["metrics"] is not None]
    assert judged and all(list(q["metrics"]) == list(d["metrics"]) for q in judged)
    assert all(0 <= v <= 1 for q in judged for v in q["metrics"].values())
    assert all(set(g) == {"n", *d["metrics"]} for groups in (d.get("by_lang") or {}).values() for g in [groups])
    # compare reads them from the folder (nothing computed from run.trec)
    assert main(["compare", str(out), str(out), "--metric", "AP,Judged@10", "--json"]) == 0
    c = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert [r["metric"] for r in c["sections"][0]["metrics"]] == ["AP", "Judged@10"] and c["all_identical"]
    assert not any("computed from run.trec" in n for n in c["notes"])
    # the default is today's set, and 'default' names it
    assert main(args[:-2] + ["--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["metrics"]) == list(DEFAULT_METRICS)
    assert main(args[:-2] + ["--json", "--metrics", "default,AP"]) == 0
    assert list(json.loads(capsys.readouterr().out)["metrics"]) == [*DEFAULT_METRICS, "AP"]


def test_a_bad_metric_is_one_line_before_any_indexing(env, capsys):
    args = ["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--quiet"]
    assert main(args + ["--metrics", "AP,nDGC@10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown metric 'nDGC@10'" in err and "did you mean nDCG@10?" in err
    assert main(args + ["--metrics", "AUROC"]) == 2
    assert "always reported" in capsys.readouterr().err


def test_summarize_reports_the_metrics_asked_for():
    from types import SimpleNamespace

    from searchkit.evaluate.run import QueryOutcome

    ds = SimpleNamespace(name="t", split="dev", records=(), qrels={"q1": {"a": 1, "b": 0}, "q2": {"c": 2}})
    outcomes = [QueryOutcome("q1", "en", "c", True, ("a", "x", "b"), 0.5, False, (), 1.0),
                QueryOutcome("q2", "ru", "c", True, ("x", "c"), 0.5, False, (), 1.0)]
    rep = summarize(ds, SearchConfig(), outcomes, metrics=["AP", "Judged@3"])
    assert list(rep.metrics) == ["AP", "Judged@3"]
    assert rep.per_query["q1"] == {"AP": 1.0, "Judged@3": pytest.approx(2 / 3)}
    assert rep.per_query["q2"]["AP"] == 0.5 and set(rep.by_lang["en"]) == {"n", "AP", "Judged@3"}
