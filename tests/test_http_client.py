"""searchkit.http_client, the one HTTP client of the embedders, the rerankers and the eval's endpoint
checks (issue 42 item 5; SPEC H16): each attempt's whole-request deadline, retries counted and their
exponential back-off (tenacity), the rests of a failing provider, redaction of every message, and
no private name imported across folders by the modules that use it. Fake servers on 127.0.0.1 only."""
from __future__ import annotations

import ast
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from searchkit import http_client as hc
from searchkit.errors import ResourceError
from searchkit.evaluate.endpoint_check import check_llm

KEY = "sk-live-7hQ2xW9mZ4pK1vL3nT6bY8cJ5q"
ROOT = Path(__file__).resolve().parents[1] / "searchkit"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


class Fake:
    """Answers each request with the next of ``statuses`` (the last one repeated); bodies echo the
    ``Authorization`` header, as a careless server's error page might. Requests are counted."""

    def __init__(self, statuses=(200,)):
        self.statuses = list(statuses)
        self.seen: list[tuple[str, str | None]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                fake.seen.append((self.command, self.headers.get("Authorization")))
                status = fake.statuses[min(len(fake.seen), len(fake.statuses)) - 1]
                body = json.dumps({"ok": status == 200, "echo": self.headers.get("Authorization")}).encode()
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", fake.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.location = ""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Trickle:
    """A raw endpoint sending its status line, then one header byte every 50 ms for ``for_s``
    seconds (each socket read is quick: only a whole-request deadline cuts it)."""

    def __init__(self, for_s: float = 6.0, silent: bool = False):
        self.for_s, self.silent = for_s, silent
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        with conn:
            try:
                conn.recv(65536)
                if self.silent:  # no answer at all
                    self.stop.wait(self.for_s)
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
                end = time.monotonic() + self.for_s
                while time.monotonic() < end and not self.stop.is_set():
                    conn.sendall(b"a")
                    self.stop.wait(0.05)
            except OSError:  # the client hung up: what a deadline does
                pass

    def close(self):
        self.stop.set()
        self.sock.close()


def _fail(what: str) -> Exception:
    return RuntimeError(f"endpoint: {hc.redacted(what, hc.message_secrets('HC_TEST_KEY'))}")


def _post(url: str, **kw):
    args = {"timeout": 5.0, "max_retries": 2, "backoff": 0.0, "cap": 1 << 16, "fail": _fail, **kw}
    return hc.post_json(url + "/x", {"q": "a"}, {"Content-Type": "application/json"}, **args)


# --------------------------------------------------------------------------- the deadline


def test_the_whole_request_deadline_cuts_a_trickling_endpoint():
    t = Trickle()
    try:
        start = time.monotonic()
        with pytest.raises(ResourceError) as err:
            hc.fetch("GET", t.url, headers={}, timeout=0.5, cap=1 << 16)
        assert err.value.late and str(err.value) == "no complete answer within the 0.5s deadline"
        assert time.monotonic() - start < 2.0
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=r"^endpoint: no complete answer within the 0.5s deadline "
                                                r"\(after 2 attempts\)$"):
            _post(t.url, timeout=0.5, max_retries=1)
        assert time.monotonic() - start < 3.0  # two attempts, each with its own 0.5 s budget
    finally:
        t.close()


def test_a_socket_timeout_at_the_deadline_is_the_deadline_even_when_the_timer_is_late(monkeypatch):
    """On a busy machine the socket's own timeout (the same seconds) can fire before the timer
    thread: that is the deadline passing, said as such, not a connection failure."""

    class LateTimer(hc.Deadline):
        def __init__(self, seconds):
            super().__init__(seconds + 30)

    monkeypatch.setattr(hc, "Deadline", LateTimer)
    t = Trickle(silent=True)
    try:
        with pytest.raises(ResourceError) as err:
            hc.fetch("GET", t.url, headers={}, timeout=0.5, cap=10)
        assert err.value.late and str(err.value) == "no complete answer within the 0.5s deadline"
    finally:
        t.close()


