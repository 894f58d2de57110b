"""The task search engine (SPEC T): a Searcher over a space's comments whose scope is SQL.

``TaskEngine`` is a factory. It holds the retrievers ``tasks.retrievers`` names as the retrievers
of one ``Searcher`` over the space's indexed comments (a record per comment, in comment-id order,
its text the normalised, redacted text FTS5 indexes; embeddings cached), and ``rank`` runs them
through the Searcher's own stages (``searchkit.rank.stages``): ``retrieve`` -> ``fuse`` -> ``cut``.

The scope is SQL, written once (``searchkit.retrievers.fts5.TaskScope``: the space, never the
current task, the ``kind`` / ``author`` / ``task_id`` filters, T1). ``fts5`` keeps it inside its
own query (``scoped``); ``bm25``, ``dense`` and any other retriever with a config section read the
comments they may return from the same SQL (``TaskScope.allowed``: with ``match_mode=all``, those
holding every term) as the query's passage mask. Their statistics stay those of the space's comments
(a mask, not ``Searcher.query``'s ``scope``), as they were.

Several retrievers are fused by the ``fuse`` stage under ``fusion`` (``method``, ``weights``,
``norm``, ``fill_missing``; the adaptive-fusion model, fitted on history search, is not asked), each
proposing ``max(limit, FUSED_DEPTH)`` comments: the method is ``hybrid``. FTS5 alone keeps its own
order (``KeepStage`` in place of ``fuse``: relevance, or newest first on the LIKE path, T4) and its
method (``fts`` / ``like``); it reads no corpus, its rows being the comment ids themselves
(``CommentIds``), so the default engine stays one SQL query. The tool (``searchkit.tools.tasks``)
keeps the parameters, the excerpts and the rendering.
"""
from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from searchkit.config import SearchConfig
from searchkit.errors import InputError
from searchkit.ingest import tasks as store
from searchkit.rank.candidates import Candidates
from searchkit.rank.stages import CutStage, KeepStage, Pipeline, Query, RetrieveStage, build_pipeline
from searchkit.records import Record
from searchkit.retrievers.fts5 import CommentRows, FTS5Retriever, TaskScope, TermQuery
from searchkit.searcher import Searcher

FUSED_DEPTH = 100
"""Comments each retriever proposes when several are fused."""

ALLOWED_KEPT = 32
"""Scopes whose allowed comments an engine keeps (``TaskEngine.allowed``)."""

FTS5 = FTS5Retriever.name


def fused_fetch(depth: int, n_passages: int) -> int:
    """Passages an in-memory retriever is asked for to propose ``depth`` comments (a long comment
    has several)."""
    return min(n_passages, 3 * depth + 10)


def exact_fetch(depth: int, n_passages: int) -> int:  # noqa: ARG001 - one row a comment
    """Rows FTS5 is asked for: as many as comments wanted (it answers a comment by one row)."""
    return depth


class _Same:
    """Row -> record where a row is its record (a comment id)."""

    def __getitem__(self, row: int) -> int:
        return row


class CommentIds:
    """The corpus of FTS5 alone: a row is a comment id and its own record, so nothing is read ahead
    (a Searcher over a 100k-comment space takes 0.7 s to build; FTS5 alone is one SQL query)."""

    passages = range(2**63 - 1)
    passage_record = _Same()


def comment_searcher(conn: sqlite3.Connection, space: str, config: SearchConfig, names: list[str], *,
                     embedder: Any = None, cache: Any = None) -> Searcher | None:
    """A Searcher over the indexed comments of ``space`` with the retrievers ``names`` (config
    sections; ``fts5`` over its rows when named), None for a space without any. Its records are in
    comment-id order (fusion breaks ties by comment id); its passages are cut in time order."""
    rows = store.indexed_comments(conn, space)
    if not rows:
        return None
    records = [Record(id=str(cid), kind="comment", space=space, date=ts, ref=f"comment:{cid}", text=text)
               for cid, _task, text, ts in rows]
    cfg = config.replace(**{f"{n}.enabled": n in names for n in config.retriever_sections()})
    built = Searcher.build(records, cfg, embedder=embedder, cache=cache)
    by_id = sorted(built.records, key=lambda r: int(r.id))
    held = dict(built.retrievers)
    if FTS5 in names:
        rows_of = CommentRows.of([int(r.id) for r in by_id], [p.record_id for p in built.passages])
        held[FTS5] = FTS5Retriever(conn).over(rows_of)
    ordered = {n: held[n] for n in names if n in held}
    return Searcher(cfg, by_id, built.passages, retrievers=ordered, analyzer=built.analyzer)


