"""The searchkit command (issue 2 item 10, issue 3 item 7, issue 4 item 7), on the hashing embedder."""
import json
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def cfg_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    p = tmp_path / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}}).save(p)
    return p


def test_eval_json_has_the_promised_keys(cfg_file, capsys):
    assert main(["eval", "--dataset", str(ROOT / "datasets" / "mini"), "--config", str(cfg_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"dataset", "split", "config_fingerprint", "metrics"} <= set(out)
    from searchkit.evaluate.metrics import RANKING_METRICS

    assert set(out["metrics"]) == set(RANKING_METRICS) >= {"nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100"}
    assert out["split"] == "dev" and out["config_fingerprint"] == SearchConfig.load(cfg_file).fingerprint()
    assert 0.0 <= out["metrics"]["nDCG@10"] <= 1.0
    assert out["counts"]["unanswerable"] > 0 and 0.0 <= out["no_answer"]["AUROC"] <= 1.0


def test_eval_table_by_name_and_test_split(cfg_file, capsys):
    assert main(["eval", "--dataset", "mini", "--split", "test", "--config", str(cfg_file), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "split test" in out and "nDCG@10" in out and "R@100" in out


def test_index_then_search(cfg_file, tmp_path, capsys):
    idx = tmp_path / "mini.index"
    assert main(["index", "--dataset", "mini", "--out", str(idx), "--config", str(cfg_file), "--quiet"]) == 0
    assert (idx / "CURRENT").is_file() and (idx / (idx / "CURRENT").read_text().strip() / "manifest.json").is_file()
    assert main(["search", "--index", str(idx), "где скрипт выгрузки?", "--k", "3", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert 1 <= len(res["hits"]) <= 3
    h = res["hits"][0]
    assert {"bm25", "dense"} >= set(h["scores"]) and h["ranks"]


def test_index_embeds_the_rerank_stages_sentences_before_any_query(cfg_file, tmp_path, capsys):
    """`searchkit index` embeds the sentences the reranking stage reads (the Japanese passages under
    the shipped rerank.languages) into the cache, and says how many."""
    from searchkit.index.cache import EmbeddingCache, default_cache_path

    idx = tmp_path / "mini.index"
    assert main(["index", "--dataset", "mini", "--out", str(idx), "--config", str(cfg_file)]) == 0
    err = capsys.readouterr().err
    assert "sentences embedded for the reranking stage (rerank.languages: ja)" in err
    n = int(err.split(" sentences embedded")[0].split()[-1])
    assert n > 0
    from searchkit.searcher import Searcher

    s = Searcher.load(idx, cache=EmbeddingCache(default_cache_path()))
    assert s.embed_rerank_sentences() == n and s.cache.stats().misses == 0  # all of them cached already


def test_clear_errors(cfg_file, tmp_path, capsys):
    assert main(["eval", "--dataset", str(tmp_path / "nope"), "--config", str(cfg_file)]) == 2
    assert "nope" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"bm25": {"k3": 1}}')
    assert main(["eval", "--dataset", "mini", "--config", str(bad)]) == 2
    assert "bm25.k3" in capsys.readouterr().err
    idx = tmp_path / "i"
    main(["index", "--dataset", "mini", "--out", str(idx), "--config", str(cfg_file), "--quiet"])
    capsys.readouterr()
    assert main(["search", "--index", str(idx), "   "]) == 2
    assert "query" in capsys.readouterr().err


def test_history_cli_on_the_demo_workspace(cfg_file, capsys):
    ws = str(ROOT / "datasets" / "demo-workspace")
    rc = main(["history", "ATL-9999 выгрузка", "--workspace", ws, "--caller", "u-anna", "--space", "acme",
               "--spaces", "acme,legal,archive", "--config", str(cfg_file)])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Искал в пространствах: acme.") and "legal — вы не участник" in out[0]
    assert "Ни одна карточка не упоминает ATL-9999." in out
    rc = main(["history", "отчёт", "--workspace", ws, "--caller", "u-anna", "--limit", "11", "--config", str(cfg_file)])
    assert rc == 2 and "limit" in capsys.readouterr().err
    rc = main(["history", "満月", "--workspace", ws, "--caller", "u-anna", "--space", "research", "--json",
               "--kinds", "log,file", "--config", str(cfg_file)])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["lang"] == "ja" and {c["kind"] for c in d["cards"]} <= {"log", "file"}
    assert all("scores" not in c for c in d["cards"])  # structured content as served: no scoring internals
    rc = main(["history", "満月", "--workspace", ws, "--caller", "u-anna", "--space", "research", "--json", "--explain",
               "--kinds", "log,file", "--config", str(cfg_file)])
    e = json.loads(capsys.readouterr().out)
    assert rc == 0 and [c["ref"] for c in e["cards"]] == [c["ref"] for c in d["cards"]]
    assert e != d and set(d) <= set(e)  # --explain only adds


def test_workspace_index_update(cfg_file, tmp_path, capsys):
    import shutil

    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "datasets" / "demo-workspace", ws)
    idx = tmp_path / "h.index"
    assert main(["index", "--workspace", str(ws), "--out", str(idx), "--config", str(cfg_file), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "secret_column" in err
    (ws / "acme" / "notes" / "greeting-template.md").unlink()
    assert main(["index", "--workspace", str(ws), "--out", str(idx), "--update", "--quiet"]) == 0
    assert "1 removed" in capsys.readouterr().err
    assert main(["history", "шаблон приветствия", "--index", str(idx), "--caller", "u-anna", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert all(c["ref"] != "notes/greeting-template.md" for c in d["cards"])


def test_tasks_cli(tmp_path, capsys, cfg_file):
    db = tmp_path / "t.sqlite"
    assert main(["tasks", "import", str(ROOT / "datasets" / "tasks-demo"), "--db", str(db)]) == 0
    capsys.readouterr()
    member = ["--workspace", str(ROOT / "datasets" / "demo-workspace"), "--caller", "u-anna"]
    assert main(["tasks", "search", "認証", "--db", str(db), "--space", "acme", "--current-task", "30", *member]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Workspace Task Search Results") and "comment:88" in out
    hybrid = tmp_path / "h.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "tasks": {"retrievers": ["bm25", "dense"]}}).save(hybrid)
    assert main(["tasks", "search", "認証フロー", "--db", str(db), "--space", "acme", "--current-task", "30",
                 "--config", str(hybrid), "--json", *member]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "hybrid"


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--kinds", "email"], "--kinds"),
        (["--kinds", ""], "--kinds"),
        (["--since", "yesterday"], "--since"),
        (["--until", "2026-13-01"], "--until"),
        (["--since", "2026-11-01", "--until", "2026-10-01"], "--until"),
        (["--k", "0"], "--k"),
        (["--since", "x" * 10_000_000], "--since"),
    ],
)
def test_search_refuses_bad_filters_naming_them(cfg_file, tmp_path, capsys, extra, flag):
    idx = tmp_path / "mini.index"
    assert main(["index", "--dataset", "mini", "--out", str(idx), "--config", str(cfg_file), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "--index", str(idx), "отчёт", *extra]) == 2
    err = capsys.readouterr().err
    assert flag in err and len(err) < 300 and len(err.strip().splitlines()) == 1


def test_a_missing_optional_dependency_names_its_extra(cfg_file, capsys, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ir_measures(name, *a, **kw):
        if name == "ir_measures" or name.startswith("ir_measures."):
            raise ModuleNotFoundError("No module named 'ir_measures'", name="ir_measures")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ir_measures)
    assert main(["eval", "--dataset", "mini", "--config", str(cfg_file), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "searchkit[eval]" in err and len(err.strip().splitlines()) == 1
