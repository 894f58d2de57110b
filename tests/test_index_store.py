"""Index folders (issue 8 items 1-2): --out never deletes what is not an index, readers see exactly
one complete version while writers publish new ones, and a kill at any point leaves the previous
version loadable. The concurrency and crash tests print their figures (run with -s to see them)."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.errors import DataError
from searchkit.index import store
from searchkit.index.cache import EmbeddingCache
from searchkit.records import Record
from searchkit.searcher import Searcher
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
HASHING = ROOT / "tests" / "data" / "hashing.json"
EXE = str(Path(sys.executable).parent / "searchkit")
ENV = {**os.environ, "SEARCHKIT_CACHE": ""}


def _cli(*args, timeout=300):
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=ENV, timeout=timeout, cwd=ROOT)


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture()
def workspace(tmp_path):
    w = tmp_path / "ws"
    shutil.copytree(DEMO, w, symlinks=True)
    return w


# -- item 1: --out ----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["same", "inside", "parent"])
def test_out_is_never_the_input_or_inside_it(workspace, where):
    out = {"same": workspace, "inside": workspace / "acme" / "idx", "parent": workspace.parent}[where]
    before = _tree(workspace)
    p = _cli("index", "--workspace", str(workspace), "--out", str(out), "--config", str(HASHING), "--quiet")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "--out" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert _tree(workspace) == before


def test_out_that_is_a_file_or_a_foreign_folder_is_refused(workspace, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    for out in (a_file, foreign):
        p = _cli("index", "--workspace", str(workspace), "--out", str(out), "--config", str(HASHING), "--quiet")
        assert p.returncode == 2 and "Traceback" not in p.stderr and str(out) in p.stderr
    assert a_file.read_text() == "keep me" and (foreign / "cat.jpg").read_bytes() == b"\xff\xd8"
    p = _cli("index", "--dataset", "mini", "--out", str(foreign), "--config", str(HASHING), "--quiet")
    assert p.returncode == 2 and (foreign / "cat.jpg").exists()


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_out_may_be_new_empty_or_an_index(workspace, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "idx", empty, empty):  # the second write goes into an index
        p = _cli("index", "--workspace", str(workspace), "--out", str(out), "--config", str(HASHING), "--quiet")
        assert p.returncode == 0, p.stderr
        assert store.is_index(out)
    assert [p.name for p in empty.iterdir() if p.name.startswith("v")] == ["v000002"]  # the current one only (H3)



# -- issue 27 item 10: only what the store wrote is ever deleted ----------------------------------

def _user_versions(folder: Path) -> None:
    for i in (1, 2, 7):
        (folder / f"v{i:06d}").mkdir(parents=True)
        (folder / f"v{i:06d}" / "photo.txt").write_text(f"holiday {i}")


@pytest.mark.parametrize("marker", [
    {"format": "searchkit.index-store", "store_version": 1},  # as the first store format wrote it
    {"format": "searchkit.index-store", "store_version": 2, "versions": {}},
])
def test_a_marker_beside_user_folders_named_like_versions_is_refused(tmp_path, workspace, marker):
    out = tmp_path / "mine"
    _user_versions(out)
    (out / store.MARKER).write_text(json.dumps(marker))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    p = _cli("index", "--workspace", str(workspace), "--out", str(out), "--config", str(HASHING), "--quiet")
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "v000001" in p.stderr and "did not write" in p.stderr
    with pytest.raises(DataError, match="did not write"):
        _save("verA", out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_folder_named_like_a_version_put_into_an_index_is_never_deleted(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    (out / "v000009").mkdir()
    (out / "v000009" / "keep.txt").write_text("mine")
    with pytest.raises(DataError, match="'v000009', a folder this index did not write"):
        _save("verB", out)
    assert (out / "v000009" / "keep.txt").read_text() == "mine"
    assert "verA" in Searcher.load(out, cache=EmbeddingCache(None)).records[0].text  # the index is as it was
    assert (out / "v000009" / "keep.txt").read_text() == "mine"  # a reader's tidying leaves it too


def test_a_registered_version_whose_stamp_changed_is_not_deleted(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    _save("verB", out)
    # someone replaced the registered v000002 by a folder of their own under the same name while it
    # was current: the store's stamp is not in it, so the next write never deletes it
    shutil.rmtree(out / "v000002")
    (out / "v000002").mkdir()
    (out / "v000002" / ".readers").write_text("someone else's")
    (out / "v000002" / "keep.txt").write_text("mine")
    (out / "CURRENT").write_text("v000002\n")
    with pytest.raises(DataError):
        Searcher.load(out, cache=EmbeddingCache(None))
    _save("verA", out)
    assert (out / "v000002" / "keep.txt").read_text() == "mine"


def test_a_marker_that_is_not_a_searchkit_marker_is_refused(tmp_path, workspace):
    for text in ("not json", "[]", json.dumps({"format": "other"})):
        out = tmp_path / f"m{len(text)}"
        out.mkdir()
        (out / store.MARKER).write_text(text)
        assert not store.is_index(out)
        p = _cli("index", "--workspace", str(workspace), "--out", str(out), "--config", str(HASHING), "--quiet")
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
        assert "not a searchkit index marker" in p.stderr and text not in p.stderr
        assert sorted(q.name for q in out.iterdir()) == [store.MARKER]


def test_an_index_of_the_first_store_format_is_taken_over_and_pruned(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    _save("verB", out)  # rewrite it as the first store format left it: two versions, no register
    old = store.current_dir(out)
    shutil.copytree(old, out / "v000001")
    for v in ("v000001", old.name):
        (out / v / ".readers").write_text("")
    (out / store.MARKER).write_text(json.dumps({"format": "searchkit.index-store", "store_version": 1}))
    (out / "v000003").mkdir()  # and someone's folder named like a version
    with pytest.raises(DataError, match="v000003"):
        _save("verA", out)
    shutil.rmtree(out / "v000003")
    _save("verA", out)
    assert sorted(q.name for q in out.iterdir() if q.name.startswith("v")) == ["v000003"]
    assert json.loads((out / store.MARKER).read_text())["store_version"] == 2


# -- item 2: versions, readers, pruning -----------------------------------------------------------

def _records(tag: str, n: int = 30) -> list[Record]:
    return [Record(id=f"r{i:03d}", kind="file", space="s", text=f"{tag} отчёт номер {i:03d} выгрузка {tag}")
            for i in range(n)]


def _save(tag: str, out: Path, n: int = 30) -> None:
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}})
    Searcher.build(_records(tag, n), cfg, cache=EmbeddingCache(None)).save(out)


def test_writes_publish_versions_and_keep_only_the_current_one(tmp_path):
    out = tmp_path / "idx"
    for tag in ("verA", "verB", "verA"):
        _save(tag, out)
    versions = sorted(p.name for p in out.iterdir() if p.name.startswith("v"))
    assert versions == ["v000003"]  # deleted means erased (H3): no previous version keeps old text
    assert (out / "CURRENT").read_text().strip() == "v000003"
    assert json.loads((out / store.MARKER).read_text())["versions"].keys() == {"v000003"}
    s = Searcher.load(out, cache=EmbeddingCache(None))
    assert all("verA" in r.text for r in s.records)
    assert not any("verB" in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


_DIE_IN_FILL = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from searchkit.index import store
    def fill(tmp):
        (tmp / "records.jsonl").write_text("half-written verDEAD")
        os._exit(9)  # killed in the middle of a write
    store.write_version(Path(sys.argv[1]), fill)
""")


