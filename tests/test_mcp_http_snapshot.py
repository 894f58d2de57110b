"""The JSON API beside MCP over HTTP (issue 41 items 6 and 7): ``GET /api/spaces/{slug}/snapshot``
answers as the MCP resource does (a member's spaces; one 404 for a space the caller is not in, one
that does not exist and one with history search off; 401 without a token); ``/api/tools`` and
``/openapi.json`` give the same schemas as ``tools/list`` (each answer's schema is the tool's output
schema, and a real answer of the JSON API validates against it). One server on 127.0.0.1, a port
the OS picks, stopped by the fixture; hashing embedder."""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import httpx  # noqa: E402
import jsonschema  # noqa: E402

from searchkit.cli import main  # noqa: E402
from searchkit.ingest import tasks as task_store  # noqa: E402
from searchkit.tools.registry import TOOLS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
START_S = 90


def _token(path, caller, space):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["serve-token", "--tokens", str(path), "--caller", caller, "--space", space,
                     "--workspace", str(DEMO)]) == 0
    return out.getvalue().strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("http")
    ws = tmp / "ws"
    shutil.copytree(DEMO, ws)
    tokens = tmp / "tokens.json"
    who = {"anna": _token(tokens, "u-anna", "acme"), "olga": _token(tokens, "u-olga", "legal")}
    log = tmp / "calls.log"
    db = tmp / "tasks.sqlite"
    task_store.import_into(db, ROOT / "datasets" / "tasks-demo" / "tasks.jsonl",
                           ROOT / "datasets" / "tasks-demo" / "comments.jsonl")
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "searchkit.cli", "serve", "--transport", "http", "--port", "0",
                             "--config", str(CONFIG), "--workspace", str(ws), "--tokens", str(tokens),
                             "--tasks-db", str(db), "--log-file", str(log)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = None
    deadline = time.monotonic() + START_S
    try:
        while url is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"the server stopped: {proc.stderr.read().decode()[-2000:]}")
            for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else ():
                if json.loads(line)["event"] == "listening":
                    url = json.loads(line)["url"]
            time.sleep(0.2)
        assert url, "the server did not start in time"
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client, who
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait(5)


def _get(client, path, token):
    return client.get(path, headers={"Authorization": f"Bearer {token}"} if token else {})


def test_the_snapshot_route_answers_a_member_and_refuses_every_other_space_alike(server):
    client, who = server
    r = _get(client, "/api/spaces/acme/snapshot", who["anna"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["snapshot"]["space"] == "acme" and body["snapshot"]["shared_only"] is True
    assert body["index_version"] == 1 and body["text"].startswith("Сводка пространства acme")
    assert {"since", "until", "built", "in_work", "decisions", "waiting", "appeared"} <= set(body["snapshot"])
    refused = {}
    for token, slug in (("anna", "legal"), ("anna", "archive"), ("anna", "no-such-space"), ("olga", "acme"),
                        ("olga", "research")):
        got = _get(client, f"/api/spaces/{slug}/snapshot", who[token])
        assert got.status_code == 404, (token, slug, got.text)
        refused[(token, slug)] = json.dumps(got.json()).replace(slug, "SLUG")
    assert len(set(refused.values())) == 1
    assert _get(client, "/api/spaces/legal/snapshot", who["olga"]).status_code == 200  # Olga's own space
    assert _get(client, "/api/spaces/acme/snapshot", None).status_code == 401


def test_api_tools_and_openapi_give_the_output_schemas_and_a_real_answer_validates(server):
    client, who = server
    listed = {t["name"]: t for t in _get(client, "/api/tools", who["anna"]).json()["tools"]}
    assert list(listed) == list(TOOLS)
    for name, t in listed.items():
        assert t["output_schema"] == TOOLS[name].output_schema() and t["input_schema"] == TOOLS[name].schema()
        assert t["title"] == TOOLS[name].title and t["annotations"]["readOnlyHint"] is True
    doc = client.get("/openapi.json").json()
    assert "/api/spaces/{slug}/snapshot" in doc["paths"]
    for name in listed:
        op = doc["paths"][f"/api/tools/{name}"]["post"]
        assert op["requestBody"]["content"]["application/json"]["schema"]["properties"] == \
            TOOLS[name].schema()["properties"]
        answer_schema = op["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer_schema["properties"]["answer"]["$id"] == f"urn:searchkit:tool:{name}:output"
    assert doc["paths"]["/api/tools/task_search"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "oneOf"]
    r = client.post("/api/tools/history_search", json={"query": "где скрипт выгрузки?"},
                    headers={"Authorization": f"Bearer {who['anna']}"})
    assert r.status_code == 200, r.text
    schema = doc["paths"]["/api/tools/history_search"]["post"]["responses"]["200"]["content"]["application/json"][
        "schema"]
    jsonschema.validate(r.json(), schema)
    assert "text" not in r.json()["answer"] and "signals" not in r.json()["answer"] and r.json()["text"]
