"""A cross-encoder reranker served over HTTP, behind the rerank protocol (``rerank.method`` ``http``).

The common ``/rerank`` APIs, by ``rerank.api`` (:data:`RERANK_APIS`):

- ``tei`` (text-embeddings-inference): ``POST {base_url}/rerank`` ``{"query", "texts",
  "raw_scores": false, "truncate": true}`` -> ``[{"index", "score"}, ...]``;
- ``infinity``, ``vllm``, ``cohere`` (and any Cohere-compatible server): ``POST {base_url}/rerank``
  ``{"model", "query", "documents", "top_n"}`` -> ``{"results": [{"index", "relevance_score"}, ...]}``
  (vLLM serves it under ``/rerank``, ``/v1/rerank`` and ``/v2/rerank``; Cohere under ``/v2/rerank``:
  ``base_url`` carries the version).

Every answer is checked: each passage scored exactly once (``index`` 0..n-1), every score a finite
number. A provider follows the embedders' rules (SPEC H16) and asks through their client,
``searchkit.http_client``: each attempt has a whole-request deadline (``timeout``), connection
errors, timeouts and HTTP 408/429/5xx are retried with exponential back-off, an answer over a size
cap is refused, the API key is read at each request from the environment variable ``api_key_env``
and never stored, a URL holding a credential is refused, and an error names the endpoint as
``shown_url`` shows it, never quoting the answer's body, scrubbed of the key and anything
token-shaped. :class:`FallbackReranker` tries further providers of the same model in order, a
failing one resting (doubled each failure in a row: ``searchkit.http_client.Rests``) as
:class:`~searchkit.index.embedders.FallbackEmbedder` does; when every provider fails, one
``ResourceError`` names each and why (the search fails with it, as with an embedder: a ranking
never changes silently because a server is down).
"""
from __future__ import annotations

import functools
import http.client
import json
import logging
import math
import re
import time  # noqa: F401 - the tests stub time.sleep through it (the retry back-off)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from searchkit.errors import InputError, ResourceError
from searchkit.credentials import shown_url, url_secrets
from searchkit.http_client import Rests, bearer_headers, message_secrets, one_line, post_json, redacted

if TYPE_CHECKING:
    from searchkit.config import RerankConfig

__all__ = ["RERANK_APIS", "FallbackReranker", "HTTPReranker", "RerankAPI", "http_reranker"]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- API shapes


@dataclass(frozen=True)
class RerankAPI:
    """One ``/rerank`` dialect: the request body for a query and its passages, and where the
    answer keeps its ``(index, score)`` items."""

    name: str
    body: Callable[[str, list[str], str], dict[str, Any]]
    """``(query, passages, model) -> JSON body``."""
    items: Callable[[Any], Any]
    """The answer's list of scored items (None when the answer has none)."""
    score_key: str
    """The key of an item's score."""
    path: str = "/rerank"


def _tei_body(query: str, texts: list[str], model: str) -> dict[str, Any]:  # noqa: ARG001 - TEI serves one model
    return {"query": query, "texts": texts, "raw_scores": False, "truncate": True}


def _documents_body(query: str, texts: list[str], model: str) -> dict[str, Any]:
    return {"model": model, "query": query, "documents": texts, "top_n": len(texts), "return_documents": False}


def _results(doc: object) -> Any:
    return doc.get("results") if isinstance(doc, dict) else None


def _bare_list(doc: object) -> Any:
    return doc if isinstance(doc, list) else None


RERANK_APIS: dict[str, RerankAPI] = {
    "tei": RerankAPI("tei", _tei_body, _bare_list, "score"),
    "infinity": RerankAPI("infinity", _documents_body, _results, "relevance_score"),
    "vllm": RerankAPI("vllm", _documents_body, _results, "relevance_score"),
    "cohere": RerankAPI("cohere", _documents_body, _results, "relevance_score"),
}
"""The ``/rerank`` dialects by ``rerank.api`` name."""


# --------------------------------------------------------------------------- one provider

_MAX_ANSWER_BYTES = 1 << 20
"""The largest answer read (a score list of a few hundred items is a few kilobytes)."""