def test_a_failed_write_and_a_dead_writers_leftovers(tmp_path, monkeypatch):
    out = tmp_path / "idx"
    _save("verA", out)
    before = _tree(out)

    def boom(tmp):
        (tmp / "half.jsonl").write_text("{")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        store.write_version(out, boom)
    assert _tree(out) == before
    # a writer killed while it wrote leaves its registered temporary folder
    p = subprocess.run([sys.executable, "-c", _DIE_IN_FILL, str(out)], capture_output=True, text=True, env=ENV)
    assert p.returncode == 9, p.stderr
    assert (out / ".tmp-v000002").is_dir()
    # one renamed into place but never made current (it died before replacing CURRENT)
    real = store.atomic_write_text

    def die_at_pointer(path, text):
        if Path(path).name == store.POINTER:
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(store, "atomic_write_text", die_at_pointer)
    with pytest.raises(KeyboardInterrupt):
        _save("verC", out)
    monkeypatch.undo()
    assert (out / "v000003").is_dir() and (out / "CURRENT").read_text().strip() == "v000001"
    assert "verA" in Searcher.load(out, cache=EmbeddingCache(None)).records[0].text
    # the reader, once done, removed both (no writer was at work); the next writer would have
    assert sorted(q.name for q in out.iterdir()) == [".lock", "CURRENT", store.MARKER, "v000001"]
    _save("verB", out)
    versions = [q.name for q in out.iterdir() if q.name.startswith(("v", ".tmp"))]
    assert len(versions) == 1 and (out / "CURRENT").read_text().strip() == versions[0]
    assert "verB" in Searcher.load(out, cache=EmbeddingCache(None)).records[0].text


