"""The processes `searchkit serve` starts (issue 39 item 1): the refresh child runs only the
installed searchkit, never a `searchkit/` tree of the folder the server was started from, and a
refresh whose child did not refresh is never a success. Hashing embedder; servers on 127.0.0.1,
every wait bounded, each server stopped by its test."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.serve import child_process, state
from searchkit.serve.state import ChildRefresh, Holder, Refresher, Served
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
CFG_DICT = {"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}}
CFG = SearchConfig.from_dict(CFG_DICT)
START_S = 120
GONE = "acme/.space/chats/ses_4f2a.json"


def plant(folder: Path, marker: Path) -> Path:
    """A `searchkit/` tree whose `serve/refresh_child.py` writes ``marker`` and exits 0."""
    pkg = folder / "searchkit"
    (pkg / "serve").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "serve" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "serve" / "refresh_child.py").write_text(
        f"open({str(marker)!r}, 'w').write('planted code ran')\nprint('refreshed')\n", encoding="utf-8")
    return folder


@pytest.fixture()
def ws(tmp_path):
    out = tmp_path / "ws"
    shutil.copytree(DEMO, out)
    return out


@pytest.fixture()
def child(ws, tmp_path, monkeypatch):
    """A ChildRefresh over an index of ``ws``, its store seeded; the cache in tmp."""
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    cfg_file = tmp_path / "cfg.json"
    cfg_file.write_text(json.dumps(CFG_DICT), encoding="utf-8")
    served = Served(HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None)), 1, "t0")
    refresh = ChildRefresh(tmp_path / "state" / "index", ws, cfg_file, CFG, timeout=300)
    refresh.seed(served)
    return refresh, served


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_the_refresh_child_never_runs_a_searchkit_tree_of_the_current_folder(child, ws, tmp_path, monkeypatch):
    refresh, served = child
    marker = tmp_path / "planted-ran"
    monkeypatch.chdir(plant(tmp_path / "planted", marker))
    (ws / GONE).unlink()
    new, line = refresh(served, ws)
    assert not marker.exists()
    assert new.version == 2 and line
    assert not any(r.ref == "chat:ses_4f2a" for r in new.index.searcher.records)  # a real refresh
    assert any(r.ref == "chat:ses_4f2a" for r in served.index.searcher.records)


def test_a_child_that_exits_0_without_refreshing_is_a_failed_refresh(child, ws, monkeypatch):
    refresh, served = child
    monkeypatch.setattr(state, "CHILD_MODULE", "this")  # prints the Zen of Python, exits 0, writes nothing
    done = []
    r = Refresher(Holder(served), ws, 60, lambda s, rep, err: done.append((s, err)), refresh=refresh)
    assert r.refresh_now() is None
    assert len(done) == 1 and done[0][0] is None and "without writing a new version" in done[0][1]


def test_the_child_imports_the_server_s_own_searchkit_and_not_the_current_folder(tmp_path, monkeypatch):
    """Whatever the current folder and PYTHONPATH hold, a child imports the searchkit the server runs."""
    here = plant(tmp_path / "planted", tmp_path / "never")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "sk_probe.py").write_text("import searchkit\nprint(searchkit.__file__)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(probe))
    monkeypatch.chdir(here)
    monkeypatch.setenv("PYTHONPATH", str(here))
    path = child_process.import_path()
    assert str(here) not in path and "" not in path and all(os.path.isabs(p) for p in path)
    child = child_process.start("sk_probe", [], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = child.proc.communicate(timeout=120)
    finally:
        child.close()
    assert child.proc.returncode == 0, err[-2000:]
    assert Path(out.strip()).resolve() == (ROOT / "searchkit" / "__init__.py").resolve()


def _exe() -> Path:
    return Path(sys.executable).parent / "searchkit"


@pytest.mark.slow  # issue 42 item 8: runs in .ci/run's second pass (scripts/test.sh --slow)
def test_a_server_started_from_a_folder_holding_searchkit_refreshes_with_the_installed_one(ws, tmp_path):
    marker = tmp_path / "planted-ran"
    here = plant(tmp_path / "planted", marker)
    log = tmp_path / "calls.log"
    tokens = tmp_path / "tokens.json"
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite")}
    subprocess.run([str(_exe()), "serve-token", "--tokens", str(tokens), "--caller", "u-anna",
                    "--workspace", str(ws)], env=env,
                   capture_output=True, check=True, timeout=120)
    proc = subprocess.Popen([str(_exe()), "serve", "--transport", "http", "--port", "0", "--config", str(CONFIG),
                             "--workspace", str(ws), "--tokens", str(tokens), "--refresh-every", "1s",
                             "--log-file", str(log)], cwd=here, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + START_S
        refreshes: list[dict] = []
        changed = False
        while time.monotonic() < deadline and not any(x.get("outcome") == "published" for x in refreshes):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
            if not changed and any(x["event"] == "listening" for x in lines):
                (ws / GONE).unlink()  # something to publish: a refresh that finds nothing changed publishes nothing
                changed = True
            refreshes = [x for x in lines if x["event"] == "refresh"]
            time.sleep(0.3)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(5)
    assert not marker.exists()
    assert refreshes and all(x["ok"] for x in refreshes), refreshes
    published = [x for x in refreshes if x["outcome"] == "published"]
    assert published and published[0]["index_version"] == 2
