"""The FTS5 trigram retriever of the task store (SPEC T1, T4): it owns the SQL of task search.

Rows are comment ids. The scope (the space, not the current task, the ``kind`` / ``author`` /
``task_id`` filters) is a condition of the SQL query itself, so a comment outside it can never
come back (T1). Each term is quoted on its own (``fts.match_expression``), so FTS5 syntax inside a
term is text; a term shorter than three characters sends the query down the LIKE path (same any /
all meaning, newest first: no relevance there). Scores are ``-bm25()`` (higher is better) on the
FTS path, and descending by recency on the LIKE path.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from searchkit.ingest import tasks as store
from searchkit.ingest.tasks import fts, query_terms
from searchkit.retrievers import RetrieverSpec, register

COMMENTS_FTS = "comment_fts"


@dataclass(frozen=True)
class TermQuery:
    """A task-search query: the normalised terms and how they combine (``any`` / ``all``)."""

    text: str
    terms: tuple[str, ...]
    mode: str = "any"

    @property
    def like(self) -> bool:
        """Whether the trigram index cannot serve it (a term under three characters)."""
        return fts.needs_like(self.terms)


@dataclass(frozen=True)
class TaskScope:
    """Which comments a task search may see: the caller's space, never the current task, and the
    optional filters (T1, T3). ``sql()`` gives the condition and its parameters."""

    space: str
    current_task: int | None = None
    kind: str | None = None
    author: str | None = None
    task_id: int | None = None

    def sql(self) -> tuple[str, list[Any]]:
        where = ["t.space = ?"]
        params: list[Any] = [self.space]
        if self.current_task is not None:
            where.append("t.id <> ?")
            params.append(self.current_task)
        if self.kind is not None:
            where.append("c.kind = ?")
            params.append(self.kind)
        if self.author is not None:
            where.append("c.author = ?")
            params.append(self.author)
        if self.task_id is not None:
            where.append("t.id = ?")
            params.append(self.task_id)
        return " AND ".join(where), params


class FTS5Retriever:
    """Task comments by FTS5 trigram relevance (or LIKE, newest first) inside a scope."""

    name = "fts5"

    def __init__(self, conn: sqlite3.Connection, *, fold: Any = None) -> None:
        self.conn = conn
        self.fold = fold or store.fold
        self.last_method = "fts"
        """``fts`` or ``like``: the path the last ``search`` took."""

    def prepare(self, text: str, mode: str = "any") -> TermQuery:
        return TermQuery(text, query_terms(text), mode)

    def search(self, query: TermQuery, k: int, mask: TaskScope | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` comment ids of the scope ``mask`` (required: a task search always has a
        space), with their scores."""
        if mask is None:
            raise ValueError("the FTS5 retriever needs a TaskScope: task search is always inside one space")
        scope, params = mask.sql()
        if query.like:
            self.last_method = "like"
            op = f" {fts.match_operator(query.mode)} "
            likes = op.join("c.folded LIKE ? ESCAPE '\\'" for _ in query.terms)
            # comments newest first (the comments_ts index: a store imported before it existed gets it
            # on its next import), each joined to its task: the scan stops at the k-th match instead
            # of testing every comment of the space and sorting the matches (same rows, same order)
            sql = (
                "SELECT c.id FROM comments c CROSS JOIN tasks t ON t.id = c.task"
                f" WHERE c.folded IS NOT NULL AND ({likes}) AND {scope}"
                " ORDER BY c.ts_utc DESC, c.id DESC LIMIT ?"
            )
            args = [fts.like_pattern(self.fold(t)) for t in query.terms] + params + [k]
            ids = [int(r[0]) for r in self.conn.execute(sql, args)]
            return np.asarray(ids, dtype=np.int64), -np.arange(len(ids), dtype=np.float64)
        self.last_method = "fts"
        sql = (
            f"SELECT c.id, bm25({COMMENTS_FTS}) FROM {COMMENTS_FTS} JOIN comments c ON c.id = {COMMENTS_FTS}.rowid"
            f" JOIN tasks t ON t.id = c.task WHERE {COMMENTS_FTS} MATCH ? AND {scope}"
            f" ORDER BY bm25({COMMENTS_FTS}), c.ts_utc DESC, c.id DESC LIMIT ?"
        )
        rows = self.conn.execute(sql, [fts.match_expression(query.terms, query.mode)] + params + [k]).fetchall()
        return (np.asarray([int(r[0]) for r in rows], dtype=np.int64),
                np.asarray([-float(r[1]) for r in rows], dtype=np.float64))

    def scores_for(self, query: TermQuery, rows: Sequence[int]) -> np.ndarray:
        """FTS scores of the given comment ids (the lowest score any match gets, minus one, for an id
        the query does not match; recency ranks on the LIKE path are not defined outside a result)."""
        rows = [int(r) for r in rows]
        if not rows or query.like:
            return np.zeros(len(rows), dtype=np.float64)
        marks = ",".join("?" for _ in rows)
        sql = (f"SELECT rowid, bm25({COMMENTS_FTS}) FROM {COMMENTS_FTS} WHERE {COMMENTS_FTS} MATCH ? "
               f"AND rowid IN ({marks})")
        found = {int(r[0]): -float(r[1]) for r in
                 self.conn.execute(sql, [fts.match_expression(query.terms, query.mode)] + rows)}
        floor = min(found.values(), default=0.0) - 1.0
        return np.asarray([found.get(r, floor) for r in rows], dtype=np.float64)


SPEC = register(RetrieverSpec(name="fts5", section=None))
"""Registered so fusion weights and features may name it; the task engine builds it over a store."""
