"""The index version queries are answered from, and the background refresh (issue 30; SPEC H3).

``Served`` is one published version: a ``HistoryIndex`` that is never changed once published, its
number and when it was built. ``Holder.current`` is read once per call, so a query holds one
version from start to end; ``Holder.publish`` replaces it with one reference assignment.

``Refresher`` re-reads the workspace in the background with ``index --update`` semantics
(``HistoryIndex.update``: only new or changed passage text is embedded; what could not be read this
time keeps its previous records), then publishes the new version; queries keep being answered from
the previous version until then. The work runs in a child process at a lower CPU priority
(``ChildRefresh``: the server's own copy of the current version in a private index store, updated
there, the new version loaded back), so that reading and redacting a large workspace neither holds
the server's interpreter lock nor takes its cores from the queries; ``refreshed`` does the same in
the calling thread (small workspaces, tests). A failed refresh keeps the previous version and writes
one log line. Refreshes are timed so that each one *completes* within ``every`` seconds of the
previous one's start: text erased from the workspace leaves the answers within ``every`` (H3's
bound, 30 minutes by default), as long as a refresh takes less.
"""
from __future__ import annotations

import copy
import datetime as _dt
import logging
import os
import sqlite3
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from searchkit.errors import DataError, ResourceError
from searchkit.index import store as index_store
from searchkit.ingest import tasks as task_store
from searchkit.serve import child_process
from searchkit.tools.history import HistoryIndex
from searchkit.tools.task_engine import TaskEngine

log = logging.getLogger(__name__)

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
    """The next version, in this thread: a copy of ``served.index`` updated from ``workspace``
    (the published one is left untouched), and the update's report line."""
    t0 = time.perf_counter()
    index = copy.copy(served.index)  # update() rebinds the copy's attributes; the original keeps its own
    report = index.update(workspace)
    return Served(index, served.version + 1, now_iso(), time.perf_counter() - t0), report.line()


class RefreshError(ResourceError, RuntimeError):
    """A refresh that failed: the message is one line (the child's last line, never data)."""


CHILD_NICE = 19
"""The refresh child's CPU priority (the lowest), with ``SCHED_IDLE`` where the OS has it
(``refresh_child.lower_priority``): the refresh runs on what the server's calls leave."""


CHILD_MODULE = "searchkit.serve.refresh_child"


def _version_name(store: Path) -> str | None:
    """The name of the store's current version (None: none yet, or unreadable)."""
    try:
        return index_store.current_dir(store).name
    except (OSError, ResourceError, DataError):
        return None


class ChildRefresh:
    """Refreshes in a child process (``searchkit.serve.refresh_child``, started by
    ``child_process.start``: only the installed searchkit, never the current folder's): the server's
    private copy of the current version (``store``, an index folder in a folder only this user may
    read) is loaded there, updated from ``workspace`` and saved as the store's next version (the
    previous one erased once unread), then loaded back here; a child that exits without having
    written a new version failed. ``config`` is the file the server was started with; ``timeout``
    bounds a refresh (the child is killed, the previous version kept)."""

    def __init__(self, store: str | Path, workspace: str | Path, config_file: str | Path, config: Any,
                 timeout: float) -> None:
        self.store, self.workspace = Path(store), Path(workspace)
        self.config_file, self.config, self.timeout = Path(config_file), config, float(timeout)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._stopped = False

    def seed(self, served: Served) -> None:
        """Write the first version served into the store."""
        served.index.save(self.store)

    def __call__(self, served: Served, workspace: str | Path) -> tuple[Served, Any]:
        t0 = time.perf_counter()
        args = ["--index", str(self.store), "--workspace", str(workspace), "--config", str(self.config_file),
                "--nice", str(CHILD_NICE)]
        before = _version_name(self.store)
        with self._lock:
            if self._stopped:
                raise RefreshError("the server is stopping")
            child = child_process.start(CHILD_MODULE, args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, encoding="utf-8", errors="replace")
            proc = self._proc = child.proc
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RefreshError(f"the refresh took over {self.timeout:.0f} s and was stopped") from None
        finally:
            with self._lock:
                self._proc = None
            child.close()
        if self._stopped:
            raise RefreshError("stopped: the server is stopping")
        if proc.returncode != 0:
            last = (err.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise RefreshError(last)
        if _version_name(self.store) == before:  # a child that did not refresh is never a success
            raise RefreshError("the refresh child exited without writing a new version of the index")
        index = HistoryIndex.load(self.store, self.config)
        line = (out.strip().splitlines() or [""])[-1]
        return Served(index, served.version + 1, now_iso(), time.perf_counter() - t0), line

    def stop(self) -> None:
        """Stop a refresh under way (the server is stopping) and start no other."""
        with self._lock:
            self._stopped = True
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)