def test_a_closed_port_is_a_connection_failure_not_a_late_answer():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ResourceError) as err:
        hc.fetch("GET", f"http://127.0.0.1:{port}", headers={}, timeout=5, cap=10)
    assert not err.value.late and str(err.value).startswith("connection failed (ConnectionRefusedError")


def test_an_answer_over_the_cap_is_refused_at_once_not_retried():
    f = Fake([200])
    try:
        with pytest.raises(RuntimeError, match=r"over the 8-byte cap$"):
            _post(f.url, cap=8)
        assert len(f.seen) == 1
    finally:
        f.close()


# --------------------------------------------------------------------------- retries and back-off


def test_retries_are_counted_and_only_for_retryable_failures():
    f = Fake([503, 502, 200])
    try:
        assert json.loads(_post(f.url, max_retries=2))["ok"] is True
        assert len(f.seen) == 3  # two retries, then the answer
        f.seen.clear()
        with pytest.raises(RuntimeError, match=r"HTTP 502 Bad Gateway \(after 2 attempts\)$"):  # the last failure
            _post(f.url, max_retries=1)
        assert len(f.seen) == 2
        f.statuses, f.seen[:] = [400], []
        with pytest.raises(RuntimeError) as err:
            _post(f.url, max_retries=3)
        assert str(err.value) == "endpoint: HTTP 400 Bad Request" and len(f.seen) == 1  # not retried
        f.statuses, f.seen[:] = [204], []
        with pytest.raises(RuntimeError, match=r"HTTP 204 \(0 bytes\)$"):  # a 2xx other than 200 is no answer
            _post(f.url)
    finally:
        f.close()


def test_the_back_off_doubles_from_backoff_seconds(monkeypatch):
    f = Fake([500])
    try:
        naps: list[float] = []
        with pytest.raises(RuntimeError, match=r"after 4 attempts"):
            _post(f.url, max_retries=3, backoff=0.25, sleep=naps.append)
        assert naps == [0.25, 0.5, 1.0] and len(f.seen) == 4
        stubbed: list[float] = []  # time.sleep, stubbed as the embedders' and rerankers' tests stub it
        monkeypatch.setattr(time, "sleep", stubbed.append)
        f.seen.clear()
        with pytest.raises(RuntimeError, match=r"after 3 attempts"):
            _post(f.url, max_retries=2, backoff=0.5)
        assert stubbed == [0.5, 1.0]
    finally:
        f.close()


def test_retrying_gives_up_with_the_last_failure_and_passes_other_errors_through():
    calls: list[int] = []

    def flaky():
        calls.append(1)
        raise ResourceError(f"try {len(calls)}", retry=True)

    with pytest.raises(ResourceError, match="try 3"):
        hc.retrying(2, 0.0, sleep=lambda s: None)(flaky)
    calls.clear()

    def broken():
        calls.append(1)
        raise ValueError("no")

    with pytest.raises(ValueError):
        hc.retrying(5, 0.0, sleep=lambda s: None)(broken)
    assert len(calls) == 1
    calls.clear()

    def refused():  # a ResourceError that is not ``retry`` (an answer over the cap): raised at once
        calls.append(1)
        raise ResourceError("over the cap")

    with pytest.raises(ResourceError, match="over the cap"):
        hc.retrying(5, 0.0, sleep=lambda s: None)(refused)
    assert len(calls) == 1


# --------------------------------------------------------------------------- redaction


