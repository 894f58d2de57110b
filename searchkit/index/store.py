"""Index folders on disk: versioned, switched atomically, readers isolated from writers.

An index folder (``searchkit index --out OUT``) holds complete versions side by side and a pointer
to the current one::

    OUT/
      searchkit-index.json   marker: this folder is a searchkit index (format, store version) and
                             the register of the versions this store wrote, each with its stamp
      CURRENT                name of the current version folder; replaced atomically
      v000007/               one complete index (manifest.json, config.json, records.jsonl, ...)
      .lock                  writers hold an exclusive lock on it while they write and prune

A writer registers the next version name in the marker, builds the version in ``.tmp-vNNNNNN``,
registers its stamp (the sha256 of its manifest, also kept in its ``.readers`` file), renames it to
``vNNNNNN`` and then replaces ``CURRENT``: a reader sees the old version or the new one, never a mixture, and a crash at
any point leaves the previous version current and loadable.

Deleted means erased (SPEC H3): a version other than the current one is removed as soon as no
reader holds it -- by the writer right after it publishes, or, when a reader was loading it then,
by that reader once it is done (or by the next writer). Readers hold a shared lock on a version's
``.readers`` file while they load it; a version is deleted only under an exclusive lock on that
file, so none disappears under a reader.

Only what the store wrote is ever deleted: a version folder that the marker registers and whose
``.readers`` stamp matches, and the ``.tmp-`` folder of a registered version. A folder that merely
looks like a version (``v000001`` put there by someone else) is never touched, and an ``--out``
that holds one is refused, as is an ``--out`` that is neither absent, an empty folder nor a
searchkit index. A writer writes only inside OUT. The marker of the first store format (no
register) is read too: its versions are the folders shaped as it wrote them (a ``.readers`` file
and a ``manifest.json``), and the next write registers them.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import hashlib
import shutil
import stat
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from searchkit.errors import DataError, InputError
from searchkit.util import (
    atomic_write_text,
    check_folder_target,
    make_folders_private,
    make_private,
    problem_of,
    read_json_file,
    read_regular_bytes,
    read_regular_text,
)

MARKER = "searchkit-index.json"
POINTER = "CURRENT"
LOCK = ".lock"
READERS = ".readers"
TMP_PREFIX = ".tmp-"
STORE_FORMAT = "searchkit.index-store"
STORE_VERSION = 2
"""2: the marker registers every version the store wrote, with its stamp (1: no register)."""
PENDING = "pending"
"""The register's stamp for a version being written (its folder is still ``.tmp-vNNNNNN``)."""
WRITER_WAIT_S = 600.0
SMALL_FILE = 1 << 20
"""The most bytes read of the marker, the pointer or a stamp (they are a few dozen)."""
_VERSION_RE = re.compile(r"^v(\d{6,})$")
_LEGACY_FILES = ("manifest.json", "config.json", "records.jsonl", "passages.jsonl", "workspace.json",
                 "indexing_report.json")
_LEGACY_DIRS = ("bm25", "dense")


def is_index(folder: str | os.PathLike[str]) -> bool:
    """True when ``folder`` holds a searchkit index (this layout, or the flat one before it).

    A marker that is not a searchkit marker (not JSON, another format) does not make an index."""
    folder = Path(folder)
    try:
        return _read_marker(folder) is not None or _is_legacy(folder)
    except DataError:  # only the marker's (_read_marker raises no other)
        return False


def _is_legacy(folder: Path) -> bool:
    manifest = folder / "manifest.json"
    if not (_lkind(manifest) == "file" and _lkind(folder / "config.json") == "file"):
        return False
    try:
        data = read_json_file(manifest, limit=SMALL_FILE)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "index_fingerprint" in data


def _lkind(path: Path) -> str:
    """``missing`` | ``link`` | ``dir`` | ``file`` | ``other``, never following a link."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


# -- the marker and its register ------------------------------------------------------------------

def _read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker's content (None when there is none); DataError when the file is there but
    is not a searchkit marker (a link, not JSON, another format)."""
    path = folder / MARKER
    kind = _lkind(path)
    if kind == "missing":
        return None
    if kind != "file":
        raise DataError(f"{path}: not a regular file, so not a searchkit index marker")
    try:
        data = read_json_file(path, limit=SMALL_FILE)
    except FileNotFoundError:
        return None
    except (OSError, DataError) as exc:  # DataError: not UTF-8, not JSON, too large
        raise DataError(f"{path}: not a searchkit index marker ({problem_of(exc) if isinstance(exc, DataError) else exc.strerror})") from None
    if not isinstance(data, dict) or data.get("format") != STORE_FORMAT:
        raise DataError(f"{path}: not a searchkit index marker (format is not {STORE_FORMAT!r})")
    return data


