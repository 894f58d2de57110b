"""Small helpers shared across modules: atomic writes, private folders, ISO times."""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def make_private(folder: Path, *, recursive: bool = True) -> None:
    """Restrict ``folder`` and everything below it to the owner: folders 0700, files 0600
    (with ``recursive=False``: the folder and the files directly in it).

    Index folders hold the text of people's chats (personal ones included), so nobody but the
    user who built an index may read it (SPEC H15)."""
    folder = Path(folder)
    os.chmod(folder, 0o700)
    if not recursive:
        for entry in os.scandir(folder):
            if entry.is_file(follow_symlinks=False):
                os.chmod(entry.path, 0o600)
        return
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o700)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o600)


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; on success it replaces ``target`` whole.

    On any exception the temporary folder is removed and ``target`` is left as it was, so a
    crash never leaves a half-written folder under the target name.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
        old.rmdir()
        os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def parse_iso(value: str) -> _dt.date | _dt.datetime | None:
    """The one ISO 8601 reader: ``YYYY-MM-DD`` gives a date, a date-time (``Z`` or an offset
    allowed, or none) a datetime; anything else None."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        if len(value) == 10:
            return _dt.date.fromisoformat(value)
        return _dt.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        return None


def aware(value: str | _dt.date | _dt.datetime | None) -> _dt.datetime | None:
    """An ISO date or date-time as an aware datetime: a date is its midnight, a time without an
    offset is UTC; None when ``value`` is not ISO."""
    v = parse_iso(value) if isinstance(value, str) else value
    if v is None:
        return None
    if not isinstance(v, _dt.datetime):
        return _dt.datetime(v.year, v.month, v.day, tzinfo=_dt.timezone.utc)
    return v if v.tzinfo is not None else v.replace(tzinfo=_dt.timezone.utc)