def test_no_message_holds_the_key_or_the_urls_secrets(monkeypatch):
    monkeypatch.setenv("HC_TEST_KEY", KEY)
    f = Fake([401])
    try:
        headers = hc.bearer_headers("HC_TEST_KEY", _fail)
        assert headers["Authorization"] == "Bearer " + KEY
        fail = lambda what: RuntimeError(hc.redacted(what, hc.message_secrets("HC_TEST_KEY")))  # noqa: E731
        with pytest.raises(RuntimeError) as err:  # the body echoes the key; the message quotes an excerpt of it
            hc.post_json(f.url, {}, headers, timeout=5, max_retries=0, backoff=0, cap=1 << 16, fail=fail,
                         quote_errors=True)
        assert str(err.value).startswith("HTTP 401 Unauthorized: ") and KEY not in str(err.value)
        assert KEY[8:20] not in str(err.value)  # no piece of it either
        assert f.seen == [("POST", "Bearer " + KEY)]
    finally:
        f.close()
    secrets = hc.message_secrets("HC_TEST_KEY", "https://user:Pw0rd_secret9@host/v1?sig=Q1w2e3r4t5y6")
    text = hc.redacted("failed at https://user:Pw0rd_secret9@host/v1?sig=Q1w2e3r4t5y6 with " + KEY, secrets)
    assert not any(s in text for s in ("Pw0rd_secret9", "Q1w2e3r4t5y6", KEY)), text
    monkeypatch.delenv("HC_TEST_KEY")
    with pytest.raises(RuntimeError, match="environment variable HC_TEST_KEY .the API key. is not set"):
        hc.bearer_headers("HC_TEST_KEY", _fail)
    assert hc.one_line(OSError(f"reset by {KEY}\n at peer")) == "OSError: reset by [redacted] at peer"
    assert hc.one_line(RuntimeError(f"kept {KEY}"), (RuntimeError,)) == f"kept {KEY}"  # already redacted by its owner
    assert hc.attempts_text(1) == "(after 1 attempt)" and hc.attempts_text(3) == "(after 3 attempts)"


# --------------------------------------------------------------------------- rests


def test_a_failing_provider_rests_doubling_up_to_the_cap():
    r = hc.Rests(3, cooldown=10, max_cooldown=25)
    assert r.order() == [0, 1, 2]
    assert [r.failed(0) for _ in range(3)] == [10, 20, 25]
    r.failed(1)
    assert r.order() == [2, 1, 0]  # the resting ones last, soonest awake first
    assert r.answered(0) is True and r.failures_in_a_row[0] == 0 and r.resting_until[0] == 0.0
    assert r.answered(2) is False
    assert r.order() == [0, 2, 1]


# --------------------------------------------------------------------------- the LLM endpoint check


class _Judge:
    def __init__(self, base_url: str, key: str | None = KEY, timeout: float = 60.0):
        self.base_url, self.shown_url, self.timeout, self._key = base_url, base_url, timeout, key

    def api_key(self):
        return self._key


def test_the_llm_check_never_follows_a_redirect_with_the_key():
    """urlopen followed a 302 with the Authorization header to whatever host Location named; through
    the client a redirect is an answer (the server is there) and the other host sees nothing."""
    catcher, redirect = Fake([200]), Fake([302])
    redirect.location = catcher.url.replace("127.0.0.1", "localhost") + "/v1/models"
    try:
        check_llm(_Judge(redirect.url + "/v1"))
        assert redirect.seen == [("GET", "Bearer " + KEY)] and catcher.seen == []
    finally:
        catcher.close()
        redirect.close()


def test_the_llm_check_waits_no_longer_than_its_deadline_for_a_trickling_server():
    """A per-read timeout never fired on a server sending a byte every 50 ms: the check waited as
    long as the server went on. Now the whole request has ``timeout`` seconds."""
    t = Trickle()
    try:
        start = time.monotonic()
        with pytest.raises(ResourceError, match=r"^--llm-base-url .*: no answer within 0.5s \(TimeoutError: timed out\); "
                                               r"nothing was evaluated$") as err:
            check_llm(_Judge(t.url + "/v1"), timeout=0.5)
        assert time.monotonic() - start < 2.0 and KEY not in str(err.value)
    finally:
        t.close()


# --------------------------------------------------------------------------- no private imports across folders

CLIENTS = ["http_client.py", "index/http_embedder.py", "rank/http_rerank.py", "evaluate/endpoint_check.py",
           "evaluate/mlflow_log.py", "evaluate/ragas_metrics.py"]


@pytest.mark.parametrize("rel", CLIENTS)
def test_the_http_clients_import_no_private_name_from_another_folder(rel):
    path = ROOT / rel
    here = path.parent
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("searchkit"):
            continue
        target = ROOT.parent.joinpath(*node.module.split("."))
        folder = target if target.is_dir() else target.parent
        private = [a.name for a in node.names if a.name.startswith("_")]
        if private and folder != here:
            found.append(f"{node.module}: {', '.join(private)}")
    assert not found, f"{rel} imports private names from another folder: {found}"