def _register(folder: Path, marker: dict[str, Any] | None) -> dict[str, str]:
    """The versions this store wrote: name -> stamp (the content of the version's ``.readers``).

    A marker of store version 2 lists them. One of store version 1 (or none: a folder in the flat
    layout, or a first write) lists nothing; its versions are the folders shaped as that store
    wrote them (a real folder holding a ``.readers`` file and a ``manifest.json``)."""
    if marker is not None and "versions" in marker:
        listed = marker["versions"]
        if not isinstance(listed, dict) or not all(
            isinstance(k, str) and _VERSION_RE.match(k) and isinstance(v, str) for k, v in listed.items()
        ):
            raise DataError(f"{folder / MARKER}: its register of versions is damaged; the index cannot be written")
        return dict(listed)
    adopted: dict[str, str] = {}
    if marker is None:
        return adopted
    for entry in _entries(folder):
        path = folder / entry
        if _VERSION_RE.match(entry) and _lkind(path) == "dir" and _lkind(path / "manifest.json") == "file":
            stamp = _stamp(path)
            if stamp is not None:
                adopted[entry] = stamp
    return adopted


def _write_marker(folder: Path, register: dict[str, str]) -> None:
    marker = {"format": STORE_FORMAT, "store_version": STORE_VERSION, "versions": dict(sorted(register.items()))}
    atomic_write_text(folder / MARKER, json.dumps(marker, indent=1) + "\n")
    os.chmod(folder / MARKER, 0o600)


def _stamp(version: Path) -> str | None:
    """The stamp in a version's ``.readers`` file; None when it is not a regular file (or unreadable)."""
    path = version / READERS
    if _lkind(path) != "file":
        return None
    try:
        return read_regular_text(path, limit=SMALL_FILE)
    except (OSError, ValueError):
        return None


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(folder))
    except OSError as exc:
        raise DataError(f"{folder}: cannot be read ({exc.strerror})") from None


def _foreign_versions(folder: Path, register: dict[str, str]) -> list[str]:
    """Entries named like a version that this store did not write."""
    return [name for name in _entries(folder) if _VERSION_RE.match(name) and name not in register]


# -- the target of a write ------------------------------------------------------------------------

