"""The task search engine (SPEC T): a Searcher over a space's comments, searched inside a SQL scope.

``TaskEngine`` holds one ``Searcher`` over the space's indexed comments (a record per comment, in
comment-id order, its text the normalised, redacted text FTS5 indexes; passages cut as the config
says; embeddings cached) with the retrievers ``tasks.retrievers`` names: ``fts5`` over the store,
answering with the Searcher's passage rows (``CommentRows``), and any retriever with a config section
over the records. ``rank`` is ``Searcher.search`` inside the search's ``TaskScope``, one scope
(``searchkit.retrievers.scopes.SqlScope``): the space, never the current task, the ``kind`` /
``author`` / ``task_id`` filters and, with ``match_mode=all``, every term (T1, T3). FTS5 pushes it
down into its own SQL; ``bm25``, ``dense`` and the rest may only propose the comments it selects (a
candidate mask: their statistics stay those of the space's comments).

The Searcher's stages are task search's (``task_pipeline``): ``retrieve`` (each retriever proposes
``max(limit, FUSED_DEPTH)`` comments; an in-memory one is asked for ``fused_fetch`` passages, FTS5
for one row a comment) -> ``fuse`` (``fusion``'s ``method``, ``weights``, ``norm``,
``fill_missing``; the adaptive-fusion model, fitted on history search, is not asked) -> ``cut``: the
method is ``hybrid``. FTS5 alone keeps its own order (``keep`` in place of ``fuse``, proposing
``limit`` comments: relevance, or newest first on the LIKE path, T4) and its method (``fts`` /
``like``, ``TermQuery.method``). The tool (``searchkit.tools.tasks``) keeps the parameters, the
excerpts and the rendering, and fetches the comments again under the scope's SQL.
"""
from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping

import numpy as np

from searchkit.config import SearchConfig
from searchkit.errors import InputError
from searchkit.index.cache import EmbeddingCache
from searchkit.index.embedding import Embedder
from searchkit.ingest import tasks as store
from searchkit.rank.candidates import Candidates
from searchkit.rank.stages import CutStage, FuseStage, KeepStage, Pipeline, Query, RetrieveStage, build_pipeline
from searchkit.records import Passage, Record
from searchkit.retrievers.fts5 import CommentRows, FTS5Retriever, TaskScope, TermQuery
from searchkit.searcher import Searcher

FUSED_DEPTH = 100
"""Comments each retriever proposes when several are fused."""

FTS5 = FTS5Retriever.name

KEPT_ALONE = 8
"""FTS5-alone Searchers kept (``kept_alone``): by connection, space and config."""


def fused_fetch(depth: int, n_passages: int) -> int:
    """Passages an in-memory retriever is asked for to propose ``depth`` comments (a long comment
    has several)."""
    return min(n_passages, 3 * depth + 10)


def exact_fetch(depth: int, n_passages: int) -> int:  # noqa: ARG001 - one row a comment
    """Rows FTS5 is asked for: as many as comments wanted (it answers a comment by one row)."""
    return depth


@dataclass(frozen=True, eq=False)
class TaskRetrieveStage:
    """Task search's ``retrieve``: each retriever asked proposes ``depth(q.k)`` comments, asked for
    ``fetch[name]`` passages (``searchkit.rank.stages.RetrieveStage``)."""

    corpus: Any
    depth: Callable[[int], int]
    fetch: Mapping[str, Callable[[int, int], int]]
    name: str = "retrieve"

    def __call__(self, c: Candidates, q: Query) -> Candidates:
        return RetrieveStage(self.corpus, dict.fromkeys(q.views, self.depth(q.k)), fetch=self.fetch)(c, q)


def task_pipeline(names: list[str]) -> Callable[[Searcher], Pipeline]:
    """The stages of a task Searcher with the retrievers ``names``: ``retrieve`` -> ``keep`` (FTS5
    alone) or ``fuse`` under ``fusion.weights`` -> ``cut``."""
    fetch = {n: exact_fetch if n == FTS5 else fused_fetch for n in names}

    def make(s: Searcher) -> Pipeline:
        if names == [FTS5]:
            return Pipeline((TaskRetrieveStage(s, lambda k: k, fetch), KeepStage(FTS5), CutStage()))
        base = build_pipeline(s, ("retrieve", "fuse", "cut"))
        fuse = base["fuse"]
        assert isinstance(fuse, FuseStage)  # build_pipeline's fuse stage
        return Pipeline((TaskRetrieveStage(s, lambda k: max(k, FUSED_DEPTH), fetch),
                         fuse.with_weights(s.config.fusion.weights), base["cut"]))
    return make


