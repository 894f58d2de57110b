"""Index folders on disk: versioned, switched atomically, readers isolated from writers.

An index folder (``searchkit index --out OUT``) holds complete versions side by side and a pointer
to the current one::

    OUT/
      searchkit-index.json   marker: this folder is a searchkit index (format, store version)
      CURRENT                name of the current version folder; replaced atomically
      v000007/               one complete index (manifest.json, config.json, records.jsonl, ...)
      .lock                  writers hold an exclusive lock on it while they write and prune

A writer builds the new version in a temporary folder (``.tmp-*``), renames it to the next
``vNNNNNN`` and then replaces ``CURRENT``: a reader sees the old version or the new one, never a
mixture, and a crash at any point leaves the previous version current and loadable. Readers hold
a shared lock on a version's ``.readers`` file while they load it; a writer deletes an old version
(keeping the current and the previous one) only when it can lock that file exclusively, so no
version disappears under a reader. Temporary folders of crashed writers are removed by the next
writer. A writer writes only inside OUT, and OUT must be absent, an empty folder or a searchkit
index: anything else is refused, naming the path.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

from searchkit.errors import SearchkitError
from searchkit.util import atomic_write_text, make_private

MARKER = "searchkit-index.json"
POINTER = "CURRENT"
LOCK = ".lock"
READERS = ".readers"
STORE_FORMAT = "searchkit.index-store"
STORE_VERSION = 1
KEEP = 2
"""Versions kept after a write: the new current one and the one before it."""
WRITER_WAIT_S = 600.0
_VERSION_RE = re.compile(r"^v(\d{6,})$")
_LEGACY_FILES = ("manifest.json", "config.json", "records.jsonl", "passages.jsonl", "workspace.json",
                 "indexing_report.json")
_LEGACY_DIRS = ("bm25", "dense")


class IndexStoreError(SearchkitError, ValueError):
    """An index folder that cannot be used as asked: the message names the path and why."""


class IndexNotFoundError(SearchkitError, FileNotFoundError):
    """No searchkit index where one was asked for."""


def is_index(folder: str | os.PathLike[str]) -> bool:
    """True when ``folder`` holds a searchkit index (this layout, or the flat one before it)."""
    folder = Path(folder)
    return (folder / MARKER).is_file() or _is_legacy(folder)


def _is_legacy(folder: Path) -> bool:
    manifest = folder / "manifest.json"
    if not (manifest.is_file() and (folder / "config.json").is_file()):
        return False
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "index_fingerprint" in data


def check_target(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Refuse an ``--out`` that is not safe to write; return it resolved.

    Safe: absent (its parent may be created), an empty folder, or a searchkit index. Refused: a
    file or anything that is not a folder, a folder holding anything else, the input itself, a
    folder inside an input, or a folder an input lies inside.
    """
    path = Path(out).expanduser()
    resolved = path.resolve()
    for given in inputs:
        src = Path(given).expanduser().resolve()
        if resolved == src or src in resolved.parents:
            raise IndexStoreError(f"--out {str(path)!r} is inside the input {str(given)!r}; write the index elsewhere")
        if resolved in src.parents:
            raise IndexStoreError(f"--out {str(path)!r} holds the input {str(given)!r}; write the index elsewhere")
    if path.is_symlink():
        raise IndexStoreError(f"--out {str(path)!r} is a symbolic link; give a real folder")
    if not path.exists():
        return resolved
    if not path.is_dir():
        raise IndexStoreError(f"--out {str(path)!r} exists and is not a folder; refusing to replace it")
    if is_index(path):
        return resolved
    try:
        foreign = [e.name for e in os.scandir(path) if not _ours(e.name)]
    except OSError as exc:
        raise IndexStoreError(f"--out {str(path)!r} cannot be read: {exc.strerror}") from None
    if foreign:
        raise IndexStoreError(
            f"--out {str(path)!r} is a folder that holds other files, not a searchkit index; "
            "give an empty or new folder"
        )
    return resolved


def _ours(name: str) -> bool:
    """What a writer of ours leaves in a folder before its first version is published (a
    writer killed then leaves only these): the lock and temporary folders."""
    return name == LOCK or name.startswith(".tmp-")


def current_dir(folder: str | os.PathLike[str]) -> Path:
    """The folder of the current version (without taking a lock: for tests and tools)."""
    folder = Path(folder)
    name = _read_pointer(folder)
    if name is None:
        if _is_legacy(folder):
            return folder
        raise IndexNotFoundError(f"{folder} is not a searchkit index (no {POINTER}); build one with `searchkit index`")
    return folder / name