def check_target(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Refuse an ``--out`` that is not safe to write; return it resolved.

    Safe: absent (its parent may be created), an empty folder, or a searchkit index that holds no
    folder named like a version that it did not write. Refused: a file or anything that is not a
    folder, a folder holding anything else, a folder whose marker is not a searchkit marker, an
    index beside someone's ``v000001`` (the store would never delete it, but it would shadow the
    store's own numbering), the input itself, a folder inside an input, or a folder an input lies
    inside.
    """
    path = Path(out).expanduser()
    try:  # what the path is, before anything resolves it (a link loop is one line, never a traceback)
        exists = check_folder_target(path, "--out")
    except InputError as exc:  # check_folder_target's refusal, a DataError here
        raise DataError(str(exc)) from None
    resolved = path.resolve()
    for given in inputs:
        try:
            src = Path(given).expanduser().resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python before 3.13)
            raise DataError(f"the input {str(given)!r} cannot be resolved (a symbolic link loop?); "
                                  "give its real path") from None
        if resolved == src or src in resolved.parents:
            raise DataError(f"--out {str(path)!r} is inside the input {str(given)!r}; write the index elsewhere")
        if resolved in src.parents:
            raise DataError(f"--out {str(path)!r} holds the input {str(given)!r}; write the index elsewhere")
    if not exists:
        return resolved
    try:
        marker = _read_marker(path)
    except DataError:
        raise DataError(
            f"--out {str(path)!r} holds a {MARKER} that is not a searchkit index marker; give an empty or new folder"
        ) from None
    if marker is not None:
        foreign = _foreign_versions(path, _register(path, marker))
        if foreign:
            raise DataError(
                f"--out {str(path)!r} holds {foreign[0]!r}, a folder this index did not write, beside the index; "
                "move it out or give another folder (nothing was changed)"
            )
        return resolved
    if _is_legacy(path):
        return resolved
    foreign = [name for name in _entries(path) if not _ours(name)]
    if foreign:
        raise DataError(
            f"--out {str(path)!r} is a folder that holds other files, not a searchkit index; "
            "give an empty or new folder"
        )
    return resolved


def _ours(name: str) -> bool:
    """What a writer of ours may leave in a folder before its first version is published (a
    writer killed then leaves only these): the lock and temporary folders."""
    return name == LOCK or name.startswith(TMP_PREFIX)


# -- reading --------------------------------------------------------------------------------------

def current_dir(folder: str | os.PathLike[str]) -> Path:
    """The folder of the current version (without taking a lock: for tests and tools)."""
    folder = Path(folder)
    name = _read_pointer(folder)
    if name is None:
        if _is_legacy(folder):
            return folder
        raise DataError(f"{folder} is not a searchkit index (no {POINTER}); build one with `searchkit index`", reason="no_index")
    return folder / name


def _read_pointer(folder: Path) -> str | None:
    path = folder / POINTER
    try:
        name = read_regular_text(path, limit=SMALL_FILE).strip()
    except FileNotFoundError:
        return None
    except (OSError, DataError) as exc:  # DataError: not UTF-8, too large
        raise DataError(f"{path}: unreadable ({problem_of(exc) if isinstance(exc, DataError) else exc.strerror})") from None
    if not _VERSION_RE.match(name):
        raise DataError(f"{path}: does not name a version folder; the index is damaged")
    return name


_LOCK_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_readers(version: Path) -> int:
    """A descriptor on a version's ``.readers`` file (never blocking on a FIFO, never through a
    link); FileNotFoundError when it is gone; DataError when it is not a regular file."""
    try:
        fd = os.open(version / READERS, _LOCK_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(str(version / READERS)) from None
        raise DataError(f"{version / READERS}: cannot be opened ({exc.strerror}); the index is damaged") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DataError(f"{version / READERS}: not a regular file; the index is damaged")
    return fd


@contextlib.contextmanager
def reading(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield the current version's folder, locked against deletion while the caller loads it.

    Once the caller is done, versions that are no longer current and that no other reader holds
    are removed (when no writer is at work: it removes them itself), so an old version never
    outlives its last reader by more than that reader's load (SPEC H3).

    Raises DataError when ``folder`` holds no index (reason ``no_index``) or when it is damaged.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"{folder} is not a searchkit index (no such folder); build one with `searchkit index`", reason="no_index")
    missing_twice = None
    for _ in range(50):
        name = _read_pointer(folder)
        if name is None:
            if _is_legacy(folder):
                yield folder
                return
            raise DataError(f"{folder} is not a searchkit index (no {POINTER}); build one with `searchkit index`", reason="no_index")
        version = folder / name
        if _lkind(version) not in ("dir", "missing"):
            raise DataError(f"{folder}: {POINTER} names {name}, which is not a folder; the index is damaged")
        try:
            fd = _open_readers(version)
        except FileNotFoundError:
            if missing_twice == name:
                # the pointer stayed on a version that is not there: damage, not a writer at work
                raise DataError(
                    f"{folder}: {POINTER} names {name}, which is missing or incomplete; the index is damaged, rebuild it"
                ) from None
            missing_twice = name
            time.sleep(0.05)  # pruned between reading the pointer and opening it: read the pointer again
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            manifest = _lkind(version / "manifest.json")
            if manifest == "missing":
                continue  # deleted while we waited for the lock
            if manifest != "file":
                raise DataError(f"{version / 'manifest.json'}: not a regular file; the index is damaged, rebuild it")
            yield version
        finally:
            os.close(fd)
        tidy(folder)
        return
    raise DataError(f"{folder}: the current version kept changing while it was being opened; try again")


def tidy(folder: str | os.PathLike[str]) -> int:
    """Remove the versions of ``folder`` that are not current and that no reader holds, when no
    writer is at work (it would do it itself); return how many were removed. Never raises: a
    reader that cannot tidy (no write permission, a writer at work) leaves it to the next writer."""
    folder = Path(folder)
    try:
        fd = os.open(folder / LOCK, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 0
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        marker = _read_marker(folder)
        if marker is None or "versions" not in marker:
            return 0  # nothing registered: the next writer registers and prunes
        register = _register(folder, marker)
        before = dict(register)
        removed = _prune(folder, register, keep={_read_pointer(folder)})
        if register != before:
            _write_marker(folder, register)
        return removed
    except (OSError, DataError):
        return 0
    finally:
        os.close(fd)


# -- writing --------------------------------------------------------------------------------------

def write_version(
    folder: str | os.PathLike[str], fill: Callable[[Path], None], *, wait_s: float = WRITER_WAIT_S
) -> Path:
    """Write a new version of the index at ``folder`` and make it current; return its folder.

    ``fill(tmp)`` writes the index files into an empty private folder. On any exception the
    temporary folder is removed and the current version stays as it was. Every other version
    is removed once no reader holds it (SPEC H3: the text of what was deleted from the source
    leaves every file of the index).
    """
    folder = Path(folder)
    check_target(folder)
    created = not folder.exists()
    make_folders_private(folder)  # it and its missing parents 0700 whatever the umask (issue 39 item 8)
    try:
        return _write_locked(folder, fill, wait_s)
    except BaseException:
        if created and not _read_pointer(folder):
            shutil.rmtree(folder, ignore_errors=True)  # nothing half-written where nothing was
        raise


def _write_locked(folder: Path, fill: Callable[[Path], None], wait_s: float) -> Path:
    with _writer_lock(folder, wait_s):
        marker = _read_marker(folder)
        legacy_flat = marker is None and _is_legacy(folder)
        register = _register(folder, marker)
        foreign = _foreign_versions(folder, register)
        if foreign:  # put there after check_target looked
            raise DataError(f"{folder}: holds {foreign[0]!r}, a folder this index did not write; "
                                  "move it out or give another folder (nothing was changed)")
        name = f"v{_next_number(folder, register):06d}"  # numbers never go back, even past a dead writer's
        _prune(folder, register, keep={_read_pointer(folder)})  # what a writer that died left
        register[name] = PENDING
        _write_marker(folder, register)  # registered before anything is written under its name
        tmp = folder / f"{TMP_PREFIX}{name}"
        try:
            tmp.mkdir(mode=0o700)
            (tmp / READERS).write_text("", encoding="utf-8")
            fill(tmp)
            register[name] = _content_stamp(tmp)
            (tmp / READERS).write_text(register[name], encoding="utf-8")
            make_private(tmp)
            _fsync_tree(tmp)
            _write_marker(folder, register)  # the stamp, before the version appears under its name
            os.rename(tmp, folder / name)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            register.pop(name, None)
            with contextlib.suppress(OSError):
                _write_marker(folder, register)
            raise
        atomic_write_text(folder / POINTER, name + "\n")
        _fsync_dir(folder)
        _prune(folder, register, keep={name})
        _write_marker(folder, register)
        if legacy_flat:
            _remove_flat_layout(folder)
        os.chmod(folder, 0o700)
        for own in (MARKER, POINTER, LOCK):  # ours only: never the mode of a file someone else put here
            with contextlib.suppress(FileNotFoundError):
                os.chmod(folder / own, 0o600)
    return folder / name


@contextlib.contextmanager
def _writer_lock(folder: Path, wait_s: float) -> Iterator[None]:
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    raise DataError(f"{folder}: another process is writing this index; try again later") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def _content_stamp(version: Path) -> str:
    """A version's stamp: the sha256 of its ``manifest.json`` (or of its file names and sizes when
    it has none), so two builds of the same index are byte-identical, marker included, and a
    folder someone else put under the version's name does not carry it."""
    manifest = version / "manifest.json"
    h = hashlib.sha256()
    if _lkind(manifest) == "file":
        h.update(read_regular_bytes(manifest))
    else:
        for path in sorted(version.rglob("*")):
            if path.name != READERS:
                h.update(f"{path.relative_to(version).as_posix()}\0{path.lstat().st_size}\0".encode())
    return h.hexdigest()