class HTTPReranker:
    """One ``/rerank`` endpoint (see the module docstring for the dialects).

    Args:
        base_url: the API root (``/rerank`` is asked under it), http(s), no credentials in it.
        model: the reranking model (its identity; sent unless ``api_model`` is given).
        api: the dialect, a name in :data:`RERANK_APIS`.
        api_key_env: the environment variable holding the API key (``Authorization: Bearer``),
            read at each request; None: no key.
        api_model: the name sent in requests instead of ``model``.
        timeout: each attempt's whole budget in seconds (connect, headers and body).
        max_retries: further attempts after a connection error, timeout or HTTP 408/429/5xx.
        backoff: seconds before the first retry, doubled for each next one.
        batch_size: the most passages one request carries.

    Raises:
        ValueError: a bad setting (the URL is shown without its credentials).
    """

    name = "http"

    def __init__(self, base_url: str, model: str, api: str = "tei", api_key_env: str | None = None,
                 api_model: str | None = None, timeout: float = 30.0, max_retries: int = 2, backoff: float = 0.5,
                 batch_size: int = 64) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://[^/\s]+", base_url):
            raise InputError(f"HTTPReranker base_url must be an http(s) URL, got {shown_url(str(base_url))!r}")
        secrets = url_secrets(base_url)
        if secrets:
            raise InputError(f"HTTPReranker base_url holds {secrets[0]}: give the key through api_key_env "
                             "(an environment variable), never in the URL")
        if api not in RERANK_APIS:
            raise InputError(f"HTTPReranker api {api!r} is unknown; valid: {', '.join(sorted(RERANK_APIS))}")
        if not isinstance(model, str) or not model:
            raise InputError("HTTPReranker model must be a non-empty string")
        for what, value in (("api_key_env", api_key_env), ("api_model", api_model)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InputError(f"HTTPReranker {what} must be a non-empty string or None")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise InputError(f"HTTPReranker timeout must be a positive number of seconds, got {timeout!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"HTTPReranker max_retries must be an integer >= 0, got {max_retries!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or backoff < 0:
            raise InputError(f"HTTPReranker backoff must be a number >= 0, got {backoff!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"HTTPReranker batch_size must be a positive integer, got {batch_size!r}")
        self.api = RERANK_APIS[api]
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + self.api.path
        self.model = model
        self.api_model = api_model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.batch_size = batch_size

    def __repr__(self) -> str:
        return f"HTTPReranker(base_url={shown_url(self.base_url)!r}, api={self.api.name!r}, model={self.model!r})"

    def rerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One score per passage, higher is more relevant (the provider's own scale)."""
        texts = [_clean(p) for p in passages]
        if not texts:
            return np.zeros(0)
        q = _clean(query)
        parts = [self._score(q, texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts)

    # -- internals ---------------------------------------------------------
    def _fail(self, what: str) -> ResourceError:
        return ResourceError(f"reranking endpoint {shown_url(self.url)} (model {self.api_model or self.model!r}): "
                           f"{redacted(what, self._secrets())}")

    def _secrets(self) -> list[str]:
        return message_secrets(self.api_key_env)

    def _headers(self) -> dict[str, str]:
        return bearer_headers(self.api_key_env, self._fail)

    def _score(self, query: str, texts: list[str]) -> np.ndarray:
        body = self.api.body(query, texts, self.api_model or self.model)
        raw = post_json(self.url, body, self._headers(), timeout=self.timeout, max_retries=self.max_retries,
                        backoff=self.backoff, cap=_MAX_ANSWER_BYTES, fail=self._fail)
        return self._parse(raw, len(texts))

    def _parse(self, raw: bytes, n: int) -> np.ndarray:
        """The scores of an answer; what is wrong with it is said without quoting it."""
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise self._fail(f"answer is not JSON ({len(raw)} bytes)") from None
        items = self.api.items(doc)
        if not isinstance(items, list):
            where = "a list" if self.api.name == "tei" else "an object with a 'results' list"
            raise self._fail(f"answer is not {where} of scored passages (api {self.api.name})")
        scores: list[float | None] = [None] * n
        for pos, item in enumerate(items):
            if not isinstance(item, dict):
                raise self._fail(f"item {pos} of the answer is not an object")
            idx, score = item.get("index"), item.get(self.api.score_key)
            if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n or scores[idx] is not None:
                raise self._fail(f"item {pos} has index {_shown_scalar(idx)}; expected each of 0..{n - 1} once")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise self._fail(f"item {pos} has no finite '{self.api.score_key}'")
            scores[idx] = float(score)
        missing = [i for i, s in enumerate(scores) if s is None]
        if missing:
            raise self._fail(f"sent {n} passage(s) but {len(missing)} came back unscored (first: {missing[0]})")
        return np.asarray(scores, dtype=np.float64)


def _clean(text: str) -> str:
    """Text safe for JSON: no NUL, no lone surrogate."""
    text = str(text).replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _shown_scalar(value: object) -> str:
    if isinstance(value, bool) or value is None or (isinstance(value, int) and abs(value) < 10 ** 9):
        return repr(value)
    return f"a {type(value).__name__}"


# --------------------------------------------------------------------------- fallbacks


class FallbackReranker:
    """Providers of one reranking model tried in order, the primary first (the embedders' rule, H16).

    A call goes to the first provider that is not resting; when it raises ``ResourceError``
    (or the system refuses the connection) the same passages go to the next. A provider that failed
    rests ``cooldown`` seconds, doubled with each further failure in a row up to ``max_cooldown``
    (while resting it is tried after the others, not skipped). When a later provider answers, one
    warning is logged naming the providers that failed and why; when every provider fails, one
    ``ResourceError`` names each provider and its failure.
    """

    name = "http"

    def __init__(self, members: Sequence[Any], labels: Sequence[str] | None = None, cooldown: float = 60.0,
                 max_cooldown: float = 900.0) -> None:
        self.members = list(members)
        if not self.members:
            raise InputError("FallbackReranker needs at least one provider")
        self.labels = list(labels) if labels is not None else [
            "primary" if i == 0 else f"fallback {i}" for i in range(len(self.members))]
        if len(self.labels) != len(self.members):
            raise InputError(f"FallbackReranker: {len(self.labels)} labels for {len(self.members)} providers")
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self._rests = Rests(len(self.members), self.cooldown, self.max_cooldown)

    def __repr__(self) -> str:
        return f"FallbackReranker({self.members!r})"

    def rerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One score per passage, from the first provider that answers."""
        failures: list[tuple[str, str]] = []
        for i in self._rests.order():
            member = self.members[i]
            try:
                out = np.asarray(member.rerank(query, passages), dtype=np.float64)
            except (ResourceError, OSError, http.client.HTTPException) as e:
                failures.append((self.labels[i], one_line(e, (ResourceError,))))  # a ResourceError: scrubbed with its key
                self._rests.failed(i)
                continue
            self._rests.answered(i)
            if failures:
                log.warning("reranking provider %s answered after %s failed: %s", self.labels[i],
                            " and ".join(label for label, _ in failures), "; ".join(f"{lb}: {why}" for lb, why in failures))
            return out
        if len(self.members) == 1:
            raise ResourceError(failures[0][1])
        raise ResourceError(f"each of the {len(self.members)} reranking providers failed: "
                          + "; ".join(f"{label}: {why}" for label, why in failures))


# --------------------------------------------------------------------------- from the config


def http_reranker(cfg: RerankConfig) -> FallbackReranker:
    """The ``http`` reranker a ``RerankConfig`` describes (its primary and fallbacks), one per
    distinct configuration in a process, so a resting provider stays resting across queries."""
    return _cached(cfg.providers())


@functools.lru_cache(maxsize=8)
def _cached(providers: tuple) -> FallbackReranker:
    members = [HTTPReranker(base_url=p.base_url, model=p.model, api=p.api, api_key_env=p.api_key_env or None,
                            api_model=p.api_model or None, timeout=p.timeout) for p in providers]
    return FallbackReranker(members)
