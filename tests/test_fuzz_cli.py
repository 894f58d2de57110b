"""Damaged input for every verb (issue 8 item 7): no traceback, no hang, one line naming the input,
a non-zero exit, nothing half-written, and the previous index still loads.

Each case runs ``searchkit.cli.main`` in-process under an alarm (a hang fails the case); an
exception escaping ``main`` is a traceback and fails the case. The damaged files come from a fixed
list of damages applied to real inputs (datasets/mini, datasets/demo-workspace, datasets/tasks-demo,
configs, eval runs and index files)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.index import store

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "datasets" / "mini"
DEMO = ROOT / "datasets" / "demo-workspace"
TASKS = ROOT / "datasets" / "tasks-demo"
HASHING = ROOT / "tests" / "data" / "hashing.json"
TIMEOUT_S = 120

_rng = random.Random(8)
DAMAGES: dict[str, object] = {
    "truncated": lambda b: b[: len(b) // 2],
    "empty": b"",
    "list": b"[]",
    "object": b"{}",
    "null": b"null",
    "string": b'"x"',
    "number": b"12345678901234567890123456789",
    "nested_list": b"[" * 100_000,
    "nested_object": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    "not_utf8": lambda b: b"\xff\xfe\xfa\x80" + b,
    "lone_surrogate": b'{"_id": "\\ud800", "text": "\\udfff", "ses_id": "\\ud800"}',
    "huge_value": b'{"_id": "' + b"a" * 10_000_000 + b'"}',
    "binary": bytes(_rng.randrange(256) for _ in range(2000)),
}


def _damaged(original: bytes, how: str) -> bytes:
    d = DAMAGES[how]
    return d(original) if callable(d) else d


def run(argv: list[str]) -> tuple[int, str, str]:
    """``main(argv)`` in-process: (exit status, stdout, stderr); raises on a hang or a traceback."""
    out, err = io.StringIO(), io.StringIO()

    def hang(*_):
        raise TimeoutError(f"searchkit {' '.join(argv)[:200]} did not finish in {TIMEOUT_S} s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:  # argparse
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue(), err.getvalue()


def refused(rc: int, err: str, *names: str) -> None:
    """A one-line, short error that names the input, and a non-zero exit."""
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert rc not in (0, None), err
    assert len(lines) == 1, err[:2000]
    assert len(err) < 600, err[:600]
    assert "Traceback" not in err
    if names:
        assert any(n in err for n in names), (names, err)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))


# -- configs ------------------------------------------------------------------------------------

CONFIG_DAMAGES = sorted(set(DAMAGES) - {"object"}) + ["wrong_types", "unknown_key", "bad_names"]  # {} is the default config


def _config_bytes(how: str) -> bytes:
    base = SearchConfig.from_dict({"dense": {"embedder": "hashing"}}).to_json().encode()
    if how == "wrong_types":
        return json.dumps({"fusion": [], "bm25": {"k1": "x"}}).encode()
    if how == "unknown_key":
        return json.dumps({"dense": {"embedder": "hashing", "colour": "red"}}).encode()
    if how == "bad_names":
        return json.dumps({"dense": {"embedder": "nosuch"}, "fusion": {"method": "nosuch"}}).encode()
    return _damaged(base, how)


@pytest.mark.parametrize("how", CONFIG_DAMAGES)
def test_damaged_config(tmp_path, how):
    cfg = tmp_path / "cfg.json"
    cfg.write_bytes(_config_bytes(how))
    out = tmp_path / "idx"
    for argv in (["config", "validate", str(cfg)],
                 ["index", "--dataset", "mini", "--out", str(out), "--config", str(cfg), "--quiet"],
                 ["eval", "--dataset", "mini", "--config", str(cfg), "--quiet"]):
        rc, _, err = run(argv)
        refused(rc, err, "cfg.json", "config")
    assert not out.exists()


# -- datasets -----------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["corpus.jsonl", "queries.jsonl", "qrels/dev.tsv"])
@pytest.mark.parametrize("how", ["truncated", "list", "nested_list", "not_utf8", "lone_surrogate",
                                 "huge_value", "binary", "kind_list"])
def test_damaged_dataset(tmp_path, target, how):
    ds = tmp_path / "ds"
    shutil.copytree(MINI, ds)
    path = ds / target
    original = path.read_bytes()
    if how == "kind_list":
        lines = original.decode().splitlines()
        if target.endswith(".jsonl"):
            row = json.loads(lines[1])
            row["kind" if target == "corpus.jsonl" else "kinds"] = [["chat"]] if target != "corpus.jsonl" else ["chat"]
            lines[1] = json.dumps(row, ensure_ascii=False)
        else:
            lines[1] = "q1\td1\t[3]"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        # one damaged line in the middle of a good file, and the whole file damaged
        lines = original.split(b"\n")
        lines[len(lines) // 2] = _damaged(lines[len(lines) // 2], how)
        path.write_bytes(b"\n".join(lines))
    rc, _, err = run(["eval", "--dataset", str(ds), "--config", str(HASHING), "--quiet"])
    if rc != 0:
        refused(rc, err, target.split("/")[-1], "ds")
    path.write_bytes(_damaged(original, how) if how != "kind_list" else b"[]")
    out = tmp_path / "idx"
    rc, _, err = run(["index", "--dataset", str(ds), "--out", str(out), "--config", str(HASHING), "--quiet"])
    if rc != 0:
        refused(rc, err)
        assert not out.exists()


# -- eval runs for tune weak-match --------------------------------------------------------------

@pytest.mark.parametrize("how", sorted(DAMAGES) + ["outcomes_not_objects", "missing_fields"])
def test_damaged_eval_runs(tmp_path, how):
    run_file = tmp_path / "run.json"
    if how == "outcomes_not_objects":
        run_file.write_text(json.dumps({"dataset": "x", "queries": [1, "a", None]}))
    elif how == "missing_fields":
        run_file.write_text(json.dumps({"dataset": "x", "queries": [{"query_id": "q"}]}))
    else:
        run_file.write_bytes(_damaged(b'{"dataset": "mini", "queries": []}', how))
    rc, _, err = run(["tune", "weak-match", "--runs", str(run_file)])
    refused(rc, err, "run.json")


# -- index folders ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("built")
    os.environ.setdefault("SEARCHKIT_CACHE", str(root / "cache.sqlite"))
    out = root / "hist"
    rc, _, err = run(["index", "--workspace", str(DEMO), "--out", str(out), "--config", str(HASHING), "--quiet"])
    assert rc == 0, err
    return out


INDEX_FILES = ["manifest.json", "config.json", "records.jsonl", "passages.jsonl", "workspace.json",
               "bm25/bm25.json", "bm25/bm25.npz", "dense/dense.json", "dense/dense.faiss"]


@pytest.mark.parametrize("target", INDEX_FILES)
@pytest.mark.parametrize("how", ["truncated", "list", "object", "nested_list", "binary", "not_utf8"])
def test_damaged_index_file(tmp_path, built_index, target, how):
    idx = tmp_path / "hist"
    shutil.copytree(built_index, idx)
    path = store.current_dir(idx) / target
    path.write_bytes(_damaged(path.read_bytes(), how))
    for argv in (["search", "--index", str(idx), "отчёт", "--caller", "u-anna", "--space", "acme"],
                 ["history", "отчёт", "--index", str(idx), "--caller", "u-anna", "--space", "acme"]):
        rc, _, err = run(argv)
        if rc != 0:
            refused(rc, err, "hist", target.split("/")[-1])


# -- workspaces: damaged items are skips, the build goes on -------------------------------------

WS_TARGETS = ["acme/.space/space.json", "acme/.space/chats/ses_4f2a.json", "acme/.space/digests/t_4f2a_01.json",
              "acme/.space/pages/3c6e0b8a-5f0e-4a8b-9d1c-7e2f4a6b8c01.json", "acme/.space/sources.jsonl",
              "acme/.space/files.json", "users.json", "acme/log.md", "acme/.space/app.sqlite"]


@pytest.mark.parametrize("target", WS_TARGETS)
@pytest.mark.parametrize("how", ["truncated", "list", "nested_list", "nested_object", "lone_surrogate", "binary", "not_utf8"])
def test_damaged_workspace_item(tmp_path, target, how):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    path = ws / target
    path.write_bytes(_damaged(path.read_bytes() if path.exists() else b"", how))
    out = tmp_path / "idx"
    rc, _, err = run(["index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet"])
    assert rc == 0, err[:2000]
    assert store.is_index(out)
    rc, _, err = run(["history", "отчёт", "--index", str(out), "--caller", "u-anna", "--space", "research"])
    assert rc == 0, err[:2000]


def test_fifo_and_update_failure_keep_the_previous_index(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    out = tmp_path / "idx"
    rc, _, err = run(["index", "--workspace", str(ws), "--out", str(out), "--config", str(HASHING), "--quiet"])
    assert rc == 0, err
    os.mkfifo(ws / "acme" / "notes" / "pipe.md")
    os.mkfifo(ws / "acme" / ".space" / "chats" / "fifo.json")
    before = store.current_dir(out)
    rc, _, err = run(["index", "--workspace", str(ws), "--out", str(out), "--update", "--quiet"])
    assert rc == 0, err
    assert "special_file" in err
    # an update under a config that does not fit the index is refused; the index is untouched
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"dense": {"embedder": "hashing", "hashing_dim": 17}}))
    current = store.current_dir(out)
    rc, _, err = run(["index", "--workspace", str(ws), "--out", str(out), "--update", "--config", str(bad), "--quiet"])
    refused(rc, err)
    assert store.current_dir(out) == current != before
    rc, _, err = run(["history", "отчёт", "--index", str(out), "--caller", "u-anna", "--space", "acme"])
    assert rc == 0, err


# -- task stores ----------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["tasks.jsonl", "comments.jsonl"])
@pytest.mark.parametrize("how", ["truncated", "list", "nested_list", "lone_surrogate", "huge_value", "binary", "not_utf8"])
def test_damaged_task_import(tmp_path, target, how):
    src = tmp_path / "src"
    shutil.copytree(TASKS, src)
    db = tmp_path / "tasks.sqlite"
    path = src / target
    lines = path.read_bytes().split(b"\n")
    lines[1] = _damaged(lines[1], how)
    path.write_bytes(b"\n".join(lines))
    rc, out, err = run(["tasks", "import", str(src), "--db", str(db)])
    if how == "huge_value":  # issue 27 item 17: a line over the item cap is skipped, named in the report
        assert rc == 0 and f"{target}:2 (too_large: " in out and not err.strip(), (out, err)
        return
    refused(rc, err, target)
    assert not db.exists()


def test_damaged_task_store_file(tmp_path):
    db = tmp_path / "tasks.sqlite"
    db.write_bytes(DAMAGES["binary"])
    for argv in (["tasks", "search", "認証", "--db", str(db), "--space", "acme", "--current-task", "30"],
                 ["tasks", "list", "--db", str(db), "--space", "acme", "--current-task", "30"],
                 ["tasks", "import", str(TASKS), "--db", str(db)]):
        rc, _, err = run(argv)
        refused(rc, err, "tasks.sqlite")
    assert db.read_bytes() == DAMAGES["binary"]


# -- arguments ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "argv",
    [
        ["history", "x" * 10_000_000, "--workspace", str(DEMO), "--caller", "u-anna"],
        ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--limit", "-1"],
        ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--since", "x" * 10_000_000],
        ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--space", "x" * 10_000_000],
        ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--spaces", ","],
        ["history", "отчёт", "--workspace", str(DEMO), "--caller", "u-anna", "--lang", "de"],
        ["history", "отчёт", "--workspace", str(ROOT / "nosuch")],
        ["search", "--index", str(ROOT / "nosuch"), "x"],
        ["eval", "--dataset", "nosuch"],
        ["eval", "--dataset", "mini", "--split", "train"],
        ["tasks", "search", "x", "--db", str(ROOT / "nosuch.sqlite"), "--space", "acme", "--current-task", "30"],
        ["tasks", "search", "x" * 10_000_000, "--db", str(ROOT / "nosuch.sqlite"), "--space", "acme",
         "--current-task", "30"],
        ["index", "--workspace", str(DEMO)],
        ["nosuchverb"],
    ],
)
def test_bad_arguments(argv):
    rc, _, err = run(argv + (["--config", str(HASHING)] if argv[0] == "history" else []))
    refused(rc, err)


# -- FIFOs: every input is a regular file or refused at once (issue 27, item 12) -----------------

FIFO_TIMEOUT_S = 60


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)
    return path


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    os.environ.setdefault("SEARCHKIT_CACHE", str(root / "cache.sqlite"))
    out = root / "run"
    rc, _, err = run(["eval", "--dataset", "mini", "--config", str(HASHING), "--out", str(out), "--quiet"])
    assert rc == 0, err
    return out


def _fifo_case(tmp_path, built_index, run_folder, case: str) -> tuple[list[str], str]:
    """(argv, the name the error must give) with one input of ``case`` a FIFO."""
    fifo = tmp_path / "in.json"
    if case == "config":
        return ["eval", "--dataset", "mini", "--config", str(_fifo(fifo)), "--quiet"], "in.json"
    if case == "config-index":
        return ["index", "--dataset", "mini", "--out", str(tmp_path / "o"), "--config", str(_fifo(fifo)), "--quiet"], "in.json"
    if case in ("config-validate", "config-show", "config-verify"):
        return ["config", case.split("-")[1], str(_fifo(fifo))], "in.json"
    if case == "config-export":
        return ["config", "export", str(_fifo(fifo)), "--out", str(tmp_path / "x"), "--quiet"], "in.json"
    if case == "export-runs":
        runs = tmp_path / "r"
        shutil.copytree(run_folder, runs)
        _fifo(runs / "metrics.json")
        return ["config", "export", str(HASHING), "--out", str(tmp_path / "x"), "--runs", str(runs), "--quiet"], "metrics.json"
    if case == "baseline":
        return ["gate", "--baseline", str(_fifo(fifo)), "--quiet"], "in.json"
    if case == "tune-runs":
        return ["tune", "weak-match", "--runs", str(_fifo(fifo))], "in.json"
    if case in ("tune-run-folder", "compare", "report", "gate-run"):
        runs = tmp_path / "r"
        shutil.copytree(run_folder, runs)
        _fifo(runs / "metrics.json")
        return {
            "tune-run-folder": ["tune", "weak-match", "--runs", str(runs)],
            "compare": ["compare", str(run_folder), str(runs)],
            "report": ["report", str(run_folder), str(runs), "--out", str(tmp_path / "report.html")],
            "gate-run": ["gate", "--baseline", str(ROOT / "evals" / "baselines" / "mini-dev.json"), "--run", str(runs)],
        }[case], "metrics.json"
    if case == "cases":
        return ["tune", "adaptive-fusion", "--cases", str(_fifo(fifo)), "--dataset", "mini", "--quiet"], "in.json"
    if case in ("corpus.jsonl", "queries.jsonl", "qrels/dev.tsv"):
        ds = tmp_path / "ds"
        shutil.copytree(MINI, ds)
        _fifo(ds / case)
        return ["eval", "--dataset", str(ds), "--config", str(HASHING), "--quiet"], case.split("/")[-1]
    if case in ("CURRENT", "records.jsonl", "manifest.json", "passages.jsonl", "config.json"):
        idx = tmp_path / "hist"
        shutil.copytree(built_index, idx)
        target = idx / "CURRENT" if case == "CURRENT" else store.current_dir(idx) / case
        _fifo(target)
        return ["search", "--index", str(idx), "отчёт"], case
    if case == "cache":
        return ["eval", "--dataset", "mini", "--config", str(HASHING), "--quiet", "@cache"], "cache.sqlite"
    if case == "tasks-import":
        src = tmp_path / "src"
        shutil.copytree(TASKS, src)
        _fifo(src / "tasks.jsonl")
        return ["tasks", "import", str(src), "--db", str(tmp_path / "t.sqlite")], "tasks.jsonl"
    raise AssertionError(case)


FIFO_CASES = ["config", "config-index", "config-validate", "config-show", "config-verify", "config-export",
              "export-runs", "baseline", "tune-runs", "tune-run-folder", "compare", "report", "gate-run", "cases",
              "corpus.jsonl", "queries.jsonl", "qrels/dev.tsv", "CURRENT", "records.jsonl", "manifest.json",
              "passages.jsonl", "config.json", "cache", "tasks-import"]


@pytest.mark.parametrize("case", FIFO_CASES)
def test_a_fifo_given_as_any_input_is_refused_at_once(tmp_path, monkeypatch, built_index, run_folder, case):
    argv, name = _fifo_case(tmp_path, built_index, run_folder, case)
    if argv[-1] == "@cache":
        argv = argv[:-1]
        monkeypatch.setenv("SEARCHKIT_CACHE", str(_fifo(tmp_path / "cache.sqlite")))
    out, err = io.StringIO(), io.StringIO()

    def hang(*_):
        raise TimeoutError(f"{case}: searchkit {' '.join(argv)[:200]} waited on a FIFO")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(FIFO_TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert rc == 2, (case, err.getvalue()[-2000:])
    refused(rc, err.getvalue(), name)


# -- errors name the file, never its content (issue 27, item 8) ----------------------------------

SECRET_LINE = "root:$6$S3CRETsalt$hunter2hash:19000:0:99999:7:::"


def _secret_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SECRET_LINE + "\n" + "\t".join(["S3CRET-a", "S3CRET-b", "S3CRET-c"]) + "\n", encoding="utf-8")
    return path


def _no_content(rc: int, err: str) -> None:
    refused(rc, err)
    assert "S3CRET" not in err and "hunter2" not in err, err


@pytest.mark.parametrize("target", ["corpus.jsonl", "queries.jsonl", "qrels/dev.tsv"])
def test_a_dataset_file_holding_a_secret_is_named_never_quoted(tmp_path, target):
    ds = tmp_path / "ds"
    shutil.copytree(MINI, ds)
    (ds / target).unlink()
    _secret_file(ds / target)
    rc, _, err = run(["eval", "--dataset", str(ds), "--config", str(HASHING), "--quiet"])
    _no_content(rc, err)
    assert target.split("/")[-1] in err


def test_other_inputs_holding_a_secret_are_named_never_quoted(tmp_path, run_folder):
    secret = _secret_file(tmp_path / "secret.txt")
    for argv in (["eval", "--dataset", "mini", "--config", str(secret), "--quiet"],
                 ["config", "validate", str(secret)], ["config", "verify", str(secret)],
                 ["gate", "--baseline", str(secret)], ["tune", "weak-match", "--runs", str(secret)],
                 ["tune", "adaptive-fusion", "--cases", str(secret)]):
        rc, out, err = run(argv)
        assert "S3CRET" not in out + err and "hunter2" not in out + err, (argv, out, err)
        assert rc != 0
    secret_json = tmp_path / "secret.json"
    for doc in (["S3CRET-value-123456789"], {"S3CRET-key-123456789x": 1}, {"fusion": "S3CRET-value-1234567"},
                {"queries": [{"id": "S3CRET-id", "answerable": "S3CRET"}], "dataset": "S3CRET"}):
        secret_json.write_text(json.dumps(doc))
        for argv in (["eval", "--dataset", "mini", "--config", str(secret_json), "--quiet"],
                     ["tune", "weak-match", "--runs", str(secret_json)], ["gate", "--baseline", str(secret_json)]):
            rc, out, err = run(argv)
            assert rc != 0 and "S3CRET" not in out + err, (argv, doc, out, err)


# -- tracebacks of issue 27 item 13: deep JSON and non-object rows in a run folder; a full disk --

@pytest.mark.parametrize("how", ["deep", "rows_not_objects", "metrics_not_numbers", "ids_missing", "huge_int"])
def test_a_damaged_run_folder_is_one_line_for_compare_report_and_gate(tmp_path, run_folder, how):
    runs = tmp_path / "r"
    shutil.copytree(run_folder, runs)
    metrics = json.loads((runs / "metrics.json").read_text())
    if how == "deep":
        text = "[" * 200_000 + "]" * 200_000
    elif how == "huge_int":
        text = '{"queries": [], "n": ' + "7" * 5000 + "}"
    else:
        if how == "rows_not_objects":
            metrics["queries"] = [1, "a", None] + metrics["queries"]
        elif how == "metrics_not_numbers":
            metrics["queries"][0]["metrics"] = {"nDCG@10": "S3CRET"}
        else:
            del metrics["queries"][0]["id"]
        text = json.dumps(metrics)
    (runs / "metrics.json").write_text(text)
    for argv in (["compare", str(run_folder), str(runs)],
                 ["report", str(run_folder), str(runs), "--out", str(tmp_path / "r.html")],
                 ["gate", "--baseline", str(ROOT / "evals" / "baselines" / "mini-dev.json"), "--run", str(runs)],
                 ["tune", "weak-match", "--runs", str(runs)]):
        if argv[0] == "tune" and how == "metrics_not_numbers":
            continue  # tune reads the signals, not the metrics
        rc, _, err = run(argv)
        refused(rc, err, "metrics.json")
        assert "S3CRET" not in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("what", ["faiss", "bm25", "records"])
def test_an_index_write_failing_on_a_full_disk_says_so_and_keeps_the_index(tmp_path, monkeypatch, what):
    out = tmp_path / "idx"
    rc, _, err = run(["index", "--dataset", "mini", "--out", str(out), "--config", str(HASHING), "--quiet"])
    assert rc == 0, err
    before = store.current_dir(out)
    if what == "faiss":
        import faiss

        def full(*_a, **_k):
            raise RuntimeError("Error in void faiss::write_index(...): write error in x: 9955 != 256000 (No space left on device)")

        monkeypatch.setattr(faiss, "write_index", full)
    elif what == "records":
        import errno

        from searchkit.records import Record

        def full(*_a, **_k):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(Record, "to_dict", full)
    else:
        import errno

        import numpy as np

        def full(*_a, **_k):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(np, "savez", full)
    rc, _, err = run(["index", "--dataset", "mini", "--out", str(out), "--config", str(HASHING), "--quiet"])
    refused(rc, err, "the disk is full")
    assert {"faiss": "dense.faiss", "bm25": "bm25.npz", "records": "records.jsonl"}[what] in err and "9955" not in err
    assert store.current_dir(out) == before
    monkeypatch.undo()
    monkeypatch.setenv("SEARCHKIT_CACHE", os.environ["SEARCHKIT_CACHE"])
    rc, _, err = run(["search", "--index", str(out), "отчёт"])
    assert rc == 0, err
