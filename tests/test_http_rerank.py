"""A cross-encoder reranker over HTTP (issue 31 item 10): the common ``/rerank`` APIs behind the rerank
protocol, with the embedders' deadlines, fallbacks and back-off (H16), its best score the weak-match
feature ``rerank_top1``, off by default. Fake ``/rerank`` servers on 127.0.0.1 only."""
from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from searchkit.config import ConfigError, SearchConfig
from searchkit.index.cache import EmbeddingCache
from searchkit.rank import http_rerank as hr
from searchkit.errors import ResourceError
from searchkit.rank.http_rerank import FallbackReranker, HTTPReranker
from searchkit.rank.rerank import RERANKERS, Reranker
from searchkit.searcher import Searcher

KEY = "rk-live-8fQ2xW7mZ4pK9vL3nT6bY1cJ5"
MODEL = "BAAI/bge-reranker-v2-m3"


@pytest.fixture(autouse=True)
def _no_proxy_no_backoff(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hr.time, "sleep", lambda s: None)  # the retry back-off
    hr._cached.cache_clear()


def score_of(query: str, doc: str) -> float:
    """The fake model: how many of the query's words the passage holds, plus a length tie-break."""
    words = set(query.lower().split())
    return sum(w in doc.lower() for w in words) + len(doc) / 10_000


