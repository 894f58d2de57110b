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
the calling thread (small workspaces, tests, the update at start). A failed refresh keeps the
previous version and writes one log line; a refresh that finds nothing changed (the workspace's
change signature, or the same records and spaces) publishes nothing (issue 41 item 3). Refreshes
follow ``serve.freshness``'s schedule: each starts ahead of the moment the served data becomes
``every`` old (H3's bound, 30 minutes by default) and, if the calls starve it at idle priority,
is started again at normal priority halfway to that moment (issue 41 item 2), so text erased from
the workspace leaves the answers within ``every``.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from searchkit.config import SearchConfig
from searchkit.errors import DataError, ResourceError
from searchkit.index import store as index_store
from searchkit.ingest import tasks as task_store
from searchkit.serve import child_process
from searchkit.serve.freshness import RETRY_S, Freshness, Mark, late_at, next_start
from searchkit.serve.refresh_child import UNCHANGED_EXIT, new_rerank_passages, same_content
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
    loaded_at: str = field(default_factory=lambda: now_iso())
    """When this version started to be served (``built_at``: when its index was built)."""


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


def refreshed(served: Served, workspace: str | Path, late_at: float | None = None) -> tuple[Served | None, Any]:  # noqa: ARG001
    """The next version, in this thread: a copy of ``served.index`` updated from ``workspace``
    (the published one is left untouched) with the rerank sentences of its new passages embedded,
    and the update's report line; None for the version when nothing changed (issue 41 item 3).
    ``late_at`` is ``ChildRefresh``'s (this thread's priority is the caller's)."""
    t0 = time.perf_counter()
    index = copy.copy(served.index)  # update() rebinds the copy's attributes; the original keeps its own
    before = {p.text for p in served.index.searcher.passages}
    report = index.update(workspace)
    if same_content(served.index, index):
        keep_memo(served.index, index)
        return None, "unchanged: " + report.line()
    index.searcher.embed_rerank_sentences(new_rerank_passages(index.searcher, before))
    return Served(index, served.version + 1, now_iso(), time.perf_counter() - t0), report.line()


def keep_memo(served: Any, updated: Any) -> None:
    """A refresh that found nothing changed still read every text the memo of ``served`` did not
    vouch for (an index saved under other secret rules, or without a memo): ``served`` keeps the
    new memo (``HistoryIndex.memo``: the clean verdicts and known secrets of this very content
    under the rules now), so the next refresh, and the refresh child's store seeded from it, do
    not check the whole workspace again (issue 41 item 9: 860 s of a 102k-passage start, then
    every refresh, after the rules' source changed). The records and spaces are the same."""
    memo = getattr(updated, "memo", None)
    if memo is not None and hasattr(served, "memo"):
        served.memo = memo


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
    previous one erased once unread), then loaded back here; a child that found nothing changed
    saves nothing and says so (``UNCHANGED_EXIT``: no version is published, issue 41 item 3); a child
    that exits without either failed. ``config`` is the file the server was started with;
    ``timeout`` bounds a refresh (the child is killed, the previous version kept).

    Priority (issue 41 item 2): the child starts at the lowest priority (nice 19, ``SCHED_IDLE``);
    at ``late_at`` (a monotonic time, from the schedule) a child still running is stopped and the
    refresh started again at normal priority, where it gets its share of the cores beside the calls
    (an unprivileged process cannot raise its own priority back). ``late_at`` already past: normal
    priority from the start; None: idle throughout. ``last_priority`` says how the last one ran."""

    def __init__(self, store: str | Path, workspace: str | Path, config_file: str | Path, config: SearchConfig,
                 timeout: float) -> None:
        self.store, self.workspace = Path(store), Path(workspace)
        self.config_file, self.config, self.timeout = Path(config_file), config, float(timeout)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._stopped = False
        self.last_priority: str | None = None
        self.late_restarts = 0

    def seed(self, served: Served) -> None:
        """Write the first version served into the store."""
        served.index.save(self.store)

    def _start(self, workspace: str | Path, idle: bool) -> Any:
        args = ["--index", str(self.store), "--workspace", str(workspace), "--config", str(self.config_file)]
        if idle:
            args += ["--nice", str(CHILD_NICE)]
        with self._lock:
            if self._stopped:
                raise ResourceError("the server is stopping")
            child = child_process.start(CHILD_MODULE, args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, encoding="utf-8", errors="replace")
            self._proc = child.proc
        return child

    def _finish(self, child: child_process.Child, kill: bool) -> tuple[str, str]:
        if kill:
            child.proc.kill()
        try:
            return child.proc.communicate()
        finally:
            with self._lock:
                self._proc = None
            child.close()

    def __call__(self, served: Served, workspace: str | Path, late_at: float | None = None) -> tuple[Served | None, Any]:
        t0 = time.perf_counter()
        end = time.monotonic() + self.timeout
        before = _version_name(self.store)
        idle = late_at is None or late_at > time.monotonic()
        priorities = ["idle" if idle else "normal"]
        child = self._start(workspace, idle)
        while True:
            until = min(end, late_at) if idle and late_at is not None else end
            try:
                out, err = child.proc.communicate(timeout=max(until - time.monotonic(), 0.0))
                self._finish(child, kill=False)
                break
            except subprocess.TimeoutExpired:
                self._finish(child, kill=True)
                if time.monotonic() >= end or not idle:
                    self.last_priority = ">".join(priorities)
                    raise ResourceError(f"the refresh took over {self.timeout:.0f} s and was stopped") from None
            idle = False  # late: again at normal priority
            self.late_restarts += 1
            priorities.append("normal")
            child = self._start(workspace, idle)
        self.last_priority = ">".join(priorities)
        if self._stopped:
            raise ResourceError("stopped: the server is stopping")
        line = (out.strip().splitlines() or [""])[-1]
        now_name = _version_name(self.store)
        if child.proc.returncode == UNCHANGED_EXIT and now_name == before:
            return None, line
        if child.proc.returncode == UNCHANGED_EXIT:  # a late child stopped after it wrote a version: that one
            line = "a refresh stopped late had written the new version"
        elif child.proc.returncode != 0:
            last = (err.strip().splitlines() or [f"exit status {child.proc.returncode}"])[-1]
            raise ResourceError(last)
        if now_name == before:  # a child that did not refresh is never a success
            raise ResourceError("the refresh child exited without writing a new version of the index")
        previous = served.index if isinstance(served.index, HistoryIndex) else None
        index = HistoryIndex.load(self.store, self.config, previous=previous)  # unchanged lines reused
        follow = getattr(index, "follow", None)
        if follow is not None:  # what the previous version read of the workspace carries over (re-checked)
            follow(served.index)
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
    """Refreshes ``holder`` from ``workspace`` in a daemon thread, on the schedule of
    ``serve.freshness`` (each refresh started ``lead`` before the served data is ``every`` old), with
    ``refresh(served, workspace[, late_at=...]) -> (next version or None when nothing changed, report
    line)`` (``refreshed`` or a ``ChildRefresh``).

    Each refresh first reads the workspace's change signature: the same as before the last read,
    nothing is run or published (``last_outcome`` ``unchanged``); a refresh that found nothing
    changed publishes nothing either. Either way ``freshness`` is confirmed as of the refresh's
    start. ``on_done(served, report, error)`` is called after each refresh (a log line): ``served``
    the version published, or None with ``error`` the one-line reason of a failure (the previous
    version kept), or None with no error when nothing changed. ``before_publish(served)`` prepares a
    new version before any call reads it (``startup.warm_scopes``); its failure is logged, the
    version is published all the same."""

    def __init__(self, holder: Holder, workspace: str | Path, every: float,
                 on_done: Callable[[Served | None, Any, str | None], None],
                 on_publish: Callable[[Served], None] | None = None,
                 refresh: Callable[..., tuple[Served | None, Any]] | None = None,
                 before_publish: Callable[[Served], None] | None = None,
                 freshness: Freshness | None = None, took: float = 0.0) -> None:
        self.holder, self.workspace, self.every = holder, Path(workspace), float(every)
        self.on_done, self.on_publish, self.before_publish = on_done, on_publish, before_publish
        self.refresh = refresh
        self.freshness = freshness if freshness is not None else Freshness(every)
        self.took = float(took)
        """How long the last refresh that read the workspace took (the schedule's lead follows it)."""
        self._retry_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="searchkit-refresh", daemon=True)
        self.last_ok: str | None = None
        self.last_error: str | None = None
        self.last_outcome: str | None = None
        """``published``, ``unchanged`` (read, nothing changed), ``unchanged_signature`` (not read)
        or ``failed``."""
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

    def refresh_now(self, late_at: float | None = None) -> Served | None:
        """One refresh, in the calling thread: the new version published, or None (kept: nothing
        changed, or the refresh failed). ``late_at``: when a child refresh still running is late."""
        self.running = True
        previous = self.holder.current
        try:
            mark = Mark.now(self.workspace)
            if self.freshness.unchanged(mark.signature):
                self._kept(mark, None, "unchanged_signature")
                return None
            if mark.signature is None:
                raise ResourceError("the workspace cannot be read")
            t0 = time.monotonic()
            fn = self.refresh or refreshed
            served, report = fn(previous, self.workspace) if late_at is None else fn(previous, self.workspace,
                                                                                     late_at=late_at)
            self.took = time.monotonic() - t0
        except Exception as exc:  # any failure keeps the previous version
            self.last_error, self.last_outcome = _one_line(exc), "failed"
            self._retry_at = time.monotonic() + min(self.every / 2, RETRY_S)
            self.on_done(None, None, self.last_error)
            return None
        finally:
            self.running = False
        if served is None:
            self._kept(mark, report, "unchanged")
            return None
        if self.before_publish is not None:
            try:
                self.before_publish(served)
            except Exception as exc:  # the new version is served whatever happens here
                log.warning("preparing version %d: %s", served.version, _one_line(exc))
        self.holder.publish(served)
        _retire(previous, served)
        if self.on_publish is not None:
            self.on_publish(served)
        self.freshness.confirm(mark)
        self.last_ok, self.last_error, self.last_outcome = served.built_at, None, "published"
        self.on_done(served, report, None)
        return served

    def _kept(self, mark: Mark, report: object, outcome: str) -> None:
        self.freshness.confirm(mark)
        self.last_ok, self.last_error, self.last_outcome = now_iso(), None, outcome
        self.on_done(None, report, None)

    def _loop(self) -> None:
        while True:
            start = next_start(self.freshness, self.took, self._retry_at, time.monotonic())
            if self._stop.wait(max(start - time.monotonic(), 0.0)):
                return
            self.refresh_now(late_at=late_at(self.freshness, time.monotonic()))


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

    def __init__(self, path: str | Path, config: SearchConfig) -> None:
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

    def engine(self, space: str | None) -> TaskEngine | None:
        """The task engine of ``space`` under the served config (None without a space). FTS5 alone
        (the seed's, the shipped config) is made for each call: ``TaskEngine`` reuses its Searcher
        while the store is unchanged (``task_engine.kept_alone``) and reads it again once imported
        into; the engines of the other configs are kept per thread until the next refresh."""
        if space is None:
            return None
        if list(self.config.tasks.retrievers) == ["fts5"]:
            return TaskEngine(self.connection(), space, self.config)
        local = self._local
        if getattr(local, "generation", None) != self._generation:
            local.engines, local.generation = {}, self._generation
        if space not in local.engines:
            local.engines[space] = TaskEngine(self.connection(), space, self.config)
        return local.engines[space]
