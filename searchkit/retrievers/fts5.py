"""The FTS5 trigram retriever of the task store (SPEC T1, T4): it owns the SQL of task search.

The scope of a task search is SQL, written once (``TaskScope``, a ``searchkit.retrievers.scopes.SqlScope``):
the space, not the current task, the ``kind`` / ``author`` / ``task_id`` filters, and with
``match_mode=all`` the terms every comment must hold (``every``). FTS5 pushes it down
(``push_down``): the scope is inside its own query, so a comment outside it can never come back (T1),
and ``every`` is its ``AND`` of quoted trigram terms. A retriever that ranks an in-memory copy of the
comments may only propose those the same SQL selects (``TaskScope.record_mask``, via
``TaskScope.allowed``: ``every`` as "each folded term a substring of the folded text", the meaning
FTS5's ``AND`` gives it).

Each term is quoted on its own (``fts.match_expression``), so FTS5 syntax inside a term is text; a
term shorter than three characters sends the query down the LIKE path (same any / all meaning,
newest first: no relevance there; ``TermQuery.method``). Scores are ``-bm25()`` (higher is better) on
the FTS path, and descending by recency on the LIKE path.

Rows are comment ids, or, given ``CommentRows``, the passage rows of a Searcher over the space's
comment records (``searchkit.tools.task_engine``): there the retriever sits beside ``bm25`` and
``dense`` and the Searcher's stages rank them (``Searcher.search`` with the ``TaskScope``).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from searchkit.errors import InputError
from searchkit.ingest import tasks as store
from searchkit.ingest.tasks import fts, query_terms
from searchkit.records import Record
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

    @property
    def method(self) -> str:
        """``like`` (newest first) where the trigram index cannot serve it, else ``fts`` (relevance)."""
        return "like" if self.like else "fts"


@dataclass(frozen=True)
class TaskScope:
    """Which comments a task search may see: the caller's space, never the current task, the
    optional filters (T1, T3) and, with ``match_mode=all``, the terms each must hold (``every``).
    ``sql()`` gives the condition and its parameters, over ``comments c`` joined to ``tasks t`` (FTS5
    pushes it down, ``every`` as its ``AND``); ``allowed`` the comment ids it lets an in-memory
    retriever return, read from the store ``conn`` (``on``), and ``record_mask`` those of a comment Searcher's
    records (``SqlScope``). Equal scopes are one scope whatever their store (a Searcher keeps masks by
    scope; it searches one store)."""

    space: str
    current_task: int | None = None
    kind: str | None = None
    author: str | None = None
    task_id: int | None = None
    every: tuple[str, ...] = ()
    conn: sqlite3.Connection | None = field(default=None, compare=False, repr=False)

    def on(self, conn: sqlite3.Connection, every: Sequence[str] = ()) -> "TaskScope":
        """This scope over the store ``conn``, each comment holding every term of ``every`` (all mode)."""
        return TaskScope(self.space, self.current_task, self.kind, self.author, self.task_id,
                         tuple(every) or self.every, conn)

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

    def allowed_sql(self, query: TermQuery | None = None) -> tuple[str, list[Any]]:
        """``SELECT c.id`` of the indexed comments in this scope (the scope's ``sql()``); with
        ``every`` (or a query in ``all`` mode), only those whose folded text holds every folded term
        (LIKE, as the LIKE path matches: the meaning of ``all`` does not depend on the retriever)."""
        where, params = self.sql()
        every = self.every or (query.terms if query is not None and query.mode == "all" else ())
        for term in every:
            where += " AND c.folded LIKE ? ESCAPE '\\'"
            params.append(fts.like_pattern(store.fold(term)))
        return f"SELECT c.id FROM comments c JOIN tasks t ON t.id = c.task WHERE c.indexed IS NOT NULL AND {where}", params

    def allowed(self, conn: sqlite3.Connection | None = None, query: TermQuery | None = None) -> np.ndarray:
        """The comment ids ``allowed_sql`` selects in ``conn`` (default: the scope's), int64 ascending."""
        conn = conn if conn is not None else self.conn
        if conn is None:
            raise InputError("this task scope has no store to read (TaskScope.on)", param="scope")
        sql, params = self.allowed_sql(query)
        return np.sort(np.fromiter((int(r[0]) for r in conn.execute(sql, params)), dtype=np.int64))

    def record_mask(self, records: Sequence[Record]) -> np.ndarray:
        """Which of ``records`` (a comment Searcher's: ids are comment ids) the scope selects."""
        ids = np.fromiter((int(r.id) for r in records), dtype=np.int64, count=len(records))
        return np.isin(ids, self.allowed())


@dataclass(frozen=True)
class CommentRows:
    """Comment ids <-> the passage rows of a Searcher over comment records: ``ids`` (record ->
    comment id), ``passage_record`` (row -> record) and ``first`` (comment id -> its first row).
    The FTS5 retriever answers a comment by its first passage row; a row scores as its comment."""

    ids: np.ndarray
    passage_record: np.ndarray
    first: Mapping[int, int]

    @classmethod
    def of(cls, ids: Sequence[int], passage_ids: Sequence[int | str]) -> "CommentRows":
        """The rows of records ``ids`` (comment ids, one per record) whose passages belong to the
        comments ``passage_ids`` (one per passage row, in row order; ints or their digit strings)."""
        at = {int(cid): i for i, cid in enumerate(ids)}
        record = np.fromiter((at[int(cid)] for cid in passage_ids), dtype=np.int64, count=len(passage_ids))
        first: dict[int, int] = {}
        for row, cid in enumerate(passage_ids):
            first.setdefault(int(cid), row)
        return cls(np.asarray(ids, dtype=np.int64), record, first)


class FTS5Retriever:
    """Task comments by FTS5 trigram relevance (or LIKE, newest first) inside a ``TaskScope``."""

    name = "fts5"

    def __init__(self, conn: sqlite3.Connection, *, fold: Callable[[str], str] | None = None, scope: TaskScope | None = None,
                 rows: CommentRows | None = None) -> None:
        self.conn = conn
        self.fold = fold or store.fold
        self.scope = scope
        """The scope searched when ``search`` is given none (``scoped`` / ``push_down``)."""
        self.rows = rows
        """None: rows are comment ids; else the passage rows of a Searcher over comment records."""

    def _with(self, **changes: Any) -> "FTS5Retriever":
        kw = {"fold": self.fold, "scope": self.scope, "rows": self.rows, **changes}
        return FTS5Retriever(self.conn, **kw)

    def scoped(self, scope: TaskScope) -> "FTS5Retriever":
        """This retriever inside ``scope`` (its SQL: the space boundary and the filters, T1)."""
        if not isinstance(scope, TaskScope):
            raise InputError(f"the FTS5 retriever's scope is a TaskScope (SQL), got {type(scope).__name__}",
                             param="scope")
        return self._with(scope=scope)

    push_down = scoped
    """The ``SqlScope`` put inside its own query (``searchkit.retrievers.scopes.PushesDown``)."""

    def over(self, rows: CommentRows) -> "FTS5Retriever":
        """This retriever answering with the passage rows of a Searcher over comment records."""
        return self._with(rows=rows)

    def prepare(self, text: str, mode: str | None = None) -> TermQuery:
        """``text``'s terms (``query_terms``), combined as ``mode`` says; by default ``all`` inside
        a scope whose comments must hold every term (``TaskScope.every``), else ``any``."""
        if mode is None:
            mode = "all" if self.scope is not None and self.scope.every else "any"
        return TermQuery(text, query_terms(text), mode)

    def search(self, query: TermQuery, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # noqa: ARG002
        """The best ``k`` comments of the retriever's scope (``push_down``: a task search always has
        one), with their scores; as passage rows over ``rows``. A passage mask is not read: the scope
        is inside the SQL."""
        if self.scope is None:
            raise InputError("the FTS5 retriever needs a TaskScope (push_down): task search is always inside "
                             "one space", param="scope")
        ids, scores = self._search(query, k, self.scope)
        if self.rows is None:
            return ids, scores
        keep = [i for i, cid in enumerate(ids.tolist()) if cid in self.rows.first]
        return (np.asarray([self.rows.first[int(ids[i])] for i in keep], dtype=np.int64),
                np.asarray(scores[keep], dtype=np.float64))

    def _search(self, query: TermQuery, k: int, scope: TaskScope) -> tuple[np.ndarray, np.ndarray]:
        where, params = scope.sql()
        if query.like:
            op = f" {fts.match_operator(query.mode)} "
            likes = op.join("c.folded LIKE ? ESCAPE '\\'" for _ in query.terms)
            # comments newest first (the comments_ts index: a store imported before it existed gets it
            # on its next import), each joined to its task: the scan stops at the k-th match instead
            # of testing every comment of the space and sorting the matches (same rows, same order)
            sql = (
                "SELECT c.id FROM comments c CROSS JOIN tasks t ON t.id = c.task"
                f" WHERE c.folded IS NOT NULL AND ({likes}) AND {where}"
                " ORDER BY c.ts_utc DESC, c.id DESC LIMIT ?"
            )
            args = [fts.like_pattern(self.fold(t)) for t in query.terms] + params + [k]
            ids = [int(r[0]) for r in self.conn.execute(sql, args)]
            return np.asarray(ids, dtype=np.int64), -np.arange(len(ids), dtype=np.float64)
        sql = (
            f"SELECT c.id, bm25({COMMENTS_FTS}) FROM {COMMENTS_FTS} JOIN comments c ON c.id = {COMMENTS_FTS}.rowid"
            f" JOIN tasks t ON t.id = c.task WHERE {COMMENTS_FTS} MATCH ? AND {where}"
            f" ORDER BY bm25({COMMENTS_FTS}), c.ts_utc DESC, c.id DESC LIMIT ?"
        )
        rows = self.conn.execute(sql, [fts.match_expression(query.terms, query.mode)] + params + [k]).fetchall()
        return (np.asarray([int(r[0]) for r in rows], dtype=np.int64),
                np.asarray([-float(r[1]) for r in rows], dtype=np.float64))

    def scores_for(self, query: TermQuery, rows: Sequence[int]) -> np.ndarray:
        """FTS scores of the given comment ids, or passage rows over ``rows`` (a row scores as its
        comment): the lowest score any match gets, minus one, for a comment the query does not
        match; recency ranks on the LIKE path are not defined outside a result."""
        if self.rows is not None:
            r = self.rows
            rows = [int(cid) for cid in r.ids[r.passage_record[np.asarray(rows, dtype=np.int64)]]]
        rows = [int(r) for r in rows]
        if not rows or query.like:
            return np.zeros(len(rows), dtype=np.float64)
        distinct = list(dict.fromkeys(rows))
        marks = ",".join("?" for _ in distinct)
        sql = (f"SELECT rowid, bm25({COMMENTS_FTS}) FROM {COMMENTS_FTS} WHERE {COMMENTS_FTS} MATCH ? "
               f"AND rowid IN ({marks})")
        found = {int(r[0]): -float(r[1]) for r in
                 self.conn.execute(sql, [fts.match_expression(query.terms, query.mode), *distinct])}
        floor = min(found.values(), default=0.0) - 1.0
        return np.asarray([found.get(r, floor) for r in rows], dtype=np.float64)


SPEC = register(RetrieverSpec(name="fts5", section=None))
"""Registered so fusion weights and features may name it; it has no config section (so no config,
fingerprint or schema names it): the task engine builds it over a store and a space's comments."""
