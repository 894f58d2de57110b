"""``mlflow ui`` reads the store ``eval --mlflow`` writes (issue 40 item 7).

The ``mlflow`` extra held only mlflow-skinny, the tracking client: ``mlflow ui`` then failed with
"No module named 'flask'", and mlflow-skinny ships none of the UI's pages either. The extra now
names the full ``mlflow`` package beside it. The server test runs where that is installed (CI's
``SEARCHKIT_EXTRAS`` holds ``mlflow``; ``pip install -e '.[mlflow]'`` here) and skips, saying so,
where the environment predates it."""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def test_the_mlflow_extra_brings_the_ui():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {Requirement(r).name.lower() for r in extras["mlflow"]}
    assert "mlflow" in names, "mlflow ui needs the full mlflow package (Flask and the UI's pages)"
    assert "mlflow-skinny" in names


def _ui_installed() -> bool:
    spec = importlib.util.find_spec("mlflow")
    if spec is None or importlib.util.find_spec("flask") is None or not spec.submodule_search_locations:
        return False
    return any((Path(p) / "server" / "js" / "build" / "index.html").is_file() for p in spec.submodule_search_locations)


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.skipif(not _ui_installed(), reason="the mlflow UI is not installed here (the environment predates the "
                    "mlflow extra's full mlflow: pip install -e '.[mlflow]')")
def test_mlflow_ui_reads_the_store_eval_writes(tmp_path, monkeypatch):
    from searchkit.cli import main

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.chdir(ROOT)
    store = tmp_path / "mlruns"
    assert main(["eval", "--dataset", "mini", "--config", str(ROOT / "tests" / "data" / "hashing.json"), "--quiet",
                 "--mlflow", store.as_uri()]) == 0
    port = _free_port()
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true", "NO_PROXY": "127.0.0.1"}
    server = subprocess.Popen([sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", store.as_uri(), "--host",
                               "127.0.0.1", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        page = None
        for _ in range(120):
            if server.poll() is not None:
                pytest.fail("mlflow ui exited: " + server.stderr.read().decode("utf-8", "replace")[-800:])
            try:
                with opener.open(base + "/", timeout=5) as resp:
                    page = resp.read().decode("utf-8", "replace")
                break
            except OSError:
                time.sleep(0.5)
        assert page is not None and "<html" in page.lower()  # the UI's own page, not an error
        with opener.open(base + "/ajax-api/2.0/mlflow/experiments/search?max_results=10", timeout=10) as resp:
            names = [e["name"] for e in json.loads(resp.read())["experiments"]]
        assert "searchkit" in names
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
