"""The tune/report split of a dataset's queries and the weak-match model that scored a query.

Low in the harness on purpose: ``run``, ``compare``, ``tune`` and ``adaptive`` all read these,
and none of them may import another in a circle (issue 29 item 4). ``searchkit.evaluate.tune``
re-exports every name.
"""
from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

__all__ = ["SALT", "half_of", "query_shape", "run_shape"]

SALT = "searchkit-tune-v1"
"""Salt of the tune/report split: changing it changes every half, and every figure reported on one."""


def half_of(query_id: str, salt: str = SALT) -> str:
    """``tune`` or ``report``: a stable 50/50 split by a salted sha256 of the query id."""
    h = hashlib.sha256(f"{salt}:{query_id}".encode("utf-8")).digest()
    return "tune" if h[0] % 2 == 0 else "report"


def query_shape(signals: Mapping[str, float], default: str = "documents") -> str:
    """The weak-match model that scored one query: the ``conversation_model`` signal the Searcher
    records (1: the conversation model, 0: the documents model); ``default`` for a run written
    before the model was chosen per query (its run-level ``shape``)."""
    flag = signals.get("conversation_model")
    if flag is None:
        return default
    return "conversation" if float(flag) >= 0.5 else "documents"


def run_shape(shapes: Iterable[str]) -> str:
    """One label for a run's queries: ``documents`` or ``conversation`` when one model scored them
    all, ``mixed`` when both did (``documents`` for no query)."""
    used = set(shapes)
    return "mixed" if len(used) > 1 else (used.pop() if used else "documents")
