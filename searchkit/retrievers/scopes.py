"""The scope of a search, one concept in two forms (issue 42 item 2): a row mask, or a SQL predicate.

``Searcher.search(..., scope=)`` takes either:

- a boolean mask over the Searcher's records (history search, H14/H15): every retriever searches a
  view of itself limited to it (``Scopable.scoped``: BM25's statistics over the scope alone), or
- a ``SqlScope``, a predicate over the store the records come from (task search, T1: the space,
  never the current task, the filters): a retriever that can put it inside its own query
  (``PushesDown``: FTS5) gets it there; the others rank the Searcher's passages as they are and may
  only propose the records the predicate selects (``SqlScope.record_mask``, a candidate mask: their
  statistics stay those of the whole corpus). Where it selects none, they are not asked.

``pushed_down`` turns a ``SqlScope`` into the retrievers a search asks and that candidate mask.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from searchkit.records import Record


@runtime_checkable
class SqlScope(Protocol):
    """A scope written as SQL over a store (``searchkit.retrievers.fts5.TaskScope``): hashable."""

    def sql(self) -> tuple[str, list[Any]]:
        """The condition and its parameters, for a retriever that pushes it down."""

    def record_mask(self, records: Sequence[Record]) -> np.ndarray:
        """Which of ``records`` the predicate selects (bool, one per record)."""


@runtime_checkable
class PushesDown(Protocol):
    """A retriever that puts a ``SqlScope`` inside its own query (nothing outside it comes back)."""

    def push_down(self, scope: SqlScope) -> Any:
        """This retriever inside ``scope``."""


def pushed_down(
    retrievers: Mapping[str, Any], scope: SqlScope, mask_of: Callable[[SqlScope], np.ndarray],
) -> tuple[dict[str, Any], np.ndarray | None]:
    """The retrievers a search inside ``scope`` asks (by name, in order) and the records the others
    may propose (``mask_of(scope)``, read only where some retriever does not push the scope down;
    None: no such mask, those retrievers being absent or left out as the scope selects no record)."""
    if all(isinstance(r, PushesDown) for r in retrievers.values()):
        return {name: r.push_down(scope) for name, r in retrievers.items()}, None
    allowed = mask_of(scope)
    some = bool(allowed.any())
    views = {name: r.push_down(scope) if isinstance(r, PushesDown) else r
             for name, r in retrievers.items() if some or isinstance(r, PushesDown)}
    return views, allowed if some else None


class ScopeMasks:
    """``SqlScope`` -> the records of one Searcher it selects (read-only), kept for the last ``size``
    scopes: a store that changes is searched by a new Searcher (the server builds one per refresh),
    so a session's repeated scope costs one query."""

    def __init__(self, records: Sequence[Record], size: int = 32) -> None:
        self.records = records
        self.size = size
        self._kept: dict[SqlScope, np.ndarray] = {}

    def __call__(self, scope: SqlScope) -> np.ndarray:
        mask = self._kept.pop(scope, None)
        if mask is None:
            mask = np.asarray(scope.record_mask(self.records), dtype=bool)
            mask.flags.writeable = False
        self._kept[scope] = mask
        while len(self._kept) > self.size:
            self._kept.pop(next(iter(self._kept)))
        return mask
