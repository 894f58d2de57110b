"""The Python API for notebooks (issue 40 item 6; SPEC E4): searchkit.api loads any dataset format,
builds configs from a dict, a file or an export, evaluates, compares (TREC runs included) and tunes, with
pandas views; the same data read through the API and on the command line gives the same figures, to
the last digit. Hashing embedder throughout."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from searchkit import api, strict_json
from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import Dataset
from searchkit.errors import DataError, InputError
from searchkit.evaluate.runs import RunFolder, load_run
from searchkit.evaluate.task_eval import TaskSet
from test_any_run import toy_run

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "datasets" / "mini"
HASHING_FILE = ROOT / "tests" / "data" / "hashing.json"
HASHING = json.loads(HASHING_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    mp = pytest.MonkeyPatch()
    mp.setenv("SEARCHKIT_CACHE", str(tmp / "cache.sqlite"))
    mp.chdir(ROOT)
    yield tmp
    mp.undo()


@pytest.fixture(scope="module")
def ours(env):
    return api.evaluate("mini", HASHING, label="ours", show_progress=False)


def _run(argv: list[str], *, tmp: Path, cwd: Path = ROOT, seed: int = 0) -> dict:
    """A fresh Python process (``-P``: nothing imported from ``cwd``) with a pinned hash seed; its
    stdout read as JSON."""
    res = subprocess.run([sys.executable, "-P", *argv], cwd=cwd, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, SEARCHKIT_CACHE=str(tmp / "cache.sqlite"), PYTHONHASHSEED=str(seed)),
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def _cli(*args: str, tmp: Path, seed: int = 0) -> dict:
    """``searchkit ARGS`` as the command line runs it, from the repository root."""
    return _run(["-m", "searchkit.cli", *args], tmp=tmp, seed=seed)


def _api(code: str, *, tmp: Path, cwd: Path, seed: int = 0) -> dict:
    """``code`` (which prints one JSON value) in a fresh process importing only ``searchkit.api``."""
    return _run(["-c", "import json; from searchkit import api, strict_json; " + code], tmp=tmp, cwd=cwd, seed=seed)


def _strict(d: dict) -> dict:
    """As the command line prints it (strict JSON: an undefined figure is null)."""
    return json.loads(strict_json.dumps(d))


def _without_timing(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "timing"}


BREAKDOWNS = ("by_lang", "by_category", "by_kind", "by_kinds_filter")


def test_api_evaluate_is_searchkit_eval_to_the_last_digit(env, ours, tmp_path):
    """The same data read in a notebook and on the command line: every figure equal, bit for bit. The
    API runs in a fresh process started in an unrelated folder (it works from any working directory),
    the folder given as a path; the command line from the repository root, the dataset by name."""
    cli = _cli("eval", "--dataset", "mini", "--config", str(HASHING_FILE), "--json", tmp=env)
    got = _api(f"ev = api.evaluate({str(MINI)!r}, {str(HASHING_FILE)!r}, show_progress=False); "
               "print(strict_json.dumps(ev.to_dict()))", tmp=tmp_path, cwd=tmp_path)
    assert _without_timing(got) == _without_timing(cli)  # headline, no-answer, missing-ID, breakdowns, counts
    assert got["metrics"]["nDCG@10"] == cli["metrics"]["nDCG@10"]  # exact float equality, not approx
    # in this process (another hash seed), from a dict config: the same figures; each breakdown group's
    # mean is summed in an order that follows the hash seed (run.summarize), so equal to ~1 ulp there
    mine = _strict(ours.to_dict())
    assert {k: v for k, v in _without_timing(mine).items() if k not in BREAKDOWNS} == \
        {k: v for k, v in _without_timing(cli).items() if k not in BREAKDOWNS}
    for key in BREAKDOWNS:
        assert mine[key].keys() == cli[key].keys()
        for g, figures in mine[key].items():
            assert figures == pytest.approx(cli[key][g], rel=1e-14, abs=1e-15)


def test_breakdowns_do_not_depend_on_the_hash_seed(env):
    a = _cli("eval", "--dataset", "mini", "--config", str(HASHING_FILE), "--json", tmp=env, seed=0)
    b = _cli("eval", "--dataset", "mini", "--config", str(HASHING_FILE), "--json", tmp=env, seed=1)
    assert {k: a[k] for k in BREAKDOWNS} == {k: b[k] for k in BREAKDOWNS}


def test_api_evaluate_with_metrics_and_rows_is_searchkit_eval(env, tmp_path):
    cli = _cli("eval", "--dataset", "mini", "--config", str(HASHING_FILE), "--metrics", "AP,nDCG@20,P@5", "--json",
               "--queries", tmp=env)
    got = _api(f"ev = api.evaluate({str(MINI)!r}, {HASHING!r}, metrics='AP,nDCG@20,P@5', show_progress=False); "
               "print(strict_json.dumps(ev.to_dict(queries=True)))", tmp=tmp_path, cwd=tmp_path)
    assert list(got["metrics"]) == ["AP", "nDCG@20", "P@5"]
    assert _without_timing(got) == _without_timing(cli)  # the per-query rows too


def test_compare_our_evaluation_with_a_trec_run(env, ours, tmp_path):
    trec = toy_run(tmp_path / "toy.trec")
    cmp = api.compare([ours, trec], labels=["ours", "toy"])  # the TREC file scored on the dataset ours holds
    assert isinstance(cmp.comparison.sections, tuple) and [r.name for r in cmp.folders] == ["ours", "toy"]
    frame = cmp.frame()
    assert list(frame.metric) == list(ours.metrics["metrics"])  # the all rows only, as `searchkit compare`
    assert {"ours", "toy", "Δ toy", "CI toy", "d toy", "raw p toy", "p toy", "sig toy"} <= set(frame.columns)
    assert cmp.no_answer is None and any(n.startswith("no AUROC comparison: toy") for n in cmp.notes)
    direct = api.load_run(trec, dataset=ours.dataset)
    row = frame[frame.metric == "nDCG@10"].iloc[0]
    assert row["toy"] == pytest.approx(direct.metrics["metrics"]["nDCG@10"], abs=1e-12)
    assert row["ours"] == pytest.approx(ours.metrics["metrics"]["nDCG@10"], abs=1e-12)
    assert "note: no AUROC comparison" in cmp.text() and cmp.to_dict()["runs"][1]["name"] == "toy"
    assert cmp.runs[1]["name"] == "toy" and cmp.tests + cmp.identical == 7  # the Comparison's own figures, delegated
    # a mapping names the runs; the same run twice is identical
    same = api.compare({"a": ours, "b": ours}, metrics="nDCG@10,AUROC")
    assert same.all_identical and set(same.frame()["sig b"]) == {"identical"}
    # a TREC file with nothing to score it on: one line naming it
    with pytest.raises(InputError, match="toy.trec: a TREC run file is scored against a dataset split"):
        api.compare([str(trec), str(trec)])


def test_compare_of_written_folders_equals_compare_in_memory(env, ours, tmp_path):
    rrf = api.load_config(HASHING, changes={"fusion.method": "rrf"})
    other = api.evaluate("mini", rrf, label="rrf", show_progress=False)
    in_memory = api.compare([ours, other], by="lang")
    a, b = ours.write(tmp_path / "a"), other.write(tmp_path / "b")
    on_disk = api.compare([str(a.path), str(b.path)], labels=["ours", "rrf"], by="lang")
    assert in_memory.frame().equals(on_disk.frame())
    assert in_memory.frame("lang").equals(on_disk.frame("lang"))
    assert load_run(a.path).metrics["metrics"] == ours.metrics["metrics"]
    # the rankings written as a TREC file score as the evaluation did
    trec = ours.write_trec(tmp_path / "ours.trec")
    again = api.load_run(trec, dataset=ours.dataset)
    assert again.metrics["metrics"] == ours.metrics["metrics"]


def test_load_config_takes_a_dict_a_file_an_export_or_nothing(env, tmp_path):
    assert api.load_config() == SearchConfig()
    assert api.load_config(HASHING) == api.load_config(HASHING_FILE) == SearchConfig.from_dict(HASHING)
    assert api.load_config(None, embedder="hashing").dense.embedder == "hashing"
    assert api.load_config(HASHING, changes={"fusion.rrf_k": 30}).fusion.rrf_k == 30
    from searchkit.export import export_config

    source = tmp_path / "tuned.json"
    SearchConfig.from_dict(HASHING).save(source)
    exported = export_config(source, tmp_path / "exports", name="tuned", replay_dataset=str(MINI))
    assert api.load_config(exported) == SearchConfig.from_dict(HASHING)
    assert api.load_config(json.loads(exported.read_text(encoding="utf-8"))) == SearchConfig.from_dict(HASHING)
    with pytest.raises(InputError) as err:
        api.load_config({"fusion": {"method": "nope"}})
    assert "fusion.method" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError, match="no such file"):
        api.load_config(tmp_path / "none.json")
    with pytest.raises(InputError, match="changes"):
        api.load_config(HASHING, changes={"fusion.nope": 1})


def test_load_dataset_reads_every_format(env, tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "hello world"}\n'
                                       '{"_id": "d2", "title": "", "text": "goodbye moon"}\n', encoding="utf-8")
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n{"_id": "q2", "text": "moon"}\n',
                                        encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    (beir / "qrels" / "train.qrels").write_text("q2 0 d2 2\n", encoding="utf-8")  # TREC qrels
    ds = api.load_dataset(beir, "test")
    assert isinstance(ds, Dataset) and [q.id for q in ds.queries] == ["q1"] and ds.queries[0].lang == "en"
    assert dict(api.load_dataset(beir, "train").qrels["q2"]) == {"d2": 2}
    assert api.load_dataset(ds) is ds
    with pytest.raises(InputError, match="split 'train'"):
        api.load_dataset(ds, "train")
    with pytest.raises(DataError, match="split 'dev' is not in this dataset"):
        api.load_dataset(beir)  # two splits, none of them dev
    assert isinstance(api.load_dataset("tasks-eval"), TaskSet)
    ev = api.evaluate(beir, HASHING, split="test", show_progress=False)
    assert ev.metrics["metrics"]["R@1"] == 1.0 and ev.metrics["counts"]["queries"] == 1


def test_evaluation_views_and_run_folders(env, ours, tmp_path):
    head = ours.frame()
    assert list(head.index) == ["ours"] and head.loc["ours", "nDCG@10"] == ours.metrics["metrics"]["nDCG@10"]
    rows = ours.query_frame()
    assert len(rows) == len(ours.queries) and rows["text"].str.len().min() > 0
    langs = ours.breakdown("lang")
    assert list(langs.index) == ["en", "ja", "ru"] and langs.loc["ja", "R@10"] == ours.metrics["by_lang"]["ja"]["R@10"]
    assert api.breakdown([ours], "kind", "R@10").loc["chat", "ours"] == ours.metrics["by_kind"]["chat"]["R@10"]
    with pytest.raises(Exception, match="unknown breakdown"):
        ours.breakdown("colour")
    assert isinstance(ours, RunFolder) and ours.source == "memory" and "ours" in repr(ours)
    # written into a runs folder, then reused while nothing changed
    first = api.evaluate("mini", HASHING, runs=tmp_path / "runs", show_progress=False)
    assert first.report is not None and first.source == "folder" and first.path.parent == tmp_path / "runs"
    again = api.evaluate("mini", HASHING, runs=tmp_path / "runs", show_progress=False)
    assert again.report is None and again.path == first.path and again.metrics["metrics"] == first.metrics["metrics"]
    assert first.metrics["metrics"] == ours.metrics["metrics"]
    more = api.evaluate("mini", HASHING, runs=tmp_path / "runs", metrics="default,AP", show_progress=False)
    assert more.report is None and "AP" in more.metrics["metrics"]  # computed from the folder's run.trec
    built = api.searcher("mini", HASHING, show_progress=False)
    assert api.evaluate("mini", searcher=built, show_progress=False).metrics["metrics"] == ours.metrics["metrics"]


def test_tune_fusion_gives_frames_and_the_tuned_config(env):
    grid = [{"fusion.method": "rrf", "fusion.rrf_k": 60},
            {"fusion.method": "wsum", "fusion.norm": "minmax", "fusion.weights": {"bm25": 0.3, "dense": 0.7}}]
    tuning = api.tune_fusion("mini", HASHING, grid, show_progress=False)
    assert len(tuning.trials) == 2 and tuning.trials[0].tune_mean >= tuning.trials[1].tune_mean
    assert tuning.config == api.load_config(HASHING).replace(**tuning.trials[0].settings)
    assert "picked on the tune half: " + tuning.picked in tuning.summary()
    frame = tuning.frame()
    assert set(frame.index) == {"rrf k=60", "wsum minmax bm25=0.3"} and "mini" in frame.columns
    sig = tuning.significance()
    assert "winner" in sig.index and "shipped" in sig.index
    assert not math.isnan(sig.loc["shipped", "tune"])


def test_tune_fusion_shows_the_clis_warnings():
    """Issue 40 item 1: the API's tuning result carries the warnings ``searchkit tune fusion`` prints
    (a grid key the method ignores, here fusion.rrf_k under wsum), and its summary shows them."""
    from searchkit import api

    t = api.tune_fusion("mini", HASHING_FILE, grid=[{"fusion.rrf_k": 30}], show_progress=False)
    assert any("rrf_k" in w for w in t.warnings)
    assert all(f"warning: {w}" in t.summary() for w in t.warnings)
