"""What crosses a layer, as ``typing.Protocol`` classes (issue 42 item 1): the corpus the stages
read, a scope, an embedder and the embedding cache, the history index, the task store and engine,
and a tool's context. A module of a higher layer types its hand-offs with these instead of ``Any``,
and mypy checks each side structurally; nothing here is checked at run time (no
``runtime_checkable``) and no class inherits from them.

The bottom layer: imports nothing of searchkit, so any layer may import it. The concrete classes
(``searchkit.searcher.Searcher``, ``searchkit.index.embedding.Embedder``,
``searchkit.index.cache.EmbeddingCache``, ``searchkit.tools.history.HistoryIndex``,
``searchkit.tools.task_engine.TaskEngine``, ``searchkit.tools.base.ToolContext``) live above.
"""
from __future__ import annotations

import sqlite3
from typing import Any, Protocol, Sequence

import numpy as np

TaskStore = sqlite3.Connection
"""The task store a task tool reads: an open SQLite connection (``searchkit.ingest.tasks.store``)."""


class Corpus(Protocol):
    """What a ranking stage reads of the Searcher it was built for: the records, their passages
    (row ``i`` of every retriever), which record each passage belongs to and back."""

    @property
    def records(self) -> Sequence[Any]: ...

    @property
    def passages(self) -> Sequence[Any]: ...

    @property
    def passage_record(self) -> np.ndarray:
        """Passage row -> record row (int64)."""

    def record_passages(self, record: int) -> np.ndarray:
        """The passage rows of record ``record``."""


class SqlScope(Protocol):
    """A scope written as SQL over a store, that a retriever may push down (hashable)."""

    def sql(self) -> tuple[str, list[Any]]:
        """The condition and its parameters."""

    def record_mask(self, records: Sequence[Any]) -> np.ndarray:
        """Which of ``records`` the predicate selects (bool, one per record)."""


Scope = np.ndarray | SqlScope | None
"""A search's scope: a row mask (bool, one per record or passage), a SQL predicate, or None (all)."""


class EmbedderPort(Protocol):
    """An embedder as the dense index and the embedding cache use it."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def fingerprint(self) -> str: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


class EmbeddingCachePort(Protocol):
    """The embedding cache as a retriever's build uses it: the vectors of ``texts``, embedded only
    where the cache lacks them."""

    def embed(self, embedder: Any, texts: Sequence[str], kind: str, batch_size: int = ...,
              show_progress: bool = ..., desc: str | None = ..., dim: int | None = ...) -> np.ndarray: ...


class WorkspacePort(Protocol):
    """The workspace's spaces and who may see them, read now (``access``, a
    ``searchkit.tools.access.WorkspaceAccess``): what the tools that need the workspace read of
    ``ToolContext.index`` (a ``HistoryIndex``, or the task tools' ``WorkspaceMembers``)."""

    @property
    def access(self) -> Any: ...


class HistoryIndexPort(WorkspacePort, Protocol):
    """The history index a history tool reads: its Searcher, the workspace's access (who may see
    what, read now) and one search's scope (``plan``)."""

    @property
    def searcher(self) -> Any: ...

    def plan(self, who: str | None, spaces: Any, current: str) -> Any:
        """The scope of one search by ``who`` over ``spaces`` from the space ``current`` (a
        ``searchkit.tools.history.Plan``)."""

    def default_space(self, caller: str | None) -> str | None:
        """The space a caller's search runs in when the session names none."""

    def find(self, space: str, kind: str, ref: str) -> int | None:
        """The row of the record of ``space`` of ``kind`` whose ref is ``ref``."""

    def pick(self, hits: Sequence[Any], limit: int) -> list[Any]:
        """The cards shown of the ranked hits (``searchkit.records.Hit``)."""


class TaskEnginePort(Protocol):
    """Task search over one space of a store: the matching task ids of one query within one scope,
    best first, and the method that ranked them."""

    @property
    def space(self) -> str: ...

    def rank(self, query: Any, scope: Any, limit: int) -> tuple[list[int], str]: ...


class ToolContextPort(Protocol):
    """A tool call's session and what its tool declared it needs (``searchkit.tools.base.NEEDS``);
    what it did not declare is None."""

    @property
    def caller(self) -> str | None: ...

    @property
    def container(self) -> str: ...

    @property
    def space(self) -> str | None: ...

    @property
    def lang(self) -> str | None: ...

    @property
    def index(self) -> WorkspacePort | None: ...

    @property
    def store(self) -> TaskStore | None: ...

    @property
    def engine(self) -> TaskEnginePort | None: ...