class RerankServer:
    """A fake ``/rerank`` of one dialect (``api``): TEI's bare list of ``{index, score}`` or the
    ``{results: [{index, relevance_score}]}`` of Infinity, vLLM and Cohere, best first as servers
    answer. ``mode``: ok / 500 (a body echoing the key) / 401 / garbage / missing (one index left
    out) / dup / nan / slow (``delay`` seconds before answering). Requests and headers are kept."""

    def __init__(self, api: str = "tei") -> None:
        self.api = api
        self.mode = "ok"
        self.delay = 1.5
        self.requests: list[tuple[str, dict]] = []
        self.auth: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                fake.auth.append(self.headers.get("Authorization"))
                if fake.mode == "slow":
                    threading.Event().wait(fake.delay)  # not time.sleep: the tests stub it (the back-off)
                code, payload = fake.answer(body, self.headers.get("Authorization") or "")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up at its deadline
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def answer(self, body: dict, auth: str) -> tuple[int, bytes]:
        if self.mode in ("500", "401"):
            return int(self.mode), json.dumps({"error": f"rejected {auth}", "query": body.get("query")}).encode()
        if self.mode == "garbage":
            return 200, f"<html>login {auth}</html>".encode()
        docs = body["texts"] if self.api == "tei" else body["documents"]
        scored = sorted(((i, score_of(body["query"], d)) for i, d in enumerate(docs)), key=lambda t: -t[1])
        if self.mode == "missing":
            scored = scored[:-1]
        elif self.mode == "dup":
            scored = scored[:-1] + [(scored[0][0], 0.0)]
        elif self.mode == "nan":
            scored = [(i, float("nan")) for i, _ in scored]
        if self.api == "tei":
            return 200, json.dumps([{"index": i, "score": s} for i, s in scored]).encode()
        return 200, json.dumps({"id": "r1", "results": [{"index": i, "relevance_score": s} for i, s in scored]}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers():
    made: list[RerankServer] = []

    def make(api: str = "tei") -> RerankServer:
        made.append(RerankServer(api))
        return made[-1]

    yield make
    for s in made:
        s.close()


PASSAGES = ["Weekly sales by region.", "The export script runs on Mondays.", "Postgres 16 migration in November."]


@pytest.mark.parametrize("api", ["tei", "infinity", "vllm", "cohere"])
def test_each_api_shape_scores_each_passage_in_order(servers, api):
    srv = servers(api)
    r = HTTPReranker(srv.url, MODEL, api=api, api_model="bge-m3" if api == "cohere" else None)
    assert isinstance(r, Reranker)
    got = r.rerank("export script", PASSAGES)
    assert got.tolist() == [score_of("export script", p) for p in PASSAGES]  # by index, not by answer order
    path, body = srv.requests[0]
    assert path == "/v1/rerank"
    if api == "tei":
        assert body == {"query": "export script", "texts": PASSAGES, "raw_scores": False, "truncate": True}
    else:
        assert body == {"model": "bge-m3" if api == "cohere" else MODEL, "query": "export script",
                        "documents": PASSAGES, "top_n": 3, "return_documents": False}
    assert srv.auth == [None]  # no key configured: none sent
    assert r.rerank("q", []).shape == (0,)


def test_batches_and_the_key_from_the_environment(servers, monkeypatch):
    srv = servers("vllm")
    monkeypatch.setenv("RERANK_KEY", KEY)
    r = HTTPReranker(srv.url, MODEL, api="vllm", api_key_env="RERANK_KEY", batch_size=2)
    got = r.rerank("sales", PASSAGES)
    assert got.tolist() == [score_of("sales", p) for p in PASSAGES]
    assert [len(b["documents"]) for _, b in srv.requests] == [2, 1]
    assert srv.auth == [f"Bearer {KEY}"] * 2
    monkeypatch.delenv("RERANK_KEY")
    with pytest.raises(ResourceError, match="environment variable RERANK_KEY"):
        r.rerank("sales", PASSAGES)


@pytest.mark.parametrize("mode, says", [
    ("500", "HTTP 500 Internal Server Error (after 3 attempts)"),
    ("401", "HTTP 401 Unauthorized"),
    ("garbage", "answer is not JSON"),
    ("missing", "came back unscored"),
    ("dup", "expected each of 0..2 once"),
    ("nan", "no finite 'score'"),
])
def test_errors_never_carry_the_key_or_the_body(servers, monkeypatch, mode, says):
    srv = servers("tei")
    srv.mode = mode
    monkeypatch.setenv("RERANK_KEY", KEY)
    r = HTTPReranker(srv.url, MODEL, api_key_env="RERANK_KEY")
    with pytest.raises(ResourceError) as e:
        r.rerank("export script", PASSAGES)
    msg = str(e.value)
    assert msg.startswith(f"reranking endpoint {srv.url}/rerank (model '{MODEL}'): ") and says in msg
    assert KEY[4:16] not in msg and "rejected" not in msg and "login" not in msg and "export script" not in msg
    # the retried statuses are tried again (with back-off); the others once
    assert len(srv.requests) == (3 if mode == "500" else 1)


def test_urls_with_credentials_and_bad_settings_are_refused():
    with pytest.raises(ValueError, match=r"user name or password") as e:
        HTTPReranker(f"https://me:{KEY}@rerank.example/v1", MODEL)
    assert KEY not in str(e.value)
    with pytest.raises(ValueError, match=r"api 'bing' is unknown; valid: cohere, infinity, tei, vllm"):
        HTTPReranker("http://127.0.0.1:9/v1", MODEL, api="bing")
    with pytest.raises(ValueError, match="timeout must be a positive"):
        HTTPReranker("http://127.0.0.1:9/v1", MODEL, timeout=0)


def test_a_slow_primary_times_out_and_the_fallback_answers_then_the_primary_rests(servers, caplog):
    slow, good = servers("tei"), servers("infinity")
    slow.mode = "slow"
    primary = HTTPReranker(slow.url, MODEL, timeout=0.3, max_retries=0)
    fallback = HTTPReranker(good.url, MODEL, api="infinity")
    fb = FallbackReranker([primary, fallback])
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="searchkit.rank.http_rerank"):
        got = fb.rerank("export script", PASSAGES)
    assert time.monotonic() - started < 1.2  # the whole-request deadline, not the server's delay
    assert got.tolist() == [score_of("export script", p) for p in PASSAGES]
    assert "reranking provider fallback 1 answered after primary failed" in caplog.text
    assert "no complete answer within the 0.3s deadline" in caplog.text
    # the primary rests: the next query goes straight to the fallback
    n = len(slow.requests)
    fb.rerank("sales", PASSAGES)
    assert len(slow.requests) == n and len(good.requests) == 2


