"""`searchkit serve`'s HTTP transport, round 2 (issue 41 item 5), in process (the ASGI app driven by
httpx, its lifespan run; no socket): a bounded queue of calls (a call beyond it is refused at once:
the JSON API's 503 with Retry-After, MCP's tool error `busy`, one log line), the Host and Origin
values /mcp answers (configurable for a TLS proxy in front; the machine's own name when bound
beyond loopback), and GET /mcp 405 in stateless mode (was an SSE stream held open). Hashing
embedder; every wait bounded."""
import json
import logging
import shutil
import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the 'serve' extra (pip install -e '.[serve]')")

import anyio  # noqa: E402

from asgi_serving import run_bounded, serving  # noqa: E402
from searchkit.cli import main  # noqa: E402
from searchkit.config import SearchConfig  # noqa: E402
from searchkit.index.cache import EmbeddingCache  # noqa: E402
from searchkit.serve.admission import Admission  # noqa: E402
from searchkit.serve.auth import Tokens, add_token  # noqa: E402
from searchkit.serve.calllog import LOGGER, CallLog  # noqa: E402
from searchkit.serve.http_app import build_app, security  # noqa: E402
from searchkit.serve.service import Service  # noqa: E402
from searchkit.serve.session import Session  # noqa: E402
from searchkit.serve.state import Holder, Served  # noqa: E402
from searchkit.tools.history import HistoryIndex  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo-workspace"
CFG = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 64}, "weak_match": {"enabled": False}})
BASE = "http://127.0.0.1:8765"
LIMIT_S = 60
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    ws = tmp_path_factory.mktemp("t41") / "ws"
    shutil.copytree(DEMO, ws)
    return HistoryIndex.build(ws, CFG, cache=EmbeddingCache(None))


@pytest.fixture()
def service(index):
    return Service(Holder(Served(index, 1, "t0")), fingerprint=CFG.fingerprint(), log_=CallLog())


@pytest.fixture()
def token(tmp_path):
    path = tmp_path / "tokens.json"
    return path, add_token(path, Session("u-anna", space="acme"), "anna's laptop")


_run = run_bounded
_serving = serving


def _blocking(service, monkeypatch):
    """Every call of ``service`` waits for the returned event (set it to let them finish)."""
    gate = threading.Event()
    real = service.call

    def call(*args, **kwargs):
        assert gate.wait(LIMIT_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "call", call)
    return gate


async def _until(pred):
    while not pred():
        await anyio.sleep(0.01)


def _mcp_call(query):
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "history_search", "arguments": {"query": query}}}


# ------------------------------------------------------------------------------------ backpressure


def test_a_full_queue_refuses_a_json_api_call_at_once_with_503_and_retry_after(service, token, monkeypatch, caplog):
    path, tok = token
    admission = Admission(workers=1, queue=1)
    app = build_app(service, Tokens(path), host="127.0.0.1", health=dict, admission=admission)
    gate = _blocking(service, monkeypatch)
    auth = {"Authorization": f"Bearer {tok}"}

    async def scenario(client):
        results = {}

        async def post(key):
            results[key] = await client.post("/api/tools/history_search", json={"query": "отчёт"}, headers=auth)

        async with anyio.create_task_group() as tg:
            tg.start_soon(post, "first")
            tg.start_soon(post, "second")
            await _until(lambda: admission.inside == 2)  # one runs, one waits
            await post("third")  # refused at once, while the other two are held
            refused_while_full = admission.inside == 2
            gate.set()
        return results, refused_while_full

    with caplog.at_level(logging.INFO, logger=LOGGER):
        results, while_full = _run(lambda: _serving(app, scenario))
    assert while_full
    assert results["first"].status_code == results["second"].status_code == 200
    third = results["third"]
    assert third.status_code == 503 and third.headers["retry-after"] == "1"
    assert third.json()["error"]["status"] == "busy" and third.json()["error"]["retry_after_s"] == 1
    assert admission.refused == 1 and admission.inside == 0
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER]
    calls = [x for x in lines if x["event"] == "call"]
    assert sorted(x["error"] or "ok" for x in calls) == ["busy", "ok", "ok"]
    assert all(x["tool"] == "history_search" for x in calls)