class TaskEngine:
    """Task search over one space of a store, with the retrievers ``config.tasks.retrievers`` names."""

    def __init__(self, conn: sqlite3.Connection, space: str, config: SearchConfig | None = None, *,
                 embedder: Any = None, cache: Any = None) -> None:
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
        self.alone = names == [FTS5]
        """FTS5 alone: its own order and method, no corpus."""
        self.searcher = None if self.alone else comment_searcher(conn, space, self.config, names,
                                                                 embedder=embedder, cache=cache)
        """The Searcher over the space's comments (None for FTS5 alone or a space without any)."""
        if self.alone:
            self.retrievers: dict[str, Any] = {FTS5: FTS5Retriever(conn)}
        else:
            self.retrievers = dict(self.searcher.retrievers) if self.searcher is not None else {}
        """The retrievers by name, in ``tasks.retrievers`` order."""
        self.ids = np.asarray([int(r.id) for r in self.searcher.records] if self.searcher is not None else [],
                              dtype=np.int64)
        """The comment id of each record of the Searcher (ascending)."""
        self.pipeline = self._fused() if self.searcher is not None else None
        """The Searcher's ``retrieve`` -> ``fuse`` -> ``cut`` (None without a Searcher)."""
        self._allowed: dict[tuple, np.ndarray] = {}  # the last ALLOWED_KEPT masks, by scope (and terms with all)

    def allowed(self, scope: TaskScope, query: TermQuery) -> np.ndarray:
        """Which records of the Searcher the in-memory retrievers may return: the comments the scope's
        SQL selects (``TaskScope.allowed``), as a mask over ``ids``. Kept for the engine's life, as
        its corpus is (a store imported into is searched by a new engine: the server makes one per
        refresh), so a session's repeated scope costs one query."""
        key = (scope, query.terms if query.mode == "all" else None)
        mask = self._allowed.pop(key, None)
        if mask is None:
            mask = np.isin(self.ids, scope.allowed(self.conn, query))
            mask.flags.writeable = False
        self._allowed[key] = mask
        while len(self._allowed) > ALLOWED_KEPT:
            self._allowed.pop(next(iter(self._allowed)))
        return mask

    def _fused(self) -> Pipeline:
        """The Searcher's ``retrieve`` -> ``fuse`` -> ``cut``, fusing by ``fusion.weights``."""
        base = build_pipeline(self.searcher, ("retrieve", "fuse", "cut"))
        return base.replace("fuse", base["fuse"].with_weights(self.searcher.config.fusion.weights))

    def rank(self, query: TermQuery, scope: TaskScope, limit: int) -> tuple[list[int], str]:
        """Comment ids, best first, at most ``limit``, and the method: ``fts`` / ``like`` (FTS5
        alone) or ``hybrid`` (fused)."""
        if scope.space != self.space:
            raise InputError(f"this engine searches space {self.space!r}, not {scope.space!r}", param="scope")
        if self.alone:
            fts5 = self.retrievers[FTS5].scoped(scope).for_query(query)
            pipeline = Pipeline((RetrieveStage(CommentIds(), {FTS5: limit}, fetch={FTS5: exact_fetch}), KeepStage(FTS5),
                                 CutStage()))
            c = pipeline(Candidates(), Query(query.text, {FTS5: fts5}, None, None, limit))
            return [int(ri) for ri, _ in c.fused], fts5.last_method
        s = self.searcher
        if s is None:  # no indexed comment in the space
            return [], "hybrid"
        allowed = self.allowed(scope, query)
        views = {}
        for name, r in s.retrievers.items():
            if name == FTS5:
                views[name] = r.scoped(scope).for_query(query)
            elif allowed.any():  # none allowed: this retriever proposes nothing
                views[name] = r
        pmask = allowed[s.passage_record] if allowed.any() else None
        depth = max(limit, FUSED_DEPTH)
        fetch = {name: exact_fetch if name == FTS5 else fused_fetch for name in views}
        retrieve = RetrieveStage(s, dict.fromkeys(views, depth), fetch=fetch)
        c = self.pipeline.replace("retrieve", retrieve)(Candidates(), Query(query.text, views, pmask, None, limit))
        return [int(self.ids[ri]) for ri, _ in c.fused], "hybrid"