def _read_pointer(folder: Path) -> str | None:
    try:
        name = (folder / POINTER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexStoreError(f"{folder / POINTER}: unreadable ({exc})") from None
    if not _VERSION_RE.match(name):
        raise IndexStoreError(f"{folder / POINTER}: names {name[:40]!r}, not a version folder; the index is damaged")
    return name


@contextlib.contextmanager
def reading(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield the current version's folder, locked against deletion while the caller loads it.

    Raises FileNotFoundError when ``folder`` holds no index, IndexStoreError when it is damaged.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise IndexNotFoundError(f"{folder} is not a searchkit index (no such folder); build one with `searchkit index`")
    missing_twice = None
    for _ in range(50):
        name = _read_pointer(folder)
        if name is None:
            if _is_legacy(folder):
                yield folder
                return
            raise IndexNotFoundError(f"{folder} is not a searchkit index (no {POINTER}); build one with `searchkit index`")
        version = folder / name
        try:
            fd = os.open(version / READERS, os.O_RDONLY)
        except FileNotFoundError:
            if missing_twice == name:
                # the pointer stayed on a version that is not there: damage, not a writer at work
                raise IndexStoreError(
                    f"{folder}: {POINTER} names {name}, which is missing or incomplete; the index is damaged, rebuild it"
                ) from None
            missing_twice = name
            time.sleep(0.05)  # pruned between reading the pointer and opening it: read the pointer again
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if not (version / "manifest.json").is_file():
                continue  # deleted while we waited for the lock
            yield version
            return
        finally:
            os.close(fd)
    raise IndexStoreError(f"{folder}: the current version kept changing while it was being opened; try again")


def write_version(
    folder: str | os.PathLike[str], fill: Callable[[Path], None], *, wait_s: float = WRITER_WAIT_S
) -> Path:
    """Write a new version of the index at ``folder`` and make it current; return its folder.

    ``fill(tmp)`` writes the index files into an empty private folder. On any exception the
    temporary folder is removed and the current version stays as it was.
    """
    folder = Path(folder)
    check_target(folder)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return _write_locked(folder, fill, wait_s)
    except BaseException:
        if created and not _read_pointer(folder):
            shutil.rmtree(folder, ignore_errors=True)  # nothing half-written where nothing was
        raise


def _write_locked(folder: Path, fill: Callable[[Path], None], wait_s: float) -> Path:
    with _writer_lock(folder, wait_s):
        _remove_stale_temporaries(folder)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder))
        try:
            fill(tmp)
            (tmp / READERS).touch()
            make_private(tmp)
            _fsync_tree(tmp)
            name = f"v{_next_number(folder):06d}"
            os.rename(tmp, folder / name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        previous = _read_pointer(folder)
        if not (folder / MARKER).is_file():
            marker = {"format": STORE_FORMAT, "store_version": STORE_VERSION}
            atomic_write_text(folder / MARKER, json.dumps(marker) + "\n")
        atomic_write_text(folder / POINTER, name + "\n")
        _fsync_dir(folder)
        _prune(folder, keep={name, previous})
        os.chmod(folder, 0o700)
        for own in (MARKER, POINTER, LOCK):  # ours only: never the mode of a file someone else put here
            with contextlib.suppress(FileNotFoundError):
                os.chmod(folder / own, 0o600)
    return folder / name


@contextlib.contextmanager
def _writer_lock(folder: Path, wait_s: float) -> Iterator[None]:
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    raise IndexStoreError(f"{folder}: another process is writing this index; try again later") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def _next_number(folder: Path) -> int:
    numbers = [int(m.group(1)) for p in folder.iterdir() if (m := _VERSION_RE.match(p.name))]
    return max(numbers, default=0) + 1


def _remove_stale_temporaries(folder: Path) -> None:
    """Temporary folders of writers that died (we hold the writer lock: none is being written)."""
    for p in folder.iterdir():
        if p.name.startswith(".tmp-") and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)


def _prune(folder: Path, keep: set[str | None]) -> None:
    """Delete versions other than ``keep`` that no reader holds; then the flat files of the
    layout before versions, if this folder had them."""
    for p in sorted(folder.iterdir()):
        if not _VERSION_RE.match(p.name) or p.name in keep or p.is_symlink() or not p.is_dir():
            continue
        try:
            fd = os.open(p / READERS, os.O_RDONLY)
        except FileNotFoundError:
            shutil.rmtree(p, ignore_errors=True)  # never published completely
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a reader is loading it: the next writer prunes it
            shutil.rmtree(p, ignore_errors=True)
        finally:
            os.close(fd)
    if (folder / "manifest.json").is_file():
        for name in _LEGACY_FILES:
            with contextlib.suppress(FileNotFoundError):
                (folder / name).unlink()
        for name in _LEGACY_DIRS:
            if (folder / name).is_dir() and not (folder / name).is_symlink():
                shutil.rmtree(folder / name, ignore_errors=True)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