def test_every_provider_failing_is_one_error_naming_each(servers, monkeypatch):
    a, b = servers("tei"), servers("cohere")
    a.mode, b.mode = "500", "401"
    monkeypatch.setenv("RERANK_KEY", KEY)
    fb = FallbackReranker([HTTPReranker(a.url, MODEL, max_retries=0),
                           HTTPReranker(b.url, MODEL, api="cohere", api_key_env="RERANK_KEY")])
    with pytest.raises(ResourceError) as e:
        fb.rerank("q", PASSAGES)
    msg = str(e.value)
    assert msg.startswith("each of the 2 reranking providers failed: primary: reranking endpoint ")
    assert "HTTP 500" in msg and "fallback 1: reranking endpoint" in msg and "HTTP 401" in msg and KEY[4:16] not in msg
    unreachable = servers("tei")
    unreachable.close()
    with pytest.raises(ResourceError, match=r"connection failed .*\(after 1 attempt\)"):
        HTTPReranker(unreachable.url, MODEL, max_retries=0).rerank("q", PASSAGES)


# --------------------------------------------------------------------------- config


def _http_config(url: str, **rerank) -> SearchConfig:
    return SearchConfig.from_dict({
        "dense": {"embedder": "hashing"},
        "rerank": {"method": "http", "base_url": url, "model": MODEL, "languages": [], "weight": 1.0, "depth": 4, **rerank},
    })


def test_off_by_default_and_the_shipped_config_json_unchanged():
    shipped = SearchConfig()
    assert shipped.rerank.method == "sentence_maxsim" and shipped.rerank.fallbacks == ()
    assert set(shipped.to_dict()["rerank"]) == {"enabled", "method", "depth", "weight", "languages"}
    cfg = _http_config("http://127.0.0.1:9/v1", api="vllm", api_key_env="RERANK_KEY",
                       fallbacks=[{"base_url": "http://127.0.0.1:10/v1", "api": "tei"}])
    again = SearchConfig.from_json(cfg.to_json())
    assert again == cfg and again.fingerprint() == cfg.fingerprint() != shipped.fingerprint()
    p = cfg.rerank.providers()
    assert [(x.base_url, x.api, x.model, x.api_key_env, x.timeout) for x in p] == [
        ("http://127.0.0.1:9/v1", "vllm", MODEL, "RERANK_KEY", 30.0),
        ("http://127.0.0.1:10/v1", "tei", MODEL, "", 30.0)]  # the key is never inherited
    assert "http" in RERANKERS


@pytest.mark.parametrize("rerank, says", [
    ({"method": "http"}, "rerank.base_url must be an http(s) URL for rerank.method http"),
    ({"method": "http", "base_url": "http://127.0.0.1:9"}, "rerank.model must name the reranking model"),
    ({"method": "http", "base_url": "http://127.0.0.1:9", "model": "m", "api": "bing"},
     "rerank.api: 'bing' is not a known rerank API; valid: cohere, infinity, tei, vllm"),
    ({"method": "cross"}, "rerank.method: 'cross' is not a known reranker; valid: http, sentence_maxsim"),
    ({"method": "http", "base_url": f"http://127.0.0.1:9/v1?api_key={KEY}", "model": "m"},
     "rerank.base_url holds a secret in its query string (api_key=…)"),
    ({"method": "http", "base_url": "http://127.0.0.1:9", "model": "m", "fallbacks": [{"base_url": "http://h:1", "model": "x"}]},
     "rerank.fallbacks[0].model is 'x' but rerank.model (the primary) is 'm'"),
    ({"method": "http", "base_url": "http://127.0.0.1:9", "model": "m", "fallbacks": [{"base_url": "http://127.0.0.1:9"}]},
     "rerank.fallbacks[0] is the same provider as the primary"),
    ({"method": "http", "base_url": "http://127.0.0.1:9", "model": "m", "fallbacks": [{}]},
     "rerank.fallbacks[0].base_url must be given"),
    ({"fallbacks": [{"base_url": "http://h:1"}]}, "rerank.fallbacks: fallback providers are for rerank.method http"),
    ({"method": "http", "base_url": "http://127.0.0.1:9", "model": "m", "timeout": 0}, "rerank.timeout must be greater than 0"),
])
def test_config_refuses_what_cannot_work(rerank, says):
    with pytest.raises(ConfigError) as e:
        SearchConfig.from_dict({"rerank": rerank})
    assert says in str(e.value) and KEY not in str(e.value)


