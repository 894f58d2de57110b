"""A second ranker for task search (issue 4 item 6): the core Searcher (BM25 + dense + fusion)
over the same indexed (normalised, redacted) comment text that FTS5 holds, so the harness can
measure hybrid ranking against FTS5 trigram ranking on task conversations.

Selected by ``SearchConfig.tasks.ranker = "searcher"``. The space boundary stays where T1 puts
it: the ranker only proposes comment ids; ``task_search`` fetches them with the same SQL scope
(space, not the current task, filters), so nothing outside the space can come back. ``all``
keeps its meaning (every term must occur in the comment); ``any`` ranks every comment of the
other tasks by hybrid relevance (no lexical requirement: that is what is being measured).
"""
from __future__ import annotations

import sqlite3
from typing import Any, Sequence

import numpy as np

from searchkit.config import SearchConfig
from searchkit.records import Record


class HybridTaskRanker:
    """The core Searcher over the indexed comments of one space."""

    def __init__(
        self, conn: sqlite3.Connection, space: str, config: SearchConfig | None = None, *,
        embedder: Any = None, cache: Any = None,
    ) -> None:
        from searchkit.ingest import tasks as store
        from searchkit.searcher import Searcher

        self.space = space
        rows = conn.execute(
            "SELECT c.id, c.task, c.indexed, c.ts, c.kind, c.author FROM comments c JOIN tasks t ON t.id = c.task"
            " WHERE t.space = ? AND c.indexed IS NOT NULL ORDER BY c.ts_utc, c.id",
            (space,),
        ).fetchall()
        records = [
            Record(id=str(cid), kind="comment", space=space, date=ts, ref=f"comment:{cid}", text=text,
                   fields={"task": int(task), "kind": kind, "author": author})
            for cid, task, text, ts, kind, author in rows
        ]
        self._task = np.array([r.fields["task"] for r in records], dtype=np.int64)
        self._kind = np.array([r.fields["kind"] for r in records], dtype=object)
        self._author = np.array([r.fields["author"] for r in records], dtype=object)
        self._folded = [store.fold(r.text) for r in records]
        self.searcher = Searcher.build(records, config, embedder=embedder, cache=cache) if records else None

    def rank(
        self, query: str, terms: Sequence[str], mode: str, *, current_task: int | None, limit: int,
        kind: str | None = None, author: str | None = None, task_id: int | None = None,
    ) -> list[int]:
        """Comment ids, best first, at most ``limit``; filters apply before the cut."""
        from searchkit.ingest import tasks as store

        if self.searcher is None:
            return []
        mask = np.ones(len(self._task), dtype=bool)
        if current_task is not None:
            mask &= self._task != current_task
        if task_id is not None:
            mask &= self._task == task_id
        if kind is not None:
            mask &= self._kind == kind
        if author is not None:
            mask &= self._author == author
        if mode == "all":
            folded = [store.fold(t) for t in terms]
            mask &= np.fromiter((all(t in f for t in folded) for f in self._folded), dtype=bool, count=len(mask))
        if not mask.any():
            return []
        res = self.searcher.search(query, k=limit, record_mask=mask)
        return [int(h.record.id) for h in res.hits]