class Refresher:
    """Refreshes ``holder`` from ``workspace`` every ``every`` seconds in a daemon thread, with
    ``refresh(served, workspace) -> (next version, report line)`` (``refreshed`` or a
    ``ChildRefresh``).

    ``on_done(served, report, error)`` is called after each refresh (a log line); ``error`` is the
    one-line reason of a failure, the previous version kept. ``before_publish(served)`` prepares a
    new version before any call reads it (``startup.warm_scopes``); its failure is logged, the
    version is published all the same."""

    def __init__(self, holder: Holder, workspace: str | Path, every: float,
                 on_done: Callable[[Served | None, Any, str | None], None],
                 on_publish: Callable[[Served], None] | None = None,
                 refresh: Callable[[Served, Path], tuple[Served, Any]] | None = None,
                 before_publish: Callable[[Served], None] | None = None) -> None:
        self.holder, self.workspace, self.every = holder, Path(workspace), float(every)
        self.on_done, self.on_publish, self.before_publish = on_done, on_publish, before_publish
        self.refresh = refresh
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="searchkit-refresh", daemon=True)
        self.last_ok: str | None = None
        self.last_error: str | None = None
        self.running = False

    def start(self) -> "Refresher":
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Start no other refresh, stop one under way, wait for the thread (at most ``timeout``)."""
        self._stop.set()
        halt = getattr(self.refresh, "stop", None)
        if halt is not None:
            halt()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def refresh_now(self) -> Served | None:
        """One refresh, in the calling thread: the new version published, or None (kept)."""
        self.running = True
        previous = self.holder.current
        try:
            served, report = (self.refresh or refreshed)(previous, self.workspace)
        except Exception as exc:  # any failure keeps the previous version
            self.last_error = _one_line(exc)
            self.on_done(None, None, self.last_error)
            return None
        finally:
            self.running = False
        if self.before_publish is not None:
            try:
                self.before_publish(served)
            except Exception as exc:  # the new version is served whatever happens here
                log.warning("preparing version %d: %s", served.version, _one_line(exc))
        self.holder.publish(served)
        _retire(previous, served)
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


def _retire(previous: Served, served: Served) -> None:
    """H3: the previous version, no longer served, stops writing to the embedding cache, and what
    the new one erased leaves the cache again (a call answered from the previous version during
    the refresh may have embedded an erased passage's sentences; ``HistoryIndex.retire``)."""
    retire = getattr(previous.index, "retire", None)
    if retire is None or previous.index is served.index:
        return
    try:
        retire(served.index)
    except Exception as exc:  # the new version is served whatever happens here
        log.warning("retiring version %d: %s", previous.version, _one_line(exc))


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def file_signature(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one file at ``path`` from another put there since (issue 39 item 7): device,
    inode, size and modification time (``stat`` only, never an open: closing a descriptor of an
    SQLite file drops the locks this process's connections hold on it). None: nothing there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class TaskStores:
    """The task store, opened read-only once per worker thread (an SQLite connection stays in its
    thread), and the task engine of each space the config composes (``tasks.retrievers``), built
    on first use per thread and dropped at each refresh (the store may have been imported into).

    A thread's connection is opened again when the file at ``path`` is no longer the one it opened
    (``file_signature``: a store deleted and imported again, a new file at the same path, is
    answered from at once, not from the deleted file until a restart; one removed is unavailable)."""

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
        local = self._local
        conn = getattr(local, "conn", None)
        signature = file_signature(self.path)  # before the open: a file put there meanwhile is opened again
        if conn is not None and signature != local.signature:
            local.conn = None
            local.generation = None  # this thread's engines read the old connection
            conn.close()
            conn = None
        if conn is None:
            conn = self._open(self.path)
            local.conn, local.signature = conn, signature
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
