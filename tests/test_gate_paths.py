"""The gate measures a baseline on the path it records, and says what it skipped where a reader looks
(issue 40 item 3; SPEC E5). Hashing config on mini (tests/data/hashing.json), in-process.

- a baseline measured through the history tool (``path`` ``tool``) is measured through the tool when
  the gate runs its eval (``gate.measure``), and ``gate --update --as-tool`` writes one;
- ``gate --json --skip-missing`` prints the JSON alone on stdout, its skips inside it (whole: never
  cut mid-path), and in text mode the skips go to stderr;
- a gated measure a run lacks is one line, never silently left out.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchkit.errors import DataError
from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.evaluate import gate
from searchkit.evaluate.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "datasets" / "mini"
HASHING = ROOT / "tests" / "data" / "hashing.json"


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("SEARCHKIT_DATASETS", str(ROOT / "datasets"))
    monkeypatch.chdir(tmp_path)  # nothing depends on the working directory
    return tmp_path


def _run(argv, capsys):
    capsys.readouterr()
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_tool_baseline_is_measured_through_the_tool(env, capsys):
    """A tool-path baseline (as evals/baselines/mini-dev-tool.json) gated without --run: the gate's
    own eval goes through the history tool (before: 'measured through the history tool, this run
    through the Searcher', exit 2)."""
    ds = load_dataset(MINI, "dev")
    config = SearchConfig.load(HASHING)
    doc = gate.baseline_from_report(gate.measure(ds, config, path="tool"), ds, config, name="tool")
    assert doc["path"] == "tool"
    base = env / "tool.json"
    gate.write_baseline(base, doc)
    rc, out, err = _run(["gate", "--baseline", str(base), "--json", "--quiet"], capsys)
    assert rc == 0, err
    rows = json.loads(out)["rows"]
    assert rows and all(r["verdict"] == "ok" for r in rows)  # the same path, the same figures
    assert {r["metric"] for r in rows} >= {"nDCG@10", "R@100"}


def test_update_as_tool_writes_a_tool_baseline_and_keeps_its_path(env, capsys):
    base = env / "b.json"
    rc, out, err = _run(["gate", "--update", "--as-tool", "--baseline", str(base), "--dataset", "mini",
                         "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 0, err
    assert "path tool" in out
    doc = gate.read_baseline(base)
    assert doc["path"] == "tool" and doc["split"] == "dev"
    # the tool answers at most 15 cards: the baseline's rankings are the tool's
    tool_run = env / "tool-run"
    assert main(["eval", "--dataset", "mini", "--as-tool", "--config", str(HASHING), "--out", str(tool_run),
                 "--quiet"]) == 0
    assert doc["figures"]["nDCG@10"] == round(json.loads((tool_run / "metrics.json").read_text())["metrics"]["nDCG@10"], 6)
    # rewritten without --as-tool: it stays a tool baseline
    rc, out, err = _run(["gate", "--update", "--baseline", str(base), "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 0 and gate.read_baseline(base)["path"] == "tool"
    rc, out, err = _run(["gate", "--baseline", str(base), "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 0, err
    # --as-tool names what --update measures; a check reads the path from the baseline
    rc, out, err = _run(["gate", "--as-tool", "--baseline", str(base)], capsys)
    assert rc == 2 and "--as-tool" in err and err.count("\n") == 1


def test_any_split_name_for_a_new_baseline(env, capsys, tmp_path):
    rc, out, err = _run(["gate", "--update", "--baseline", str(env / "t.json"), "--dataset", "mini", "--split", "test",
                         "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 0, err
    assert gate.read_baseline(env / "t.json")["split"] == "test"
    rc, out, err = _run(["gate", "--update", "--baseline", str(env / "x.json"), "--dataset", "mini", "--split", "held-out",
                         "--config", str(HASHING), "--quiet"], capsys)
    assert rc == 2 and "'held-out'" in err and "available splits: dev, test" in err and err.count("\n") == 1
    assert not (env / "x.json").exists()


def _gone(env, long_parent: Path) -> Path:
    """A baseline whose dataset is nowhere: its skip line names a long folder."""
    doc = gate.read_baseline(ROOT / "evals" / "baselines" / "mini-dev.json")
    doc["dataset"] = "no-such-dataset"
    gone = env / "gone.json"
    gone.write_text(json.dumps(doc))
    return gone


def test_json_skip_missing_prints_the_json_alone_with_its_skips_whole(env, capsys, monkeypatch):
    base = env / "b.json"
    assert _run(["gate", "--update", "--baseline", str(base), "--dataset", "mini", "--config", str(HASHING), "--quiet"],
                capsys)[0] == 0
    # datasets under a long folder: the skip line names it, and it is never cut mid-path
    long_dir = env / ("a-long-folder-name-" * 12) / "datasets"
    long_dir.mkdir(parents=True)
    (long_dir / "mini").symlink_to(MINI)
    monkeypatch.setenv("SEARCHKIT_DATASETS", str(long_dir))
    gone = _gone(env, long_dir)
    rc, out, err = _run(["gate", "--json", "--skip-missing", "--baseline", str(gone), "--baseline", str(base),
                         "--quiet"], capsys)
    assert rc == 0, err
    doc = json.loads(out)  # stdout is the JSON alone (before: a skip line first)
    assert [s["name"] for s in doc["skipped"]] == ["gone"] and doc["skipped"][0]["baseline"] == str(gone)
    why = doc["skipped"][0]["why"]
    assert "no-such-dataset" in why and str(long_dir) in why  # the whole path
    assert "skipped" not in err
    # text mode: the table on stdout, the skip on stderr, whole
    rc, out, err = _run(["gate", "--skip-missing", "--baseline", str(gone), "--baseline", str(base), "--quiet"], capsys)
    assert rc == 0 and "skipped" not in out and out.splitlines()[-1].startswith("gate: passed")
    line = next(x for x in err.splitlines() if x.startswith("gate: skipped gone: "))
    assert str(long_dir) in line
    # all skipped: one line, whole
    rc, out, err = _run(["gate", "--skip-missing", "--baseline", str(gone), "--quiet"], capsys)
    assert rc == 2 and err.count("\n") == 1 and str(long_dir) in err and not out


def test_a_gated_measure_the_run_lacks_is_one_line():
    """Before: left out without a word (the baseline gates AP, the run holds none)."""
    ans = {"q1": True, "q2": True}
    base = {"name": "b", "dataset": "d", "split": "dev", "gated": {"nDCG@10": 0.01, "AP": 0.01}, "test": "fisher",
            "alpha": 0.05, "figures": {"nDCG@10": 0.5, "AP": 0.5},
            "per_query": {q: {"nDCG@10": 0.5, "AP": 0.5} for q in ans}, "answerable": ans,
            "answer_probability": {q: 0.5 for q in ans}}
    now = {"figures": {"nDCG@10": 0.5}, "per_query": {q: {"nDCG@10": 0.5} for q in ans}, "answerable": ans,
           "answer_probability": {q: 0.5 for q in ans}, "warned": {}, "path": "searcher"}
    with pytest.raises(DataError, match=r"holds no AP, which the baseline gates.*--metrics nDCG@10,.*AP"):
        gate.check(base, now)
    assert gate.ranking_of(base)[-1] == "AP" and gate.ranking_of(None) == gate.ranking_of({"gated": gate.DEFAULT_GATED})
