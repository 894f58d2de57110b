"""The index version queries are answered from, and the background refresh (issue 30; SPEC H3).

``Served`` is one published version: a ``HistoryIndex`` that is never changed once published, its
number and when it was built. ``Holder.current`` is read once per call, so a query holds one
version from start to end; ``Holder.publish`` replaces it with one reference assignment.

``Refresher`` re-reads the workspace in a background thread with ``index --update`` semantics
(``HistoryIndex.update`` on a copy of the current version: only new or changed passage text is
embedded; what could not be read this time keeps its previous records), then publishes the new
version; queries keep being answered from the previous version until then. A failed refresh keeps
the previous version and writes one log line. Refreshes are timed so that each one *completes*
within ``every`` seconds of the previous one's start: text erased from the workspace leaves the
answers within ``every`` (H3's bound, 30 minutes by default), as long as a refresh takes less.
"""
from __future__ import annotations

import copy
import datetime as _dt
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from searchkit.ingest import tasks as task_store
from searchkit.tools.task_engine import TaskEngine

MAX_EVERY_S = 30 * 60
"""H3: a deleted row leaves the results within about 30 minutes."""


@dataclass(frozen=True)
class Served:
    """One published version of the index: never changed after ``Holder.publish``."""

    index: Any
    version: int
    built_at: str
    took_s: float = 0.0


class Holder:
    """The current ``Served`` version; one reference, swapped atomically."""

    def __init__(self, served: Served) -> None:
        self._current = served

    @property
    def current(self) -> Served:
        """The version a call reads (read it once per call)."""
        return self._current

    def publish(self, served: Served) -> None:
        """Make ``served`` the version new calls read; calls already running keep theirs."""
        self._current = served


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def refreshed(served: Served, workspace: str | Path) -> tuple[Served, Any]:
    """The next version: a copy of ``served.index`` updated from ``workspace`` (the published one
    is left untouched), and the update's report."""
    t0 = time.perf_counter()
    index = copy.copy(served.index)  # update() rebinds the copy's attributes; the original keeps its own
    report = index.update(workspace)
    return Served(index, served.version + 1, now_iso(), time.perf_counter() - t0), report


class Refresher:
    """Refreshes ``holder`` from ``workspace`` every ``every`` seconds in a daemon thread.

    ``on_done(served, report, error)`` is called after each refresh (a log line); ``error`` is the
    one-line reason of a failure, the previous version kept."""

    def __init__(self, holder: Holder, workspace: str | Path, every: float,
                 on_done: Callable[[Served | None, Any, str | None], None],
                 on_publish: Callable[[Served], None] | None = None) -> None:
        self.holder, self.workspace, self.every = holder, Path(workspace), float(every)
        self.on_done, self.on_publish = on_done, on_publish
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="searchkit-refresh", daemon=True)
        self.last_ok: str | None = None
        self.last_error: str | None = None
        self.running = False

    def start(self) -> "Refresher":
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def refresh_now(self) -> Served | None:
        """One refresh, in the calling thread: the new version published, or None (kept)."""
        self.running = True
        try:
            served, report = refreshed(self.holder.current, self.workspace)
        except Exception as exc:  # any failure keeps the previous version
            self.last_error = _one_line(exc)
            self.on_done(None, None, self.last_error)
            return None
        finally:
            self.running = False
        self.holder.publish(served)
        if self.on_publish is not None:
            self.on_publish(served)
        self.last_ok, self.last_error = served.built_at, None
        self.on_done(served, report, None)
        return served

    def _loop(self) -> None:
        took = 0.0
        while not self._stop.wait(max(self.every - took, 0.0)):
            t0 = time.perf_counter()
            self.refresh_now()
            took = min(time.perf_counter() - t0, self.every)


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class TaskStores:
    """The task store, opened read-only once per worker thread (an SQLite connection stays in its
    thread), and the task engine of each space the config composes (``tasks.retrievers``), built
    on first use per thread and dropped at each refresh (the store may have been imported into)."""

    def __init__(self, path: str | Path, config: Any) -> None:
        self.path = Path(path)
        self.config = config
        self._open = task_store.open_readonly
        self._local = threading.local()
        self._generation = 0
        self._open(self.path).close()  # a usable store now, else a clear error at start

    def reset(self) -> None:
        """Drop the engines (after a refresh); connections stay."""
        self._generation += 1

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open(self.path)
        return conn

    def engine(self, space: str | None) -> Any:
        """The engine of ``space`` for this thread; None when the config keeps FTS5 alone (the seed's)."""
        if space is None or list(self.config.tasks.retrievers) == ["fts5"]:
            return None
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            local.engines, local.generation = {}, self._generation
        if space not in local.engines:
            local.engines[space] = TaskEngine(self.connection(), space, self.config)
        return local.engines[space]