def comment_searcher(conn: sqlite3.Connection, space: str, config: SearchConfig, names: list[str], *,
                     embedder: Embedder | None = None, cache: EmbeddingCache | None = None) -> Searcher | None:
    """A Searcher over the indexed comments of ``space`` with the retrievers ``names`` (config
    sections; ``fts5`` over its rows when named) and task search's stages, None for a space without
    any. Its records are in comment-id order (fusion breaks ties by comment id); its passages are
    cut in time order, or, for FTS5 alone (which ranks whole comments), one a comment."""
    rows = store.indexed_comments(conn, space)
    if not rows:
        return None
    records = [Record(id=str(cid), kind="comment", space=space, date=ts, ref=f"comment:{cid}", text=text)
               for cid, _task, text, ts in rows]
    if names == [FTS5]:  # nothing to build but the rows FTS5 answers with
        by_id = sorted(records, key=lambda r: int(r.id))
        whole = [Passage(r.id, 0, r.text, 0, len(r.text)) for r in records]
        fts5 = FTS5Retriever(conn).over(CommentRows.of([int(r.id) for r in by_id], [int(r.id) for r in records]))
        return Searcher(config, by_id, whole, retrievers={FTS5: fts5}, pipeline=task_pipeline(names))
    cfg = config.replace(**{f"{n}.enabled": n in names for n in config.retriever_sections()})
    built = Searcher.build(records, cfg, embedder=embedder, cache=cache)
    by_id = sorted(built.records, key=lambda r: int(r.id))
    held = dict(built.retrievers)
    if FTS5 in names:
        rows_of = CommentRows.of([int(r.id) for r in by_id], [p.record_id for p in built.passages])
        held[FTS5] = FTS5Retriever(conn).over(rows_of)
    ordered = {n: held[n] for n in names if n in held}
    return Searcher(cfg, by_id, built.passages, retrievers=ordered, analyzer=built.analyzer,
                    pipeline=task_pipeline(list(ordered)))


class _Kept:
    """The last ``KEPT_ALONE`` FTS5-alone Searchers, by (connection, space, config fingerprint), each
    with the store's version when read (``PRAGMA data_version``: another connection's commit;
    ``total_changes``: this one's). The default engine is made for each call (``searchkit.tools.tasks``;
    the server keeps none for FTS5 alone), and reading a 100k-comment space takes about a second: so a
    store that has not changed is read once. An entry holds its connection, so its id is not reused."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: dict[tuple[int, str, str], tuple[sqlite3.Connection, tuple[int, int], Searcher | None]] = {}

    def get(self, conn: sqlite3.Connection, space: str, config: SearchConfig) -> Searcher | None:
        key = (id(conn), space, config.fingerprint())
        version = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
        with self.lock:
            entry = self.entries.pop(key, None)
        if entry is None or entry[0] is not conn or entry[1] != version:
            entry = (conn, version, comment_searcher(conn, space, config, [FTS5]))
        with self.lock:
            self.entries[key] = entry
            while len(self.entries) > KEPT_ALONE:
                self.entries.pop(next(iter(self.entries)))
        return entry[2]


kept_alone = _Kept()


class TaskEngine:
    """Task search over one space of a store, with the retrievers ``config.tasks.retrievers`` names."""

    def __init__(self, conn: sqlite3.Connection, space: str, config: SearchConfig | None = None, *,
                 embedder: Embedder | None = None, cache: EmbeddingCache | None = None) -> None:
        self.conn = conn
        self.space = space
        self.config = config or SearchConfig()
        names = list(dict.fromkeys(self.config.tasks.retrievers))
        # FTS5 over the store, and every retriever with a config section over the comment records
        valid = [FTS5, *self.config.retriever_sections()]
        unknown = [n for n in names if n not in valid]
        if unknown:
            raise InputError(f"task search has no retriever {unknown[0]!r}; it composes "
                             f"{', '.join(valid[:-1])} and {valid[-1]}", param="tasks.retrievers")
        self.names = names
        if names == [FTS5]:
            self.searcher = kept_alone.get(conn, space, self.config)
        else:
            self.searcher = comment_searcher(conn, space, self.config, names, embedder=embedder, cache=cache)
        """The Searcher over the space's comments (None for a space without any)."""
        self.retrievers: dict[str, Any] = dict(self.searcher.retrievers) if self.searcher is not None else {}
        """The retrievers by name, in ``tasks.retrievers`` order."""

    @cached_property
    def ids(self) -> np.ndarray:
        """The comment id of each record of the Searcher (ascending)."""
        records = self.searcher.records if self.searcher is not None else ()
        return np.fromiter((int(r.id) for r in records), dtype=np.int64, count=len(records))

    @property
    def pipeline(self) -> Pipeline | None:
        """The Searcher's stages (None without a Searcher)."""
        return self.searcher.pipeline if self.searcher is not None else None

    def rank(self, query: TermQuery, scope: TaskScope, limit: int) -> tuple[list[int], str]:
        """Comment ids, best first, at most ``limit``, and the method: ``fts`` / ``like`` (FTS5
        alone) or ``hybrid`` (fused). ``query.text`` is searched (its terms are ``query_terms`` of
        it); ``query.mode`` ``all`` puts its terms in the scope (``TaskScope.every``)."""
        if scope.space != self.space:
            raise InputError(f"this engine searches space {self.space!r}, not {scope.space!r}", param="scope")
        method = query.method if self.names == [FTS5] else "hybrid"
        if self.searcher is None:  # no indexed comment in the space
            return [], method
        within = scope.on(self.conn, query.terms if query.mode == "all" else ())
        result = self.searcher.search(query.text, limit, scope=within)
        return [int(h.record.id) for h in result.hits], method
