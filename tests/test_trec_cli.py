"""Another system's TREC run on the command line (issue 40 items 2 and 3; SPEC E4, E5).

A toy system's TREC run of mini dev (character trigrams, tests/test_any_run.py) is scored by ``eval
--run`` and compared against searchkit's run folder of mini (hashing config, tests/data/hashing.json)
by ``compare``, ``report`` and ``gate --run``; runs are labelled by ``--label``. ``eval`` takes any
split name and says what the loader inferred about a dataset (``searchkit eval: note:``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_any_run import toy_run

from searchkit.cli import main
from searchkit.evaluate import gate
from searchkit.evaluate.datasets import load_dataset
from searchkit.evaluate.runs import load_run
from searchkit.evaluate.trec_runs import evaluate_trec_run

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "datasets" / "mini"
HASHING = ROOT / "tests" / "data" / "hashing.json"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trec-cli")
    mp = pytest.MonkeyPatch()
    mp.setenv("SEARCHKIT_CACHE", str(tmp / "cache.sqlite"))
    mp.chdir(ROOT)
    folder = tmp / "searchkit-mini"
    assert main(["eval", "--dataset", "mini", "--config", str(HASHING), "--out", str(folder), "--quiet"]) == 0
    base = tmp / "mini-hashing.json"
    assert main(["gate", "--update", "--baseline", str(base), "--dataset", "mini", "--config", str(HASHING),
                 "--quiet"]) == 0
    yield {"folder": folder, "trec": toy_run(tmp / "toy-trigram.trec"), "baseline": base, "tmp": tmp}
    mp.undo()


def _run(argv, capsys):
    capsys.readouterr()
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_eval_scores_a_trec_run(runs, capsys):
    direct = evaluate_trec_run(runs["trec"], load_dataset(MINI, "dev"))
    rc, out, err = _run(["eval", "--dataset", "mini", "--run", str(runs["trec"]), "--json", "--queries"], capsys)
    assert rc == 0, err
    body = json.loads(out)
    assert body["metrics"] == direct.metrics and body["path"] == "trec" and body["no_answer"] == {}
    assert body["by_lang"] == {g: dict(v) for g, v in direct.by_lang.items()}
    rc, out, err = _run(["eval", "--dataset", "mini", "--run", str(runs["trec"])], capsys)
    assert rc == 0 and "no-answer: none (a TREC run has no weak-match probability)" in out
    assert out.splitlines()[0].startswith("dataset mini  split dev  config trec:")
    # --out: a run folder of the TREC run, for compare / report / gate
    out_dir = runs["tmp"] / "toy-folder"
    rc, out, err = _run(["eval", "--dataset", "mini", "--run", str(runs["trec"]), "--out", str(out_dir), "--quiet"], capsys)
    assert rc == 0 and "wrote run folder" in err
    folder = load_run(out_dir)
    assert folder.metrics["metrics"] == direct.metrics and folder.config == {}
    assert folder.provenance["path"] == "trec" and folder.provenance["config_fingerprint"] == direct.config_fingerprint
    assert folder.provenance["run_file"].endswith("toy-trigram.trec") and len(folder.provenance["run_sha256"]) == 64


@pytest.mark.parametrize("extra, said", [
    (["--config", str(HASHING)], "--config does not go with --run"),
    (["--as-tool"], "--as-tool does not go with --run"),
    (["--metrics", "ragas-llm"], "ragas-llm does not go with --run"),
    (["--metrics", "nDGC@10"], "unknown metric"),
])
def test_eval_run_refuses_what_does_not_apply_in_one_line(runs, capsys, extra, said):
    rc, out, err = _run(["eval", "--dataset", "mini", "--run", str(runs["trec"]), *extra], capsys)
    assert rc == 2 and said in err and err.count("\n") == 1


def test_eval_run_names_a_bad_line(runs, capsys, tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("q-ru-01 Q0 d1 1 not-a-number toy\n", encoding="utf-8")
    rc, out, err = _run(["eval", "--dataset", "mini", "--run", str(bad)], capsys)
    assert rc == 2 and f"{bad}:1:" in err and "not-a-number" not in err


def test_compare_a_run_folder_with_a_trec_run(runs, capsys):
    rc, out, err = _run(["compare", str(runs["folder"]), str(runs["trec"]), "--label", "ours", "--label", "toy",
                         "--json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)  # scored on the dataset the run folder measured: no --dataset needed
    assert [r["name"] for r in doc["runs"]] == ["ours", "toy"] and doc["runs"][1]["measured"] == "trec"
    assert doc["no_answer"] is None and any(n.startswith("no AUROC comparison: toy") for n in doc["notes"])
    direct = evaluate_trec_run(runs["trec"], load_dataset(MINI, "dev"))
    row = next(m for m in doc["sections"][0]["metrics"] if m["metric"] == "nDCG@10")
    assert row["values"][1] == pytest.approx(direct.metrics["nDCG@10"], abs=1e-12)
    # the TREC run first, with its dataset named; the text table says what was left out
    rc, out, err = _run(["compare", str(runs["trec"]), str(runs["folder"]), "--dataset", "mini", "--split", "dev"], capsys)
    assert rc == 0 and "baseline toy-trigram.trec" in out and "note: no AUROC comparison" in out


@pytest.mark.parametrize("argv, said", [
    (["{trec}", "{trec}", "--label", "a", "--label", "b"], "give its dataset (--dataset"),
    (["{folder}", "{trec}", "--label", "a", "--label", "b", "--label", "c"], "3 labels for 2 runs"),
    (["{folder}", "{trec}", "--split", "dev"], "give --dataset too"),
    (["{folder}", "{trec}", "--dataset", "mini", "--split", "held-out"], "available splits: dev, test"),
])
def test_compare_refuses_in_one_line(runs, capsys, argv, said):
    argv = [a.format(trec=runs["trec"], folder=runs["folder"]) for a in argv]
    rc, out, err = _run(["compare", *argv], capsys)
    assert rc == 2 and said in err and err.count("\n") == 1, err


def test_report_with_a_trec_run(runs, capsys):
    out_file = runs["tmp"] / "report.html"
    rc, out, err = _run(["report", str(runs["folder"]), str(runs["trec"]), "--label", "ours", "--label", "toy",
                         "--out", str(out_file)], capsys)
    assert rc == 0, err  # before: "Input contains NaN" from the per-group AUROC
    page = out_file.read_text(encoding="utf-8")
    assert "A TREC run file: no searchkit config." in page
    assert "No curve or no-answer figure for toy: no weak-match probability: a TREC run" in page
    assert 'alt="ROC curves' in page  # ours still draws its curves
    assert "AUROC (no answer) by" not in page  # no per-group AUROC when a run has no probability
    assert 'data-run="toy" data-metric="nDCG@10"' in page
    # the TREC run as the baseline
    rc, out, err = _run(["report", str(runs["trec"]), str(runs["folder"]), "--dataset", "mini", "--out",
                         str(runs["tmp"] / "report2.html")], capsys)
    assert rc == 0, err
    page = (runs["tmp"] / "report2.html").read_text(encoding="utf-8")
    assert "The baseline is a TREC run file: no searchkit config" in page


def test_gate_a_trec_run_against_a_baseline(runs, capsys):
    rc, out, err = _run(["gate", "--baseline", str(runs["baseline"]), "--run", str(runs["trec"]), "--json"], capsys)
    assert rc in (0, 1), err
    rows = {r["metric"]: r for r in json.loads(out)["rows"]}
    direct = evaluate_trec_run(runs["trec"], load_dataset(MINI, "dev"))
    assert rows["nDCG@10"]["now"] == round(direct.metrics["nDCG@10"], 6)
    assert rows["AUROC"]["verdict"] == gate.NOT_MEASURED and rows["AUROC"]["now"] is None
    assert "weak-match probability" in rows["AUROC"]["reason"]
    rc, out, err = _run(["gate", "--baseline", str(runs["baseline"]), "--run", str(runs["trec"])], capsys)
    assert "not measured (a TREC run has no weak-match probability)" in out
    # the run folder eval --run --out writes gates alike
    folder = runs["tmp"] / "toy-folder-gate"
    assert main(["eval", "--dataset", "mini", "--run", str(runs["trec"]), "--out", str(folder), "--quiet"]) == 0
    rc, out, err = _run(["gate", "--baseline", str(runs["baseline"]), "--run", str(folder), "--json"], capsys)
    assert {r["metric"]: r["now"] for r in json.loads(out)["rows"]} == {m: r["now"] for m, r in rows.items()}


def _beir(folder: Path, split: str) -> Path:
    """A plain BEIR folder (no lang, no answerable) with one split named ``split``."""
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "the export script writes the sales report", "d2": "we moved the database to postgres",
            "d3": "phases of the moon", "d4": "weekly sales dashboard revenue"}
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in docs.items()))
    qs = {"q1": "export script", "q2": "postgres database", "q3": "apple pie recipe"}
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in qs.items()))
    (folder / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq3\td3\t0\n")
    return folder


def test_eval_takes_any_split_and_prints_the_datasets_notes(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    data = _beir(tmp_path / "beir", "held-out")
    rc, out, err = _run(["eval", "--dataset", str(data), "--split", "held-out", "--config", str(HASHING), "--json",
                         "--quiet"], capsys)
    assert rc == 0, err
    assert json.loads(out)["split"] == "held-out"
    notes = [line for line in err.splitlines() if line.startswith("searchkit eval: note: ")]
    assert len(notes) == 2 and any("'lang'" in n for n in notes) and any("answerable" in n for n in notes)
    # no --split: the dataset's one split
    rc, out, err = _run(["eval", "--dataset", str(data), "--config", str(HASHING), "--json", "--quiet"], capsys)
    assert rc == 0 and json.loads(out)["split"] == "held-out"
    rc, out, err = _run(["eval", "--dataset", str(data), "--split", "dev", "--config", str(HASHING)], capsys)
    assert rc == 2 and "available splits: held-out" in err and err.count("\n") == 1


def test_build_report_of_a_trec_run_does_not_fail_on_its_missing_probabilities(runs):
    """The library path: build_report failed with 'Input contains NaN' (roc_auc_score over a TREC run's
    missing weak-match probabilities, in the per-group AUROC)."""
    from searchkit.evaluate.any_run import load_any_run
    from searchkit.evaluate.report import build_report

    page = build_report([load_any_run(runs["folder"]), load_any_run(runs["trec"], dataset="mini", label="toy")],
                        n_resamples=200)
    assert "no weak-match probability: a TREC run" in page
