"""An LLM judge or an HTTP reranker an eval needs is asked once, cheaply, before the eval starts
(issue 40 item 7): an endpoint that is down, or refuses the key, is one line naming its flag or
config key, and nothing is indexed. Fake servers and closed ports on 127.0.0.1 only; hashing config."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from searchkit.cli import main
from searchkit.config import SearchConfig
from test_metrics import HASHING, tiny_workspace

KEY = "sk-live-9fQ2xW7mZ4pK9vL3nT6bY1cJ5x"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Fake:
    """A server answering GET with ``get_status`` and POST /rerank as TEI does; requests kept."""

    def __init__(self, get_status: int = 200):
        self.get_status = get_status
        self.requests: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code, payload):
                body = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                fake.requests.append(("GET", self.path))
                self._send(fake.get_status, {"data": [{"id": "m"}], "echo": self.headers.get("Authorization")})

            def do_POST(self):
                n = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(n))
                fake.requests.append(("POST", self.path))
                self._send(200, [{"index": i, "score": 1.0 / (i + 1)} for i in range(len(body["texts"]))])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake():
    f = Fake()
    yield f
    f.close()


def _args(tmp_path, monkeypatch, config=None):
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict({**HASHING, **(config or {})}).save(cfg)
    return ["eval", "--dataset", str(tiny_workspace(tmp_path / "ws")), "--config", str(cfg), "--quiet"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def test_an_unreachable_llm_is_one_line_before_anything_is_indexed(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ragas")
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("JUDGE_KEY", KEY)
    args = _args(tmp_path, monkeypatch) + ["--metrics", "ragas-llm", "--llm-base-url", url, "--llm-model", "m",
                                           "--llm-api-key-env", "JUDGE_KEY"]
    assert main(args) == 2
    line = _one_line(capsys)
    assert line.startswith(f"searchkit eval: --llm-base-url {url}: no answer") and "nothing was evaluated" in line
    assert KEY not in line
    assert not (tmp_path / "c.sqlite").exists()  # before: indexed and ranked first, failed after


def test_an_llm_that_refuses_the_key_is_one_line(tmp_path, monkeypatch, capsys):
    pytest.importorskip("ragas")
    f = Fake(get_status=401)
    try:
        monkeypatch.setenv("JUDGE_KEY", KEY)
        args = _args(tmp_path, monkeypatch) + ["--metrics", "ragas-llm", "--llm-base-url", f.url + "/v1",
                                               "--llm-model", "m", "--llm-api-key-env", "JUDGE_KEY"]
        assert main(args) == 2
        line = _one_line(capsys)
        assert "--llm-base-url" in line and "HTTP 401: it refused the key" in line and KEY not in line
        assert f.requests == [("GET", "/v1/models")]  # one cheap request, nothing else
        assert not (tmp_path / "c.sqlite").exists()
    finally:
        f.close()


def test_a_reachable_llm_passes_the_check(tmp_path, monkeypatch, fake):
    """A server that does not list its models (404) is there; the check sends only the GET."""
    pytest.importorskip("ragas")
    from searchkit.evaluate import ragas_metrics
    from searchkit.evaluate.endpoint_check import check_llm

    for status in (200, 404):
        fake.get_status = status
        check_llm(ragas_metrics.LLMJudge(base_url=fake.url + "/v1", model="m"))
    assert fake.requests == [("GET", "/v1/models")] * 2


RERANK = {"rerank": {"enabled": True, "method": "http", "api": "tei", "model": "m", "languages": []}}


def test_an_unreachable_http_reranker_is_one_line_before_anything_is_indexed(tmp_path, monkeypatch, capsys):
    url = f"http://127.0.0.1:{closed_port()}"
    config = {"rerank": {**RERANK["rerank"], "base_url": url}}
    assert main(_args(tmp_path, monkeypatch, config)) == 2
    line = _one_line(capsys)
    assert line.startswith("searchkit eval: the HTTP reranker did not answer (config rerank.base_url " + url)
    assert not (tmp_path / "c.sqlite").exists()  # before: the eval indexed, then failed query after query


def test_a_reranker_whose_fallback_answers_passes(tmp_path, monkeypatch, capsys, fake):
    config = {"rerank": {**RERANK["rerank"], "base_url": f"http://127.0.0.1:{closed_port()}",
                         "fallbacks": [{"base_url": fake.url}]}}
    args = _args(tmp_path, monkeypatch, config)
    from searchkit.evaluate.endpoint_check import check_reranker

    check_reranker(SearchConfig.load(args[args.index("--config") + 1]))
    assert fake.requests == [("POST", "/rerank")]
