"""How fresh the served answers are, and when the next refresh runs (issue 41 items 1-3; SPEC H3).

**Fresh as of.** The answers reflect the workspace as it was when the read that produced (or
confirmed) the served version *began*: the build at start, the update at start of an index built
earlier, or the last refresh, whether it published a new version or found nothing changed. Text
erased before that moment is gone from the answers; ``Freshness.age`` is how long ago it was.

**The change signature.** ``workspace_signature`` is a sha256 over every entry under the workspace
(``lstat``: no link is followed, as the loaders follow none): its path, type, device, inode, size,
modification and status-change times (``ctime`` is set by the kernel on any write, rename or
``chmod``: a file rewritten and given its old ``mtime`` back still changes it), and the error of a
folder that cannot be listed. A refresh first compares it with the signature read before the last
successful read: equal, nothing under the workspace changed, so nothing is read and nothing is
published; the answers are known fresh as of this check.

**The schedule.** H3's bound is ``every`` (``--refresh-every``): a version must be replaced, or
confirmed, before its data is ``every`` old (the *deadline*). A refresh starts ``lead`` before the
deadline: four times the last full refresh's duration, at least ``LEAD_MIN_S``, at most half the
bound. It starts at the lowest CPU priority; if it is still running once half the time left to the
deadline has passed (it is *late*: the calls took the cores), it is started again at normal
priority (``ChildRefresh``: an unprivileged process cannot leave ``SCHED_IDLE`` or lower its nice
value again, so the idle child is stopped and a normal one started; the embedding cache keeps
what the first one embedded). With under ``IDLE_MIN_S`` left, it runs at normal priority from the
start. After a failure the next try waits ``min(every / 2, RETRY_S)``.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

LEAD_FACTOR = 4.0
LEAD_MIN_S = 60.0
IDLE_MIN_S = 5.0
RETRY_S = 60.0
STALE_FACTOR = 1.1
"""Readiness: the data is stale (``index_stale``) once older than this many bounds."""
MAX_ENTRIES = 2_000_000
"""A workspace with more entries has no signature (every refresh reads it)."""


def workspace_signature(root: str | os.PathLike[str]) -> str | None:
    """The change signature of everything under ``root`` (see the module's docstring); None when
    ``root`` itself cannot be listed (or holds over ``MAX_ENTRIES`` entries)."""
    h = hashlib.sha256()
    try:
        top = os.stat(root)
        if not stat.S_ISDIR(top.st_mode):
            return None
        h.update(repr((top.st_dev, top.st_ino, top.st_mtime_ns, top.st_ctime_ns)).encode())
        pending = [(os.fspath(root), "")]
        seen = 0
        first = True
        while pending:
            path, rel = pending.pop()
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError as exc:
                if first:
                    return None
                h.update(repr(("unlistable", rel, exc.errno)).encode())
                continue
            first = False
            for e in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    return None
                name = f"{rel}/{e.name}"
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError as exc:
                    h.update(repr(("unstatable", name, exc.errno)).encode("utf-8", "surrogateescape"))
                    continue
                h.update(repr((name, stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                               st.st_ctime_ns)).encode("utf-8", "surrogateescape"))
                if stat.S_ISDIR(st.st_mode):
                    pending.append((e.path, name))
    except OSError:
        return None
    return h.hexdigest()


def iso(wall: float | None) -> str | None:
    """A wall-clock time as ISO 8601 (UTC, seconds)."""
    if wall is None:
        return None
    return _dt.datetime.fromtimestamp(wall, _dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Mark:
    """When a read of the workspace began (wall clock and monotonic) and its signature then."""

    wall: float
    mono: float
    signature: str | None

    @classmethod
    def now(cls, workspace: str | os.PathLike[str] | None) -> "Mark":
        wall, mono = time.time(), time.monotonic()
        return cls(wall, mono, None if workspace is None else workspace_signature(Path(workspace)))


class Freshness:
    """The last ``Mark`` the served answers are known to match; ``every`` is H3's bound."""

    def __init__(self, every: float, mark: Mark | None = None) -> None:
        self.every = float(every)
        self._lock = threading.Lock()
        self._mark = mark

    @property
    def mark(self) -> Mark | None:
        return self._mark

    def confirm(self, mark: Mark) -> None:
        """The answers now match the workspace as of ``mark`` (never moves back)."""
        with self._lock:
            if self._mark is None or mark.mono >= self._mark.mono:
                self._mark = mark

    def unchanged(self, signature: str | None) -> bool:
        """Whether ``signature`` says nothing changed since the last confirmed read."""
        m = self._mark
        return signature is not None and m is not None and m.signature == signature

    def age(self, now: float | None = None) -> float | None:
        """Seconds since the answers were last known fresh (None: never)."""
        m = self._mark
        return None if m is None else (time.monotonic() if now is None else now) - m.mono

    def stale(self, now: float | None = None) -> bool:
        age = self.age(now)
        return age is None or age > self.every * STALE_FACTOR

    def deadline(self) -> float | None:
        """The monotonic time the answers become ``every`` old."""
        m = self._mark
        return None if m is None else m.mono + self.every

    def fresh_as_of(self) -> str | None:
        m = self._mark
        return None if m is None else iso(m.wall)


def lead(every: float, took: float) -> float:
    """How long before the deadline a refresh starts (see the module's docstring)."""
    return min(max(LEAD_FACTOR * took, LEAD_MIN_S), every / 2)


def next_start(freshness: Freshness, took: float, retry_at: float, now: float) -> float:
    """The monotonic time the next refresh starts."""
    deadline = freshness.deadline()
    if deadline is None:
        return max(now, retry_at)
    return max(deadline - lead(freshness.every, took), retry_at)


def late_at(freshness: Freshness, start: float) -> float:
    """When a refresh started at ``start`` is late: half the time left to its deadline; ``start``
    itself (normal priority at once) when that is under ``IDLE_MIN_S`` or there is no deadline."""
    deadline = freshness.deadline()
    if deadline is None:
        return start
    half = (deadline - start) / 2
    return start + half if half >= IDLE_MIN_S else start
