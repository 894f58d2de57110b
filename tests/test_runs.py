"""Run folders (SPEC E4-E6; issue 9 section 1): `searchkit eval --out`, what the folder holds, the
refusals that keep user data safe, and `index --dataset` on a corpus alone. Hashing embedder."""
from __future__ import annotations

import json

import pytest

from searchkit.errors import DataError
from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.evaluate.runs import RUN_FORMAT, check_run_target, load_run, trec_text
from test_metrics import HASHING, tiny_workspace


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg = tmp_path / "hashing.json"
    SearchConfig.from_dict(HASHING).save(cfg)
    rrf = tmp_path / "rrf.json"
    SearchConfig.from_dict({**HASHING, "fusion": {"method": "rrf"}}).save(rrf)
    return {"data": tiny_workspace(tmp_path / "ws"), "cfg": cfg, "rrf": rrf, "tmp": tmp_path}


def test_trec_text_is_six_columns_best_first():
    text = trec_text({"q1": {"b": 1.0, "a": 2.0}, "q 2": {"d x": 5.0}, "q3": {}}, tag="run")
    assert text.splitlines() == [
        "q1 Q0 a 1 2.0 run",  # the scores exactly as given (issue 40 item 3; tests/test_trec_runs.py)
        "q1 Q0 b 2 1.0 run",
        "q%202 Q0 d%20x 1 5.0 run",  # whitespace inside an id cannot be a TREC column
    ]