def test_a_full_queue_refuses_an_mcp_call_with_a_busy_tool_error(service, token, monkeypatch):
    path, tok = token
    admission = Admission(workers=1, queue=0)
    app = build_app(service, Tokens(path), host="127.0.0.1", health=dict, admission=admission)
    gate = _blocking(service, monkeypatch)
    headers = {"Authorization": f"Bearer {tok}", **MCP_HEADERS}

    async def scenario(client):
        results = {}

        async def post(key):
            results[key] = await client.post("/mcp", json=_mcp_call("отчёт"), headers=headers)

        async with anyio.create_task_group() as tg:
            tg.start_soon(post, "first")
            await _until(lambda: admission.inside == 1)
            await post("second")
            gate.set()
        return results

    results = _run(lambda: _serving(app, scenario))
    first, second = (results[k].json()["result"] for k in ("first", "second"))
    assert not first.get("isError") and first["structuredContent"]["cards"] is not None
    assert second["isError"] is True and second["structuredContent"]["error"]["status"] == "busy"
    assert "try again" in second["content"][0]["text"]


def test_the_queue_flag_is_checked_before_anything_loads(capsys):
    base = ["serve", "--config", "nowhere.json", "--workspace", "nowhere", "--caller", "u-anna"]
    assert main([*base, "--queue", "-1"]) == 2
    assert "--queue" in capsys.readouterr().err
    assert main([*base, "--allowed-host", "example.com"]) == 2  # stdio: no Host header to check
    assert "--allowed-host: only with --transport http" in capsys.readouterr().err
    http = ["serve", "--config", "nowhere.json", "--workspace", "nowhere", "--transport", "http", "--tokens", "t.json"]
    for flag, value in (("--allowed-host", "https://example.com"), ("--allowed-host", "a b"),
                        ("--allowed-origin", "example.com"), ("--allowed-origin", "ftp://example.com")):
        assert main([*http, flag, value]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"searchkit: {flag}: expected") and "\n" not in err


# ------------------------------------------------------------------------------ hosts and GET /mcp


def _list_statuses(app, tok, cases):
    """The status of a tools/list on /mcp for each (Host, Origin) of ``cases``."""
    async def scenario(client):
        out = []
        for host, origin in cases:
            headers = {"Authorization": f"Bearer {tok}", "Host": host, **MCP_HEADERS}
            if origin:
                headers["Origin"] = origin
            r = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
            out.append(r.status_code)
        return out
    return _run(lambda: _serving(app, scenario))


def test_mcp_answers_the_hosts_and_origins_it_is_told_to(service, token):
    path, tok = token
    loopback = build_app(service, Tokens(path), host="127.0.0.1", health=dict)
    assert _list_statuses(loopback, tok, [("127.0.0.1:8765", None), ("search.example.com", None)]) == [200, 421]
    proxied = build_app(service, Tokens(path), host="127.0.0.1", health=dict,
                        allowed_hosts=["search.example.com"], allowed_origins=["https://app.example.org"])
    assert _list_statuses(proxied, tok, [
        ("search.example.com", None),  # a TLS proxy forwarding its own name
        ("search.example.com:443", None),
        ("search.example.com", "https://search.example.com"),
        ("search.example.com", "https://app.example.org"),
        ("search.example.com", "https://evil.example.net"),
        ("evil.example.net", None),
    ]) == [200, 200, 200, 200, 403, 421]


def test_a_server_bound_beyond_loopback_answers_its_own_name_and_address():
    name = socket.gethostname()
    wildcard = security("0.0.0.0")
    assert name in wildcard.allowed_hosts and f"{name}:*" in wildcard.allowed_hosts
    assert "0.0.0.0:*" not in wildcard.allowed_hosts
    bound = security("10.1.2.3", ["search.example.com:8443"])
    assert {"10.1.2.3", "10.1.2.3:*", "search.example.com:8443"} <= set(bound.allowed_hosts)
    assert "search.example.com" not in bound.allowed_hosts  # a port given: that port only
    assert "https://10.1.2.3:*" in bound.allowed_origins
    assert name not in security("127.0.0.1").allowed_hosts  # loopback: loopback names only


def test_get_mcp_is_405_in_stateless_mode_not_an_open_stream(service, token):
    path, tok = token
    app = build_app(service, Tokens(path), host="127.0.0.1", health=dict)

    async def scenario(client):
        with anyio.fail_after(10):  # an SSE stream would never end
            r = await client.get("/mcp", headers={"Authorization": f"Bearer {tok}", "Accept": "text/event-stream"})
        return r.status_code, r.headers.get("allow", "")

    status, allow = _run(lambda: _serving(app, scenario))
    assert status == 405 and "POST" in allow
