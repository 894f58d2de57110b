"""The server's state folder (issue 30; issue 39 items 7 and 8): a new owner-only folder, inside
``--state-dir`` or the system's temporary folder, holding the server's private copy of the index
for the refresh child (every personal chat's text). It leaves with the server; one a server that
was killed left behind is removed by the next server started with the same ``--state-dir``
(``remove_stale``), recognised by its marker (``OWNER``: the process that made it, no longer running)."""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "searchkit-serve-"


def problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot hold state folders (None: it can): an existing folder this user may
    write in. ``stat`` and ``access`` only."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return f"{str(p)[:200]}: no such folder"
    except OSError as exc:
        return f"{str(p)[:200]}: cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{str(p)[:200]}: not a folder"
    if not os.access(p, os.W_OK | os.X_OK):
        return f"{str(p)[:200]}: this user cannot write in it"
    return None


OWNER = "searchkit-serve.owner"
"""The marker a state folder holds: which server process made it (``make``)."""
FORMAT = "searchkit.serve-state"


def make(parent: str | os.PathLike[str] | None) -> Path:
    """A new owner-only state folder in ``parent`` (None: the system's temporary folder), marked with
    this process's id and start time before anything else is put in it."""
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))  # 0700
    mark = {"format": FORMAT, "pid": os.getpid(), "started": process_start(os.getpid())}
    fd = os.open(folder / OWNER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(mark, f)
    return folder


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, as the kernel counts it (Linux: clock ticks since boot), to tell
    it from a later process given the same id; None where that cannot be read."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            data = f.read(4096)
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # after the name, which may hold spaces: field 3 on
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else None


def alive(pid: int, started: str | None) -> bool:
    """Whether the process that wrote a marker (``pid``, ``started``) still runs: in doubt, yes."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    now = process_start(pid)
    if started is not None and now is not None and now != started:
        return False  # the id was given to another process since
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:  # a zombie waiting for its parent is gone
            data = f.read(4096)
        return data[data.rfind(b")") + 2:][:1] != b"Z"
    except OSError:
        return True


def remove_stale(parent: str | os.PathLike[str] | None) -> int:
    """Remove the state folders in ``parent`` (None: the system's temporary folder) that servers now
    gone left behind (a ``kill -9``, a power cut): only a folder of this user named ``PREFIX...``,
    not a link, holding this user's regular ``OWNER`` marker of the right format whose process is no
    longer running (``alive``). Nothing else is read or removed. Returns how many were removed."""
    where = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(where))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue
            mark = _read_marker(Path(entry.path) / OWNER)
        except OSError:
            continue
        if mark is None or alive(mark[0], mark[1]):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += not os.path.lexists(entry.path)
    return removed


def _read_marker(path: Path) -> tuple[int, str | None] | None:
    """(pid, start) of a state folder's marker; None when it is not one of ours."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > 4096:
            return None
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        mark = json.loads(data)
    except ValueError:
        return None
    if not isinstance(mark, dict) or mark.get("format") != FORMAT:
        return None
    pid, started = mark.get("pid"), mark.get("started")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 1:
        return None
    return pid, started if isinstance(started, str) else None