def test_eval_out_writes_a_run_folder(env, capsys):
    out = env["tmp"] / "runs" / "a"
    args = ["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(out), "--quiet"]
    assert main(args + ["--json", "--queries"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "metrics.json", "provenance.json", "run.trec"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics == printed  # what `--json --queries` prints, per-query values included
    assert metrics["queries"][0]["metrics"] is not None and "R@5" in metrics["metrics"]
    # run.trec: readable by ranx, the same rankings
    from ranx import Run

    run = Run.from_file(str(out / "run.trec"), kind="trec").to_dict()
    for q in metrics["queries"]:
        ranked = sorted(run.get(q["id"], {}).items(), key=lambda kv: -kv[1])
        assert [d for d, _ in ranked][:10] == q["ranking"]
    # provenance: the split's content hash, counts, fingerprints, versions
    from searchkit.evaluate.datasets import load_dataset
    from searchkit.evaluate.provenance import dataset_hash

    prov = json.loads((out / "provenance.json").read_text())
    assert prov["format"] == RUN_FORMAT and prov["split"] == "dev" and prov["path"] == "searcher"
    assert prov["dataset_sha256"] == dataset_hash(load_dataset(env["data"], "dev"))
    assert prov["split_counts"]["queries"] == 5 and prov["split_counts"]["id_labelled"] == 2
    assert prov["config_fingerprint"] == SearchConfig.load(env["cfg"]).fingerprint() and prov["versions"]["numpy"]
    assert SearchConfig.load(out / "config.json") == SearchConfig.load(env["cfg"])
    r = load_run(out)
    assert r.query_set[:2] == (load_dataset(env["data"]).name, "dev") and set(r.per_query()) == {"q1", "q2", "q3", "q4"}
    # writing the same --out again replaces the earlier run folder, nothing else is left behind
    assert main(args) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.parent.iterdir()) == ["a"]


def test_eval_out_refuses_what_is_not_a_run_folder(env, capsys):
    data, cfg, tmp = env["data"], env["cfg"], env["tmp"]
    foreign = tmp / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    args = ["eval", "--dataset", str(data), "--config", str(cfg), "--quiet", "--out"]
    assert main(args + [str(foreign)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(foreign) in err and "not a searchkit run folder" in err
    assert (foreign / "notes.txt").read_text() == "keep me" and len(list(foreign.iterdir())) == 1
    a_file = tmp / "file.txt"
    a_file.write_text("x")
    assert main(args + [str(a_file)]) == 2
    assert "not a folder" in capsys.readouterr().err and a_file.read_text() == "x"
    # a folder that looks like a run but holds something else too is not replaced
    fake = tmp / "fake"
    fake.mkdir()
    (fake / "provenance.json").write_text(json.dumps({"format": RUN_FORMAT}))
    (fake / "thesis.tex").write_text("x")
    with pytest.raises(DataError, match="holds other files"):
        check_run_target(fake)
    link = tmp / "link"
    link.symlink_to(foreign)
    with pytest.raises(DataError, match="symbolic link"):
        check_run_target(link)
    empty = tmp / "empty"
    empty.mkdir()
    assert check_run_target(empty) == empty and check_run_target(tmp / "new" / "x") == tmp / "new" / "x"


def test_load_run_errors_are_one_line(tmp_path):
    with pytest.raises(DataError, match="no such folder"):
        load_run(tmp_path / "nope")
    (tmp_path / "r").mkdir()
    with pytest.raises(DataError, match="no metrics.json"):
        load_run(tmp_path / "r")
    for name in ("metrics.json", "provenance.json", "config.json"):
        (tmp_path / "r" / name).write_text("{}")
    with pytest.raises(DataError, match="not a searchkit-run"):
        load_run(tmp_path / "r")
    (tmp_path / "r" / "metrics.json").write_text("{bad")
    with pytest.raises(DataError, match="metrics.json: unreadable"):
        load_run(tmp_path / "r")


def test_eval_twice_then_compare(env, capsys):
    runs = env["tmp"] / "runs"
    for name, cfg in (("wsum", env["cfg"]), ("rrf", env["rrf"])):
        assert main(["eval", "--dataset", str(env["data"]), "--config", str(cfg), "--out", str(runs / name), "--quiet"]) == 0
    tool = runs / "tool"
    assert main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(tool), "--quiet",
                 "--as-tool"]) == 0
    capsys.readouterr()
    assert main(["compare", str(runs / "wsum"), str(runs / "rrf"), str(tool), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["measured"] for r in d["runs"]] == ["searcher", "searcher", "tool"] and d["correction"] == "bh"
    assert any("different paths" in n for n in d["notes"])
    wsum = json.loads((runs / "wsum" / "metrics.json").read_text())
    nd = next(r for r in d["sections"][0]["metrics"] if r["metric"] == "nDCG@10")
    assert nd["values"][0] == pytest.approx(wsum["metrics"]["nDCG@10"])  # the mean eval reported
    # a run over the test split is another query set
    assert main(["eval", "--dataset", str(env["data"]), "--split", "test", "--config", str(env["cfg"]),
                 "--out", str(runs / "test"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(runs / "wsum"), str(runs / "test")]) == 2
    err = capsys.readouterr().err
    assert "wsum" in err and "test" in err and "different query sets" in err


def test_index_dataset_needs_only_the_corpus(env, capsys):
    only = env["tmp"] / "corpus-only"
    only.mkdir()
    (only / "corpus.jsonl").write_text((env["data"] / "corpus.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    out = env["tmp"] / "idx"
    assert main(["index", "--dataset", str(only), "--out", str(out), "--config", str(env["cfg"]), "--quiet"]) == 0
    assert "indexed 8 records" in capsys.readouterr().err
    # a query present in two splits' qrels does not matter to an index either
    two = env["tmp"] / "two-splits"
    two.mkdir()
    (two / "qrels").mkdir()
    (two / "corpus.jsonl").write_text((env["data"] / "corpus.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (two / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    for split in ("dev", "test"):
        (two / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tops/page:p1\t1\n")
    assert main(["index", "--dataset", str(two), "--out", str(env["tmp"] / "idx2"), "--config", str(env["cfg"]),
                 "--quiet"]) == 0


def _run_folder(tmp_path, queries) -> str:
    r = tmp_path / "r"
    r.mkdir(parents=True)
    (r / "provenance.json").write_text(json.dumps({"format": RUN_FORMAT}))
    (r / "config.json").write_text("{}")
    (r / "metrics.json").write_text(json.dumps({"metrics": {"nDCG@10": 0.5}, "queries": queries}))
    return str(r)


ROW = {"id": "q1", "answerable": True, "metrics": {"nDCG@10": 1.0}, "answer_probability": 0.9, "lang": "en"}


@pytest.mark.parametrize("rows, problem", [
    ([1, "a", None], r"queries\[0\] is not an object"),
    ([{**ROW, "id": 5}], r"queries\[0\] has no string 'id'"),
    ([ROW, ROW], r"queries\[1\] has no string 'id' of its own"),
    ([{**ROW, "answerable": "yes"}], r"queries\[0\]\.answerable"),
    ([{**ROW, "metrics": {"nDCG@10": "S3CRET"}}], r"queries\[0\]\.metrics is not an object of numbers"),
    ([{**ROW, "metrics": [1]}], r"queries\[0\]\.metrics"),
    ([{k: v for k, v in ROW.items() if k != "answer_probability"}], r"answer_probability is not a number"),
    ([{**ROW, "kinds": "chat"}], r"queries\[0\]\.kinds is not a list of strings"),
])
def test_load_run_refuses_rows_compare_and_report_cannot_use(tmp_path, rows, problem):
    """Issue 27 item 13: non-object rows in metrics.json were a traceback in compare and report."""
    with pytest.raises(DataError, match=problem) as info:
        load_run(_run_folder(tmp_path, rows))
    assert "S3CRET" not in str(info.value)


def test_load_run_reads_deep_or_huge_json_as_one_error(tmp_path):
    r = _run_folder(tmp_path, [ROW])
    for text in ("[" * 200_000 + "]" * 200_000, '{"queries": [], "n": ' + "7" * 5000 + "}"):
        (tmp_path / "r" / "metrics.json").write_text(text)
        with pytest.raises(DataError, match="metrics.json: unreadable") as info:
            load_run(r)
        assert "7777" not in str(info.value)
    assert load_run(_run_folder(tmp_path / "ok", [ROW])).per_query() == {"q1": {"nDCG@10": 1.0}}


# ------------------------------------------------------------ strict JSON (issue 31 item 2)


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def test_eval_json_and_run_folders_are_strict_json_and_groups_carry_n(env, capsys):
    from searchkit.evaluate.run import BREAKDOWNS

    out = env["tmp"] / "runs" / "a"
    assert main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(out), "--quiet",
                 "--json", "--queries"]) == 0
    printed = capsys.readouterr().out
    body = json.loads(printed, parse_constant=_refuse)  # no bare NaN: json.loads would accept it
    assert body["no_answer"]["warn-precision"] is None  # undefined (no warning fired): null, it was NaN
    for name in ("metrics.json", "provenance.json", "config.json"):
        json.loads((out / name).read_text(), parse_constant=_refuse)
    judged = [q for q in body["queries"] if q["metrics"] is not None]
    groups = [(name, g, figures) for name in BREAKDOWNS for g, figures in body[name].items()]
    assert groups
    for name, g, figures in groups:
        assert figures["n"] == sum(g in BREAKDOWNS[name](q) for q in judged)
    # read back, an undefined figure is nan again, as readers computed with before
    import math

    assert math.isnan(load_run(out).metrics["no_answer"]["warn-precision"])


def test_a_run_folder_written_with_bare_nan_still_loads(env, capsys):
    import math

    from searchkit.evaluate.compare import compare_runs

    runs = env["tmp"] / "runs"
    for name in ("new", "old"):
        assert main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(runs / name),
                     "--quiet"]) == 0
    capsys.readouterr()
    old = json.loads((runs / "old" / "metrics.json").read_text())
    old["no_answer"]["warn-precision"] = float("nan")
    old["metrics"]["R@1"] = float("nan")
    (runs / "old" / "metrics.json").write_text(json.dumps(old))  # Python's default: a bare NaN
    assert "NaN" in (runs / "old" / "metrics.json").read_text()
    run = load_run(runs / "old")
    assert math.isnan(run.metrics["metrics"]["R@1"]) and math.isnan(run.metrics["no_answer"]["warn-precision"])
    assert compare_runs([load_run(runs / "new"), run]).sections[0]["n"] == 4


# ------------------------------------------------------------ runs ls (issue 31 item 7)


def test_runs_ls_lists_run_folders_by_date(env, capsys):
    runs = env["tmp"] / "runs"
    made = {"b": "2026-11-02T10:00:00+00:00", "nested/a": "2026-11-01T09:00:00+00:00", "c": "2026-11-03T08:00:00+00:00"}
    for name, when in made.items():
        assert main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(runs / name),
                     "--quiet"]) == 0
        prov = json.loads((runs / name / "provenance.json").read_text())
        (runs / name / "provenance.json").write_text(json.dumps({**prov, "time": when}))
    (runs / "c" / "metrics.json").write_text('{"queries": 5, "secret": "S3CRET"}')  # damaged
    (runs / "notes").mkdir()
    (runs / "notes" / "todo.txt").write_text("not a run")
    capsys.readouterr()
    assert main(["runs", "ls", str(runs)]) == 0
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert lines[0].split()[:3] == ["date", "(UTC)", "dataset"] and "nDCG@10" in lines[0] and "AUROC" in lines[0]
    assert [x.split()[-1] for x in lines[1:]] == [str(runs / "nested" / "a"), str(runs / "b")]  # oldest first
    first = load_run(runs / "nested" / "a")
    cells = lines[1].split()
    assert cells[:2] == ["2026-11-01", "09:00:00"] and cells[3] == "dev" and first.metrics["config_fingerprint"] in cells
    assert f"{first.metrics['metrics']['nDCG@10']:.4f}" in cells
    assert "skipped" in out.err and "metrics.json" in out.err and "S3CRET" not in out.err
    assert main(["runs", "ls", str(runs), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert [r["path"] for r in doc["runs"]] == [str(runs / "nested" / "a"), str(runs / "b")]
    r0 = doc["runs"][0]
    assert (r0["split"], r0["time"], r0["queries"]) == ("dev", made["nested/a"], 5)
    assert set(r0["headline"]) == {"nDCG@10", "RR@10", "AUROC"}
    assert r0["headline"]["nDCG@10"] == pytest.approx(first.metrics["metrics"]["nDCG@10"])
    assert len(doc["unreadable"]) == 1 and "S3CRET" not in doc["unreadable"][0]
    # nothing there, or not a folder
    (env["tmp"] / "empty").mkdir()
    assert main(["runs", "ls", str(env["tmp"] / "empty")]) == 0
    assert "no run folders" in capsys.readouterr().out
    assert main(["runs", "ls", str(env["tmp"] / "nope")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "not a folder" in err and err.count("\n") == 1


def test_run_folder_is_owner_only_whatever_the_umask(env):
    """A run folder holds the dataset's query texts and rankings (and what eval's extras add):
    the folder 0700 and its files 0600, as reports, exports and indexes are (issue 27 item 1's
    rule for every file that can hold private content), even under a permissive umask."""
    import os

    out = env["tmp"] / "runs" / "new" / "private"
    old = os.umask(0)
    try:
        assert main(["eval", "--dataset", str(env["data"]), "--config", str(env["cfg"]), "--out", str(out),
                     "--quiet"]) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o700 and out.parent.stat().st_mode & 0o777 == 0o700
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert modes and set(modes.values()) == {0o600}, modes


def test_git_commit_never_runs_the_working_directorys_git_config(tmp_path, monkeypatch):
    """Issue 39 item 1's class of problem: provenance's git runs on the package's own checkout,
    never in the folder the user stands in, whose .git/config could run commands (core.fsmonitor)."""
    import shutil
    import subprocess

    from pathlib import Path

    from searchkit.evaluate.provenance import git_commit

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "hostile"
    repo.mkdir()
    marker = tmp_path / "ran"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "f.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"],
                   check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True)
    (repo / "f.txt").write_text("changed\n")
    monkeypatch.chdir(repo)
    got = git_commit()
    assert not marker.exists()
    here = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                          text=True).stdout.strip()
    assert got is None or got["commit"] == here
