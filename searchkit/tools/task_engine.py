"""The task search engine (SPEC T): the retrievers ``tasks.retrievers`` names, composed by fusion.

``fts5`` is the store's FTS5 trigram retriever (``searchkit.retrievers.fts5``: its SQL keeps the
space boundary and the filters inside the query, T1). ``bm25`` and ``dense`` rank the same indexed
(normalised, redacted) comment text with the core retrievers, over an in-memory index of the space's
comments built on first use (embeddings cached), answering with comment ids. Several retrievers are
fused as ``fusion`` says (``searchkit.rank.fusion.fuse_runs``, the Searcher's own fusion); one
retriever's order is kept as it is (FTS5 relevance, or newest first on the LIKE path, T4). The tool
(``searchkit.tools.tasks``) keeps the parameters, the excerpts and the rendering.
"""
from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from searchkit.config import SearchConfig
from searchkit.ingest import tasks as store
from searchkit.rank.fusion import fuse_runs
from searchkit.records import Record
from searchkit.retrievers.fts5 import FTS5Retriever, TaskScope, TermQuery
from searchkit.searcher import Searcher

FUSED_DEPTH = 100
"""Comments each retriever proposes when several are fused."""


class CommentCorpus:
    """The indexed comments of one space, as an in-memory Searcher with the retrievers asked for."""

    def __init__(self, conn: sqlite3.Connection, space: str, config: SearchConfig, names: list[str], *,
                 embedder: Any = None, cache: Any = None) -> None:
        rows = conn.execute(
            "SELECT c.id, c.task, c.indexed, c.ts, c.kind, c.author FROM comments c JOIN tasks t ON t.id = c.task"
            " WHERE t.space = ? AND c.indexed IS NOT NULL ORDER BY c.ts_utc, c.id",
            (space,),
        ).fetchall()
        records = [Record(id=str(cid), kind="comment", space=space, date=ts, ref=f"comment:{cid}", text=text)
                   for cid, _task, text, ts, _kind, _author in rows]
        self.ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
        self.task = np.array([int(r[1]) for r in rows], dtype=np.int64)
        self.kind = np.array([r[4] for r in rows], dtype=object)
        self.author = np.array([r[5] for r in rows], dtype=object)
        self.folded = [store.fold(r[2]) for r in rows]
        cfg = config.replace(**{f"{n}.enabled": n in names for n in config.retriever_sections()})
        self.searcher = Searcher.build(records, cfg, embedder=embedder, cache=cache) if records else None
        self._row = {int(cid): i for i, cid in enumerate(self.ids)}

    def mask(self, scope: TaskScope, query: TermQuery) -> np.ndarray:
        """Comments the scope allows (the space is this corpus's own); with ``all``, only those
        holding every term (the meaning of ``all`` does not depend on the retriever)."""
        m = np.ones(len(self.ids), dtype=bool)
        if scope.current_task is not None:
            m &= self.task != scope.current_task
        if scope.task_id is not None:
            m &= self.task == scope.task_id
        if scope.kind is not None:
            m &= self.kind == scope.kind
        if scope.author is not None:
            m &= self.author == scope.author
        if query.mode == "all":
            terms = [store.fold(t) for t in query.terms]
            m &= np.fromiter((all(t in f for t in terms) for f in self.folded), dtype=bool, count=len(m))
        return m


class CorpusRetriever:
    """One core retriever (any with a config section) of a ``CommentCorpus``, answering with comment ids:
    a comment's score is its best passage's."""

    def __init__(self, corpus: CommentCorpus, name: str) -> None:
        self.corpus = corpus
        self.name = name

    def prepare(self, text: str) -> Any:
        return self.corpus.searcher.retrievers[self.name].prepare(text)

    def search(self, query: tuple[TermQuery, Any], k: int, mask: TaskScope) -> tuple[np.ndarray, np.ndarray]:
        term_query, prepared = query
        s = self.corpus.searcher
        if s is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        allowed = self.corpus.mask(mask, term_query)
        if not allowed.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        pmask = allowed[s.passage_record]
        rows, scores = s.retrievers[self.name].search(prepared, min(len(s.passages), 3 * k + 10), pmask)
        best: dict[int, float] = {}
        for row, score in zip(rows.tolist(), scores.tolist()):
            cid = int(self.corpus.ids[s.passage_record[row]])
            if cid not in best:
                if len(best) >= k:
                    break
                best[cid] = float(score)
        return np.array(list(best), dtype=np.int64), np.array(list(best.values()), dtype=np.float64)

    def scores_for(self, query: tuple[TermQuery, Any], ids: list[int]) -> np.ndarray:
        s = self.corpus.searcher
        _, prepared = query
        out = []
        for cid in ids:
            rows = s.record_passages(self.corpus._row[int(cid)])
            out.append(float(np.max(s.retrievers[self.name].scores_for(prepared, rows))))
        return np.array(out)


class TaskEngine:
    """Task search over one space of a store, with the retrievers ``config.tasks.retrievers`` names."""

    def __init__(self, conn: sqlite3.Connection, space: str, config: SearchConfig | None = None, *,
                 embedder: Any = None, cache: Any = None) -> None:
        self.conn = conn
        self.space = space
        self.config = config or SearchConfig()
        names = list(self.config.tasks.retrievers)
        # FTS5 over the store, and every retriever with a config section over the comment corpus
        valid = [FTS5Retriever.name, *self.config.retriever_sections()]
        unknown = [n for n in names if n not in valid]
        if unknown:
            raise ValueError(f"task search has no retriever {unknown[0]!r}; it composes "
                             f"{', '.join(valid[:-1])} and {valid[-1]}")
        self.retrievers: dict[str, Any] = {}
        corpus_names = [n for n in names if n != FTS5Retriever.name]
        corpus = CommentCorpus(conn, space, self.config, corpus_names, embedder=embedder, cache=cache) \
            if corpus_names else None
        for name in names:
            self.retrievers[name] = FTS5Retriever(conn) if name == FTS5Retriever.name else CorpusRetriever(corpus, name)

    def rank(self, query: TermQuery, scope: TaskScope, limit: int) -> tuple[list[int], str]:
        """Comment ids, best first, at most ``limit``, and the method: ``fts`` / ``like`` (FTS5
        alone) or ``hybrid`` (fused)."""
        if scope.space != self.space:
            raise ValueError(f"this engine searches space {self.space!r}, not {scope.space!r}")
        only = list(self.retrievers.values())
        if len(only) == 1 and isinstance(only[0], FTS5Retriever):
            ids, _ = only[0].search(query, limit, scope)
            return [int(i) for i in ids], only[0].last_method
        prepared = {name: (query if isinstance(r, FTS5Retriever) else (query, r.prepare(query.text)))
                    for name, r in self.retrievers.items()}
        runs = {}
        for name, r in self.retrievers.items():
            ids, scores = r.search(prepared[name], max(limit, FUSED_DEPTH), scope)
            runs[name] = dict(zip((int(i) for i in ids), (float(s) for s in scores)))

        def fill(name: str, missing: list[int]) -> dict[int, float]:
            return dict(zip(missing, self.retrievers[name].scores_for(prepared[name], missing).tolist()))

        fused = fuse_runs(runs, self.config.fusion, fill=fill)
        return [int(cid) for cid, _ in fused[:limit]], "hybrid"