def _next_number(folder: Path, register: dict[str, str]) -> int:
    """One more than any version number registered or present (a version or its temporary)."""
    names = set(register) | {n.removeprefix(TMP_PREFIX) for n in _entries(folder)}
    numbers = [int(m.group(1)) for n in names if (m := _VERSION_RE.match(n))]
    return max(numbers, default=0) + 1


def _prune(folder: Path, register: dict[str, str], keep: set[str | None]) -> int:
    """Delete the registered versions other than ``keep`` that no reader holds, and the temporary
    folders of registered versions (we hold the writer lock: none is being written); drop from
    ``register`` what is gone. A folder whose stamp is not the registered one is not ours (any
    more): it is never touched, only dropped from the register. Returns the versions deleted."""
    removed = 0
    for name, stamp in sorted(register.items()):
        if name in keep:
            continue
        tmp = folder / f"{TMP_PREFIX}{name}"
        if _lkind(tmp) == "dir":
            shutil.rmtree(tmp, ignore_errors=True)  # a writer died while writing it
        if stamp == PENDING:  # it died before naming it: whatever has that name now is not ours
            register.pop(name)
            continue
        path = folder / name
        kind = _lkind(path)
        if kind == "missing":
            register.pop(name)
            continue
        if kind != "dir" or _stamp(path) != stamp:
            register.pop(name)
            continue
        if _remove_unread(path):
            removed += 1
            register.pop(name)
    return removed


def _remove_unread(version: Path) -> bool:
    """Delete a version folder unless a reader holds it; True when it is gone."""
    try:
        fd = _open_readers(version)
    except (FileNotFoundError, DataError):
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a reader is loading it: it (or the next writer) removes it afterwards
        shutil.rmtree(version, ignore_errors=True)
    finally:
        os.close(fd)
    return not version.exists()


def _remove_flat_layout(folder: Path) -> None:
    """The files of the layout before versions, once the first version has replaced them."""
    for name in _LEGACY_FILES:
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
    for name in _LEGACY_DIRS:
        if _lkind(folder / name) == "dir":
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