def test_a_weak_match_model_may_read_rerank_top1_only_with_the_stage_on():
    on = SearchConfig.from_dict({"weak_match": {"features": ["dense_top1", "rerank_top1"], "coef": [1.0, 2.0],
                                                "conversation": None}})
    assert "rerank_top1" in on.weak_match.features
    with pytest.raises(ConfigError, match="'rerank_top1' is the reranking stage's best score, which rerank.enabled false"):
        SearchConfig.from_dict({"rerank": {"enabled": False}, "weak_match": {"features": ["rerank_top1"], "coef": [1.0],
                                                                            "conversation": None}})


# --------------------------------------------------------------------------- in a search


def test_the_scores_reorder_the_head_and_are_the_no_answer_feature(servers, tiny_records):
    srv = servers("tei")
    cfg = _http_config(srv.url)
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    off = s.with_config(cfg.replace(**{"rerank.enabled": False}))
    q = "export script report"
    before, after = off.search(q, k=6), s.search(q, k=6)
    head = [h.record.id for h in before.hits[:4]]
    _, body = srv.requests[-1]
    assert len(body["texts"]) == 4 and body["query"] == q
    sent = dict(zip(head, body["texts"]))
    by_score = sorted(head, key=lambda rid: -score_of(q, sent[rid]))
    assert [h.record.id for h in after.hits[:4]] == by_score  # weight 1: the reranker's order
    assert [h.record.id for h in after.hits[4:]] == [h.record.id for h in before.hits[4:]]  # the rest keep theirs
    assert by_score != head  # the fake model does move the head
    assert after.signals["rerank_top1"] == pytest.approx(max(score_of(q, t) for t in body["texts"]))
    assert before.signals["rerank_top1"] == 0.0
    # the shipped stage (sentence_maxsim, Japanese only) leaves a Russian query's feature at 0
    shipped = Searcher.build(tiny_records, SearchConfig.from_dict({"dense": {"embedder": "hashing"}}), cache=EmbeddingCache(None))
    assert shipped.search("отчёт выгрузка", k=3).signals["rerank_top1"] == 0.0


def test_a_search_whose_reranker_is_down_fails_with_one_line(servers, tiny_records, tmp_path, monkeypatch, capsys):
    from searchkit.cli import main

    srv = servers("tei")
    srv.mode = "500"
    cfg = _http_config(srv.url)
    s = Searcher.build(tiny_records, cfg, cache=EmbeddingCache(None))
    with pytest.raises(ResourceError, match="HTTP 500"):
        s.search("export script", k=3)
    # on the command line: exit 2 and one line naming the endpoint
    from test_metrics import tiny_workspace

    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "c.sqlite"))
    conf = tmp_path / "cfg.json"
    cfg.save(conf)
    data = tiny_workspace(tmp_path / "ws")
    assert main(["index", "--dataset", str(data), "--out", str(tmp_path / "idx"), "--config", str(conf), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "--index", str(tmp_path / "idx"), "export script"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"reranking endpoint {srv.url}/rerank" in err[0] and "HTTP 500" in err[0]


def test_one_reranker_per_configuration_so_a_resting_provider_stays_resting(servers):
    srv = servers("tei")
    cfg = _http_config(srv.url)
    assert hr.http_reranker(cfg.rerank) is hr.http_reranker(SearchConfig.from_json(cfg.to_json()).rerank)
    assert hr.http_reranker(cfg.rerank) is not hr.http_reranker(cfg.replace(**{"rerank.timeout": 5.0}).rerank)
    assert np.allclose(hr.http_reranker(cfg.rerank).rerank("sales", PASSAGES), [score_of("sales", p) for p in PASSAGES])