def test_a_version_being_read_is_not_pruned(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    with store.reading(out) as first:
        _save("verB", out)
        _save("verA", out)  # would prune the first version, but a reader holds it
        assert (first / "manifest.json").is_file()
    _save("verB", out)
    assert not first.exists()


def test_damaged_index_files_are_one_line_errors(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    version = store.current_dir(out)
    cases = {
        "manifest.json": "[]",
        "records.jsonl": (version / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[0],
        "passages.jsonl": "not json\n",
        "config.json": "[" * 100_000,
    }
    for name, text in cases.items():
        original = (version / name).read_bytes()
        (version / name).write_text(text, encoding="utf-8")
        p = _cli("search", "--index", str(out), "отчёт")
        assert p.returncode == 2, (name, p.stderr)
        assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, (name, p.stderr)
        assert len(p.stderr) < 400
        (version / name).write_bytes(original)
    (out / "CURRENT").write_text("../../etc")
    p = _cli("search", "--index", str(out), "отчёт")
    assert p.returncode == 2 and "Traceback" not in p.stderr


_WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_index_store import _save
    from pathlib import Path
    out, stop = Path(sys.argv[1]), time.time() + float(sys.argv[2])
    n = 0
    while time.time() < stop:
        _save("verA" if n % 2 else "verB", out, 200)
        n += 1
    print(n)
""")

_READER = textwrap.dedent("""
    import sys, time, json
    import numpy as np
    from pathlib import Path
    from searchkit.index.cache import EmbeddingCache
    from searchkit.index.embedders import make_embedder
    from searchkit.searcher import Searcher
    out, stop = Path(sys.argv[1]), time.time() + float(sys.argv[2])
    emb = make_embedder("hashing", dim=64)
    ok = failed = mixed = 0
    while time.time() < stop:
        try:
            s = Searcher.load(out, cache=EmbeddingCache(None))
        except Exception as exc:
            failed += 1
            print("FAILED", type(exc).__name__, exc, file=sys.stderr)
            continue
        tags = {t for r in s.records for t in ("verA", "verB") if t in r.text}
        tags |= {t for p in s.passages for t in ("verA", "verB") if t in p.text}
        tags |= {t for t in ("vera", "verb") if t in s.retrievers["bm25"].index.vocab}
        vec_ok = np.allclose(s.retrievers["dense"].index.vectors[:5], emb.embed_passages([p.text for p in s.passages[:5]]), atol=1e-6)
        if len({t.lower() for t in tags}) != 1 or not vec_ok:
            mixed += 1
        else:
            ok += 1
    print(json.dumps({"ok": ok, "failed": failed, "mixed": mixed}))
""")


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_readers_see_one_complete_version_while_a_writer_publishes(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out, 200)
    seconds = "12"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER.format(tests=str(ROOT / "tests")), str(out), seconds],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    readers = [subprocess.Popen([sys.executable, "-c", _READER, str(out), seconds], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=ENV) for _ in range(2)]
    w_out, w_err = writer.communicate(timeout=180)
    assert writer.returncode == 0, w_err
    totals = {"ok": 0, "failed": 0, "mixed": 0}
    for r in readers:
        r_out, r_err = r.communicate(timeout=180)
        assert r.returncode == 0, r_err
        for k, v in json.loads(r_out.strip().splitlines()[-1]).items():
            totals[k] += v
    print(f"\nindex concurrency: {int(w_out.strip())} versions written; reads {totals['ok'] + totals['failed'] + totals['mixed']}: "
          f"{totals['ok']} complete, {totals['failed']} failed, {totals['mixed']} mixed")
    assert int(w_out.strip()) >= 3 and totals["ok"] >= 2
    assert totals["failed"] == 0 and totals["mixed"] == 0


# -- crash test: kill -9 at random points ---------------------------------------------------------

_SLOW_WRITE = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_index_store import _records
    from pathlib import Path
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.searcher import Searcher
    cfg = SearchConfig.from_dict({{"dense": {{"embedder": "hashing", "hashing_dim": 64}}}})
    s = Searcher.build(_records(sys.argv[2], 50), cfg, cache=EmbeddingCache(None))
    real = s._write_files
    def slow(tmp, extra):  # the same files, written with pauses so a kill lands mid-write
        real(tmp, extra)
        for p in sorted(tmp.rglob("*")):
            time.sleep(0.05)
    s._write_files = slow
    print("start", flush=True)
    s.save(Path(sys.argv[1]))
""")


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_kill_9_at_random_points_leaves_the_previous_version(tmp_path, workspace):
    rng = random.Random(20261201)
    out = tmp_path / "idx"
    _save("verA", out, 50)
    runs = lost = mid_write = 0
    tags_seen = []
    # 1) the library writer, killed anywhere in a slow write (12 runs)
    for i in range(12):
        tag = "verB" if i % 2 == 0 else "verA"
        p = subprocess.Popen([sys.executable, "-c", _SLOW_WRITE.format(tests=str(ROOT / "tests")), str(out), tag],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        assert p.stdout.readline().strip() == "start"
        time.sleep(rng.uniform(0.0, 1.2))
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        runs += 1
        mid_write += any(q.name.startswith(".tmp-") for q in out.iterdir())
        try:
            s = Searcher.load(out, cache=EmbeddingCache(None))
            tags = {t for r in s.records for t in ("verA", "verB") if t in r.text}
            assert len(tags) == 1
            tags_seen.append(tags.pop())
        except Exception:
            lost += 1
    # 2) the CLI: index and index --update of a workspace, killed at random times (12 runs)
    hist = tmp_path / "hist"
    p = _cli("index", "--workspace", str(workspace), "--out", str(hist), "--config", str(HASHING), "--quiet")
    assert p.returncode == 0, p.stderr
    t0 = time.time()
    p = _cli("index", "--workspace", str(workspace), "--out", str(hist), "--update", "--quiet")
    full = time.time() - t0
    assert p.returncode == 0, p.stderr
    for i in range(12):
        args = ["index", "--workspace", str(workspace), "--out", str(hist), "--quiet"]
        args += ["--update"] if i % 2 else ["--config", str(HASHING)]
        (workspace / "acme" / "notes" / f"crash-{i}.md").write_text(f"заметка {i} про выгрузку")
        proc = subprocess.Popen([EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=ROOT)
        time.sleep(rng.uniform(0.3 * full, 1.1 * full))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        runs += 1
        mid_write += any(q.name.startswith(".tmp-") for q in hist.iterdir())
        try:
            HistoryIndex.load(hist, cache=EmbeddingCache(None))
        except Exception:
            lost += 1
    # after all that, --update still works and leaves no temporaries behind
    p = _cli("index", "--workspace", str(workspace), "--out", str(hist), "--update", "--quiet")
    assert p.returncode == 0, p.stderr
    leftovers = [q.name for q in hist.iterdir() if q.name.startswith(".tmp-")]
    print(f"\nindex crash test: {runs} kill -9 runs ({len(tags_seen)} library writes, {runs - len(tags_seen)} CLI "
          f"index/--update); {mid_write} killed mid-write; {lost} left no loadable index; temporaries after the "
          f"next write: {len(leftovers)}")
    assert lost == 0 and not leftovers and mid_write >= 3
    idx = HistoryIndex.load(hist, cache=EmbeddingCache(None))
    assert any(r.ref == "notes/crash-11.md" for r in idx.searcher.records)


def test_a_first_write_killed_leaves_a_folder_the_next_write_takes(tmp_path):
    out = tmp_path / "k"
    out.mkdir()
    p = subprocess.run([sys.executable, "-c", _DIE_IN_FILL, str(out)], capture_output=True, text=True, env=ENV)
    assert p.returncode == 9, p.stderr
    assert (out / ".tmp-v000001").is_dir()
    store.check_target(out)  # the marker, the lock and a temporary folder: still a target
    _save("verA", out)
    assert not (out / ".tmp-v000001").exists() and store.is_index(out)
    assert sorted(q.name for q in out.iterdir()) == [".lock", "CURRENT", store.MARKER, "v000002"]


def test_a_temporary_folder_it_did_not_register_is_left_alone(tmp_path):
    out = tmp_path / "k"
    (out / ".tmp-abc").mkdir(parents=True)
    (out / ".tmp-abc" / "mine.txt").write_text("not the store's")
    (out / ".lock").touch()
    _save("verA", out)
    _save("verB", out)
    assert (out / ".tmp-abc" / "mine.txt").read_text() == "not the store's" and store.is_index(out)


def test_writing_never_changes_the_mode_of_a_file_someone_put_in_the_folder(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    mine = out / "my-notes.txt"
    mine.write_text("x")
    os.chmod(mine, 0o644)
    _save("verB", out)
    assert (mine.stat().st_mode & 0o777) == 0o644
    assert (out.stat().st_mode & 0o777) == 0o700 and ((out / "CURRENT").stat().st_mode & 0o777) == 0o600


def test_a_pointer_to_a_missing_version_says_the_index_is_damaged(tmp_path):
    out = tmp_path / "idx"
    _save("verA", out)
    (out / "CURRENT").write_text("v000099\n")
    with pytest.raises(DataError, match="missing or incomplete; the index is damaged"):
        Searcher.load(out, cache=EmbeddingCache(None))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("target", ["CURRENT", "manifest.json", "records.jsonl", "passages.jsonl", ".readers",
                                    store.MARKER])
def test_a_fifo_in_an_index_is_a_one_line_error_never_a_hang(tmp_path, target):
    out = tmp_path / "idx"
    _save("verA", out)
    where = out if target in ("CURRENT", store.MARKER) else store.current_dir(out)
    (where / target).unlink()
    os.mkfifo(where / target)
    p = _cli("search", "--index", str(out), "отчёт", timeout=60)  # a hang fails the test
    if target == store.MARKER:  # the marker is not read to search: the index still works
        assert p.returncode == 0, p.stderr
    else:
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
        assert target in p.stderr
    if target == store.MARKER:  # but nothing is written beside a marker that is not one
        with pytest.raises(DataError, match="not a searchkit index marker"):
            store.write_version(out, lambda tmp: None)


def test_two_builds_of_the_same_index_are_byte_identical_marker_included(tmp_path):
    _save("verA", tmp_path / "a")
    _save("verA", tmp_path / "b")

    def files(folder):
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                if p.is_file() and p.name != ".lock"}

    assert files(tmp_path / "a") == files(tmp_path / "b")
    stamp = json.loads((tmp_path / "a" / store.MARKER).read_text())["versions"]["v000001"]
    assert stamp == (tmp_path / "a" / "v000001" / ".readers").read_text() and len(stamp) == 64


def test_a_folder_under_the_name_of_a_write_that_died_before_naming_it_is_not_deleted(tmp_path):
    out = tmp_path / "idx"
    p = subprocess.run([sys.executable, "-c", _DIE_IN_FILL, str(out)], capture_output=True, text=True, env=ENV)
    assert p.returncode == 9, p.stderr
    assert json.loads((out / store.MARKER).read_text())["versions"] == {"v000001": store.PENDING}
    shutil.rmtree(out / ".tmp-v000001")
    (out / "v000001").mkdir()  # someone's folder, with an empty .readers like the first store format's
    (out / "v000001" / ".readers").write_text("")
    (out / "v000001" / "manifest.json").write_text("{}")
    _save("verA", out)
    assert (out / "v000001" / "manifest.json").read_text() == "{}"
