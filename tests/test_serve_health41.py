"""`searchkit serve`'s health, errors and logs, round 2 (issue 41 items 1 and 4): /health/ready
(503 with reason codes, no path) beside /health's liveness; a bad tokens file refused before the
index is built; 401s logged with the token's name, never the token (no name for an unknown one);
no error a remote caller can get shows a server path or an operator's command; stderr lines
(the MCP SDK's, uvicorn's, searchkit's own) are JSON; a `stop` line; an index built earlier is
answered from only once brought up to date. Servers listen on 127.0.0.1 on a port the OS picks;
every wait is bounded; each server is stopped by its test. Hashing embedder."""
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.serve import startup
from searchkit.serve.auth import Tokens, add_token
from searchkit.serve.calllog import CallLog
from searchkit.serve.service import Service
from searchkit.serve.session import Session
from searchkit.serve.state import Holder, Served
from searchkit.tools.history import HistoryIndex

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CONFIG = ROOT / "tests" / "data" / "hashing.json"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
START_S = 120
WAIT_S = 90


# --------------------------------------------------------------------------------- in process


@pytest.mark.parametrize("problem", ["others_may_read", "missing", "not_json"])
def test_a_bad_tokens_file_is_refused_before_anything_loads(tmp_path, capsys, problem):
    pytest.importorskip("mcp", reason="the 'serve' extra")
    tokens = tmp_path / "tokens.json"
    if problem == "others_may_read":
        add_token(tokens, Session("u-anna"))
        os.chmod(tokens, 0o644)
    elif problem == "not_json":
        tokens.write_text("{", encoding="utf-8")
        os.chmod(tokens, 0o600)
    # the config does not exist: an error about the tokens file means it was checked first
    rc = main(["serve", "--config", str(tmp_path / "no-config.json"), "--workspace", str(tmp_path / "no-ws"),
               "--transport", "http", "--port", "0", "--tokens", str(tokens)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("searchkit: --tokens ") and "\n" not in err and "no-config" not in err


def test_a_token_is_named_in_a_refusal_only_when_the_file_names_it(tmp_path):
    path = tmp_path / "tokens.json"
    anna = add_token(path, Session("u-anna"), "anna's laptop")
    tokens = Tokens(path)
    assert tokens.lookup(anna) == (Session("u-anna"), "anna's laptop", "ok")
    assert tokens.lookup(None) == (None, None, "no_token")
    assert tokens.lookup("x" + anna) == (None, None, "unknown_token")
    os.chmod(path, 0o644)  # unusable: every token refused; a listed one still named, an unknown one not
    assert tokens.lookup(anna) == (None, "anna's laptop", "tokens_unusable")
    assert tokens.lookup("x" + anna) == (None, None, "tokens_unusable")
    assert tokens.check() is not None
    os.chmod(path, 0o600)
    assert tokens.check() is None and tokens.session(anna) == Session("u-anna")


def test_an_unavailable_call_shows_the_caller_no_path_and_no_command(tmp_path, caplog):
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    idx = HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))
    service = Service(Holder(Served(idx, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog())
    ws.rename(tmp_path / "moved")  # who may see what cannot be read now
    anna = Session("u-anna", space="acme")
    with caplog.at_level(logging.WARNING, logger="searchkit.serve.service"):
        outs = [service.call("history_search", {"query": "отчёт"}, anna, "test"),
                service.call("chat_read", {"ref": "chat:ses_4f2a"}, anna, "test"),
                service.call("app_row", {"ref": "app:tasks#55"}, anna, "test")]
    for out in outs:
        assert out.status == "unavailable", out
        shown = json.dumps(out.to_dict(), ensure_ascii=False) + out.text
        assert str(tmp_path) not in shown and "searchkit " not in shown and "`" not in shown and "/" not in shown
    assert str(tmp_path) in caplog.text  # the operator's log has the detail


# ------------------------------------------------------------------------------- a real server


class Server:
    def __init__(self, args, env, log, err):
        self.log, self.err = log, err
        self.proc = subprocess.Popen([sys.executable, "-m", "searchkit.cli", "serve", "--transport", "http", "--port", "0",
                                      "--log-file", str(log), *args], env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(err, "wb"))
        self.url = self._wait_url()

    def lines(self):
        return [json.loads(x) for x in self.log.read_text(encoding="utf-8").splitlines()] if self.log.exists() else []

    def _wait_url(self):
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.err.read_text(errors="replace")[-2000:]
            for event in self.lines():
                if event["event"] == "listening":
                    return event["url"]
            time.sleep(0.2)
        raise AssertionError("the server did not start in time")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait(5)


def _until(pred, limit=WAIT_S):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    return pred()


def test_a_served_index_is_fresh_ready_or_not_with_reasons_and_logs_json(tmp_path):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("mcp", reason="the 'serve' extra")
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    env = {**os.environ, "SEARCHKIT_CACHE": str(tmp_path / "cache.sqlite"), "PYTHONUNBUFFERED": "1"}
    index = tmp_path / "index"
    assert main(["index", "--workspace", str(ws), "--out", str(index), "--config", str(CONFIG), "--quiet"]) == 0
    saved = startup.saved_at(index)
    (ws / "acme" / ".space" / "chats" / "ses_4f2a.json").unlink()  # deleted after the index was built
    tokens = tmp_path / "tokens.json"
    anna = add_token(tokens, Session("u-anna", space="acme"), "anna-laptop")
    server = Server(["--config", str(CONFIG), "--index", str(index), "--tokens", str(tokens), "--refresh-every", "2s"],
                    env, tmp_path / "calls.log", tmp_path / "stderr.log")
    auth = {"Authorization": f"Bearer {anna}"}
    try:
        with httpx.Client(base_url=server.url, timeout=60) as h:
            # item 1: the first call is answered from the workspace as it is now
            gone = h.post("/api/tools/chat_read", json={"ref": "chat:ses_4f2a"}, headers=auth)
            assert gone.status_code == 422 and gone.json()["error"]["param"] == "ref"
            health = h.get("/health").json()
            assert health["index_built_at"] >= saved and health["index_loaded_at"] and health["fresh_as_of"]
            assert health["fresh_bound_s"] == 2 and health["fresh_age_s"] is not None
            assert h.get("/health/ready").json() == {"status": "ready", "reasons": []}
            # 401s: logged with the name a usable file gives the token, never the token
            assert h.post("/api/tools/history_search", json={"query": "x"},
                          headers={"Authorization": "Bearer not-a-token"}).status_code == 401
            os.chmod(tokens, 0o644)
            assert h.post("/api/tools/history_search", json={"query": "x"}, headers=auth).status_code == 401
            ready = h.get("/health/ready")
            assert ready.status_code == 503 and ready.json()["reasons"] == ["tokens_unusable"]
            os.chmod(tokens, 0o600)
            assert _until(lambda: h.get("/health/ready").status_code == 200)
            # the SDK's own warning (a Host it refuses) reaches stderr as JSON
            assert h.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={**auth, "Host": "evil.example.net", "Accept": "application/json, text/event-stream",
                                   "Content-Type": "application/json"}).status_code == 421
            # the workspace gone: not ready (unreadable, then stale), and nothing shows a path
            ws.rename(tmp_path / "moved")
            ready = _until(lambda: (r := h.get("/health/ready")).status_code == 503
                           and "index_stale" in r.json()["reasons"] and r)
            assert ready.json()["reasons"] == ["workspace_unreadable", "index_stale"]
            assert _until(lambda: h.get("/health").json()["refresh"]["last_error"] == "refresh_failed")
            call = h.post("/api/tools/history_search", json={"query": "отчёт"}, headers=auth)
            assert call.status_code == 503 and call.json()["error"]["status"] == "unavailable"
            for shown in (call.text, h.get("/health").text, ready.text):
                assert str(tmp_path) not in shown and "searchkit index" not in shown
    finally:
        server.stop()
    lines = server.lines()
    refused = [x for x in lines if x["event"] == "unauthorized"]
    assert [(x["reason"], x.get("token_name")) for x in refused] == [("unknown_token", None),
                                                                      ("tokens_unusable", "anna-laptop")]
    assert anna not in server.log.read_text(encoding="utf-8") and "not-a-token" not in server.log.read_text(encoding="utf-8")
    assert lines[-1]["event"] == "stop" and lines[-1]["reason"] == "SIGTERM" and lines[-1]["uptime_s"] > 0
    index_line = next(x for x in lines if x["event"] == "index")
    assert index_line["outcome"] == "updated"
    err = [x for x in server.err.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert err, "no stderr line at all: the Host warning should be one"
    parsed = [json.loads(x) for x in err]  # every line is JSON
    assert all(x["event"] == "log" and x["level"] and x["logger"] for x in parsed)
    assert any(x["logger"].startswith("mcp") and "Host" in x["message"] for x in parsed)
    assert anna not in server.err.read_text(encoding="utf-8")
