"""Issue 40 item 3 (library part; SPEC E4): another system's TREC run compares with searchkit's run
folders. ``load_any_run`` gives a run folder or a TREC run file as one ``RunFolder``; a toy system's
run of mini dev (written here) is compared against the run folder ``searchkit eval --dataset mini
--out`` writes (hashing config), with the metric values a direct evaluation of the file gives, and the
no-answer comparison left out (a TREC run has no weak-match probability) with a note saying so."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from searchkit.errors import DataError, InputError
from searchkit import strict_json
from searchkit.cli import main
from searchkit.evaluate.any_run import TREC_RUN_FORMAT, load_any_run, open_dataset
from searchkit.evaluate.compare import compare_runs, has_no_answer, render
from searchkit.evaluate.datasets import load_dataset
from searchkit.evaluate.runs import load_run
from searchkit.evaluate.trec import trec_id
from searchkit.evaluate.trec_runs import evaluate_trec_run

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "datasets" / "mini"
HASHING = ROOT / "tests" / "data" / "hashing.json"


def _trigrams(text: str) -> set[str]:
    t = " ".join(text.lower().split())
    return {t[i:i + 3] for i in range(max(0, len(t) - 2))}


def toy_run(path: Path, depth: int = 20) -> Path:
    """Another system: character-trigram overlap over mini's records, top ``depth`` per dev query, in
    TREC format with its own (tied, unordered) rank column; ids as the file format allows."""
    ds = load_dataset(MINI, "dev")
    grams = {r.id: _trigrams(f"{r.title} {r.text}") for r in ds.records}
    lines = []
    for q in ds.queries:
        mine = _trigrams(q.text)
        scored = sorted(((len(mine & g) / math.sqrt(len(g) or 1), rid) for rid, g in grams.items()), reverse=True)
        for rank, (score, rid) in enumerate(scored[:depth], 1):
            lines.append(f"{trec_id(q.id)} Q0 {trec_id(rid)} {depth + 1 - rank} {round(score, 3)} toy-trigram")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("anyrun")
    mp = pytest.MonkeyPatch()
    mp.setenv("SEARCHKIT_CACHE", str(tmp / "cache.sqlite"))
    mp.chdir(ROOT)  # `--dataset mini` as README's commands give it
    folder = tmp / "runs" / "searchkit-mini"
    assert main(["eval", "--dataset", "mini", "--config", str(HASHING), "--out", str(folder), "--quiet"]) == 0
    trec = toy_run(tmp / "toy-trigram.trec")
    yield {"folder": folder, "trec": trec, "tmp": tmp}
    mp.undo()


def _direct(trec: Path, metrics=None):
    ds = load_dataset(MINI, "dev")
    return evaluate_trec_run(trec, ds, **({"metrics": metrics} if metrics else {}))


def test_a_trec_run_file_loads_as_a_run_scored_as_directly(runs):
    run = load_any_run(runs["trec"], dataset="mini", split="dev")
    direct = _direct(runs["trec"])
    assert run.source == "trec" and run.name == "toy-trigram.trec" and run.path == runs["trec"]
    assert run.metrics["metrics"] == direct.metrics  # to the last digit
    assert run.per_query() == {q: dict(v) for q, v in direct.per_query.items()}
    assert {k: run.metrics[k] for k in ("by_lang", "by_category", "by_kind")} == \
        {k: {g: dict(v) for g, v in getattr(direct, k).items()} for k in ("by_lang", "by_category", "by_kind")}
    assert run.metrics["no_answer"] == {} and not has_no_answer(run)
    assert run.config == {} and run.provenance["format"] == TREC_RUN_FORMAT
    assert run.provenance["path"] == "trec" and run.provenance["tags"] == ["toy-trigram"]
    folder = load_run(runs["folder"])
    assert run.query_set == folder.query_set  # same dataset name, split and content hash
    assert has_no_answer(folder)
    # a label names it; a loaded Dataset serves as well as a name
    labelled = load_any_run(runs["trec"], dataset=load_dataset(MINI, "dev"), label="toy")
    assert labelled.name == "toy" and labelled.metrics["metrics"] == direct.metrics


def test_compare_a_run_folder_with_a_trec_run(runs):
    folder = load_any_run(runs["folder"])
    trec = load_any_run(runs["trec"], dataset="mini", split="dev", label="toy")
    direct = _direct(runs["trec"])
    cmp = compare_runs([folder, trec])
    assert [r["name"] for r in cmp.runs] == ["searchkit-mini", "toy"]
    assert cmp.runs[1]["measured"] == "trec"
    rows = {(s["breakdown"], s["group"], m["metric"]): m for s in cmp.sections for m in s["metrics"]}
    ours = folder.metrics["metrics"]
    judged = sorted(direct.per_query)
    for name, value in direct.metrics.items():
        row = rows["all", "all", name]
        # the mean compare takes over the per-query values is the direct evaluation's figure
        assert row["values"][1] == float(np.mean([direct.per_query[q][name] for q in judged]))
        assert row["values"][1] == pytest.approx(value, abs=1e-12)
        assert row["values"][0] == pytest.approx(ours[name], abs=1e-12)
    for lang, figures in direct.by_lang.items():
        assert rows["by_lang", lang, "nDCG@10"]["values"][1] == pytest.approx(figures["nDCG@10"], abs=1e-12)
    # no AUROC: the TREC run has no weak-match probability; skipped, and said so
    assert cmp.no_answer is None and "AUROC" not in cmp.metrics
    note = next(n for n in cmp.notes if n.startswith("no AUROC comparison"))
    assert "toy holds no no-answer figures" in note
    text = render(cmp)
    assert "note: no AUROC comparison: toy holds no no-answer figures" in text
    assert "measured different paths" not in text  # searcher against trec is not the tool's card limit
    json.loads(strict_json.dumps(cmp.to_dict()))  # strict JSON (the NaN probabilities never reach it)
    # either order; the TREC run as the baseline
    back = compare_runs([trec, folder], by=["none"])
    assert back.no_answer is None and back.sections[0]["metrics"][0]["values"][0] == rows["all", "all", "nDCG@10"]["values"][1]


def test_compare_computes_a_measure_neither_run_holds(runs):
    folder = load_any_run(runs["folder"])
    trec = load_any_run(runs["trec"], dataset="mini", split="dev", label="toy")
    cmp = compare_runs([folder, trec], metrics=["AP", "P@5", "AUROC"], by=["none"])
    direct = _direct(runs["trec"], ["AP", "P@5"])
    rows = {m["metric"]: m for m in cmp.sections[0]["metrics"]}
    for name in ("AP", "P@5"):
        assert rows[name]["values"][1] == pytest.approx(direct.metrics[name], abs=1e-12)
    assert any(n.startswith("toy: AP computed from its TREC run file") for n in cmp.notes)
    assert any(n.startswith("searchkit-mini: AP computed from run.trec") for n in cmp.notes)
    assert cmp.no_answer is None and cmp.metrics == ("AP", "P@5")  # AUROC asked, left out, said so
    assert any(n.startswith("no AUROC comparison") for n in cmp.notes)


def test_metrics_option_for_either_kind_of_run(runs):
    trec = load_any_run(runs["trec"], dataset="mini", metrics="AP,nDCG@10")
    direct = _direct(runs["trec"], ["AP", "nDCG@10"])
    assert trec.metrics["metrics"] == direct.metrics and list(direct.metrics) == ["AP", "nDCG@10"]
    assert set(trec.per_query()[sorted(direct.per_query)[0]]) == {"AP", "nDCG@10"}
    folder = load_any_run(runs["folder"], metrics=["AP"], label="ours")
    assert folder.name == "ours" and "AP" in folder.metrics["metrics"]
    assert all("AP" in v for v in folder.per_query().values())
    assert "AP" not in load_run(runs["folder"]).metrics["metrics"]  # nothing written to the folder


def test_one_line_errors(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(InputError) as err:
        load_any_run(runs["trec"])
    msg = str(err.value)
    assert "\n" not in msg and str(runs["trec"]) in msg and "dataset" in msg and err.value.param == "dataset"
    with pytest.raises(DataError, match="no such run folder or TREC run file"):
        load_any_run(tmp_path / "missing.trec", dataset="mini")
    with pytest.raises(InputError, match="split 'test'"):
        load_any_run(runs["trec"], dataset=load_dataset(MINI, "dev"), split="test")
    with pytest.raises(InputError, match="ragas-llm"):
        load_any_run(runs["trec"], dataset="mini", metrics="ragas-llm")
    bad = tmp_path / "bad.trec"
    bad.write_text("q-ru-01 Q0 d1 1 SECRET-value toy\n", encoding="utf-8")
    with pytest.raises(DataError) as err:  # the file is checked before the dataset is looked for
        load_any_run(bad, dataset="no-such-set")
    assert str(err.value) == f"{bad}:1: the score (column 5) is not a finite number"
    with pytest.raises(DataError, match="no dataset folder 'no-such-set'"):
        load_any_run(runs["trec"], dataset="no-such-set")
    not_a_run = tmp_path / "folder"
    not_a_run.mkdir()
    with pytest.raises(DataError, match="not a run folder"):
        load_any_run(not_a_run)


def test_open_dataset_picks_the_split(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert open_dataset("mini").split == "dev"
    ds = load_dataset(MINI, "test")
    assert open_dataset(ds) is ds
    only = tmp_path / "beir"
    (only / "qrels").mkdir(parents=True)
    (only / "corpus.jsonl").write_text('{"_id": "d1", "text": "hello world"}\n', encoding="utf-8")
    (only / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n', encoding="utf-8")
    (only / "qrels" / "test.tsv").write_text("q1\td1\t1\n", encoding="utf-8")
    assert open_dataset(only).split == "test"  # a plain BEIR folder with one split: that one
