"""The embedder protocol and the checks every embedder shares (SPEC H16; part of
``searchkit.index.embedders``). An embedder that cannot produce valid vectors raises a
``searchkit.errors.ResourceError`` with reason ``embedding`` (the command line says "embedding failed").
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from searchkit.errors import InputError


@runtime_checkable
class Embedder(Protocol):
    """What the dense index and the embedding cache need from an embedder.

    ``embed_queries`` / ``embed_passages`` take a sequence of strings (not a bare ``str``) and
    return a float32 array of shape ``(len(texts), dim)`` with L2-normalised rows.
    ``fingerprint()`` is a stable hex digest of everything that determines the vectors.
    """

    name: str

    @property
    def dim(self) -> int: ...  # an attribute or a property (OpenAIEmbedder's may ask the endpoint)

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


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return value
