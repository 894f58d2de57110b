"""Small helpers shared across modules: atomic writes, private folders, ISO times, reading regular
files only (never a FIFO or device) with errors that name the file, never its content."""
from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from searchkit.errors import DataError, InputError


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename."""
    path = Path(path)
    make_folders_private(path.parent)
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


def make_folders_private(folder: Path) -> None:
    """Create ``folder`` and its missing parents ``0700`` whatever the umask (those that exist keep
    their mode): a file written owner-only into a folder anyone may write could be swapped for
    another (issue 27 item 1)."""
    folder = Path(folder)
    for p in reversed([folder, *folder.parents]):
        if p.exists():
            continue
        try:
            p.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(p, 0o700)


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
    make_folders_private(target.parent)  # owner-only whatever the umask (issue 39 item 8)
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


def dotted_leaves(obj: object, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as ``{"a.b.c": leaf}``, keys sorted at every level (a config's JSON as the
    dotted keys its diffs and MLflow params name)."""
    if isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        for k in sorted(obj):
            out.update(dotted_leaves(obj[k], f"{prefix}{k}."))
        return out
    return {prefix[:-1]: obj}


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


def file_problem(path: str | os.PathLike[str], problem: str) -> DataError:
    """The error for a file that cannot be read as asked (not a regular file, too large, not UTF-8,
    not JSON): a ``DataError`` whose message is ``PATH: PROBLEM`` and whose ``path`` is ``path``,
    never quoting the file's content (issue 27, item 8); :func:`problem_of` gives the problem back."""
    return DataError(f"{os.fspath(path)}: {problem}", path=path)


def problem_of(exc: BaseException) -> str:
    """What is wrong, without the path: a ``DataError``'s message after its ``PATH: ``, an
    ``OSError``'s ``strerror`` (else its type's name)."""
    if isinstance(exc, DataError):
        text, prefix = str(exc), f"{exc.path}: "
        return text[len(prefix):] if exc.path is not None and text.startswith(prefix) else text
    return getattr(exc, "strerror", None) or type(exc).__name__


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def open_regular(path: str | os.PathLike[str], mode: str = "r", *, encoding: str | None = "utf-8",
                 errors: str | None = None):
    """Open a regular file for reading, never a FIFO, socket or device (no hang on a pipe: the
    descriptor is opened non-blocking, checked with ``fstat`` and only then read). ``mode`` is
    ``"r"`` (text, ``encoding``) or ``"rb"``. A missing file raises ``FileNotFoundError`` as
    ``open`` does; anything that is not a regular file raises ``DataError`` (``file_problem``) naming the path."""
    if mode not in ("r", "rb"):
        raise ValueError(f"open_regular reads only ('r' or 'rb'), got mode {mode!r}")
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise file_problem(path, f"not a regular file ({_file_type(st.st_mode)}); only regular files are read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        if mode == "rb":
            return os.fdopen(fd, "rb")
        return os.fdopen(fd, "r", encoding=encoding, errors=errors)
    except BaseException:
        os.close(fd)
        raise


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "a special file"


DEFAULT_MAX_READ = 1 << 30
"""The most bytes ``read_regular_bytes`` reads unless told otherwise (1 GiB)."""


def read_regular_bytes(path: str | os.PathLike[str], *, limit: int | None = DEFAULT_MAX_READ) -> bytes:
    """The bytes of a regular file (``open_regular``), refused with ``DataError`` (``file_problem``) when larger than
    ``limit`` bytes (``None``: no cap)."""
    with open_regular(path, "rb") as fh:
        if limit is None:
            return fh.read()
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise file_problem(path, f"larger than {limit} bytes; not read")
    return data


def read_regular_text(path: str | os.PathLike[str], *, limit: int | None = DEFAULT_MAX_READ) -> str:
    """The UTF-8 text of a regular file; ``DataError`` (``file_problem``) (naming the path, never quoting the
    content) when it is not a regular file, too large or not UTF-8."""
    data = read_regular_bytes(path, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise file_problem(path, f"not UTF-8 text (bad byte at offset {exc.start})") from None


def parse_json_text(text: str, where: str | os.PathLike[str]) -> Any:
    """``json.loads`` whose failures name ``where`` and the problem (line and column), never the
    text: bad JSON, nesting too deep for the parser, a number too long to convert."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise file_problem(where, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise file_problem(where, "JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer longer than Python's int-conversion limit
        msg = str(exc).split(":")[0] if "digits" in str(exc) else "a value that cannot be read"
        raise file_problem(where, f"not usable JSON ({msg})") from None


def read_json_file(path: str | os.PathLike[str], *, limit: int | None = DEFAULT_MAX_READ) -> Any:
    """A regular UTF-8 JSON file, parsed; every failure is a ``DataError`` (``file_problem``) (or ``FileNotFoundError``)
    that names the path and never quotes the content."""
    return parse_json_text(read_regular_text(path, limit=limit), path)


# -- where a verb may write (issue 27 item 9, issue 39 item 6) -------------------------------------

def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a file" if stat.S_ISREG(mode) else _file_type(mode)


def _lstat_or_none(target: Path, flag: str, give: str) -> os.stat_result | None:
    """``os.lstat(target)`` (never following a link), None where nothing is and the path could be
    created: its nearest existing ancestor is a folder. Anything else is an ``InputError`` (``param``: the flag)."""
    shown = repr(str(target))
    try:
        return os.lstat(target)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            why = "its path runs through a symbolic link loop"
        elif exc.errno == errno.ENOTDIR:
            why = "its path runs through something that is not a folder"
        else:
            why = f"cannot be checked ({exc.strerror or type(exc).__name__})"
        raise InputError(f"{flag} {shown}: {why}; {give}", param=flag) from None
    ancestor = target.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    try:
        is_dir = stat.S_ISDIR(os.stat(ancestor).st_mode)  # a link to a folder above the target is fine
    except OSError:
        is_dir = False
    if not is_dir:
        raise InputError(f"{flag} {shown} is under {str(ancestor)!r}, which is not a folder; {give}", param=flag)
    return None


def check_file_target(out: str | os.PathLike[str], flag: str, *, what: str = "file",
                      ours: Callable[[Path], bool | str] | None = None, ours_text: str = "",
                      file_text: str | None = None) -> Path:
    """Refuse a file path a verb must not write; return it. The one check every file writer of
    the command line makes before its work and again right before it writes.

    Safe: a path where nothing is and whose nearest existing folder is a folder (the missing ones
    are created owner-only by ``atomic_write_text``), or a regular file that ``ours`` accepts (a
    file this verb wrote: a report, a config, a baseline; ``ours=None``: none is; ``ours`` returns
    True, or False or the reason why not, and may raise ``OSError`` when it cannot read). Refused, in one
    line naming ``flag``, the path and what is there: a folder, a symbolic link (one that loops or
    leads nowhere included), a FIFO, a socket, a device, any other regular file, a path under a
    file or through a link loop, a file that cannot be read.

    Args:
        what: what the verb writes, with its article ("a report file").
        ours_text: what ``ours`` accepts ("a report written by searchkit report").
        file_text: how a folder's message names the file to give (default "the file").

    Raises:
        InputError: the line (``param``: the flag).
    """
    target = Path(out)
    shown = repr(str(target))
    give = f"give the path of {file_text or 'the file'} to write"
    st = _lstat_or_none(target, flag, give)
    if st is None:
        return target
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{flag} {shown} is a folder; {give}", param=flag)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{flag} {shown} is {_kind(st.st_mode)}, not {what}; refusing to replace it "
                           "(give a new path)", param=flag)
    if ours is None:
        raise InputError(f"{flag} {shown} exists; refusing to replace it (give a new path, or remove the "
                           "file yourself)", param=flag)
    try:
        mine = ours(target)
    except (OSError, DataError) as exc:  # DataError: a file it cannot read as asked
        why = problem_of(exc)
        raise InputError(f"{flag} {shown} exists and cannot be read ({why}); refusing to replace it "
                           "(give a new path)", param=flag) from None
    if mine is not True:
        why = f" ({mine})" if isinstance(mine, str) and mine else ""
        raise InputError(f"{flag} {shown} exists and is not {ours_text or what}{why}; refusing to replace it "
                           "(give a new path, or remove the file yourself)", param=flag)
    return target


def check_folder_target(out: str | os.PathLike[str], flag: str) -> bool:
    """Refuse a folder path a verb must not write into (``index --out``, ``eval --out``,
    ``config export --out``) for what the path itself is; True when a folder is there, False when
    nothing is (and it could be created). What the folder holds is the verb's own check.

    Refused, in one line naming ``flag`` and the path: a symbolic link (to a folder too: a verb
    writes only where it was asked to), a regular file, a FIFO, a socket, a device, a path under a
    file or through a link loop, one that cannot be checked.

    Raises:
        InputError: the line (``param``: the flag).
    """
    target = Path(out)
    shown = repr(str(target))
    st = _lstat_or_none(target, flag, "give a folder path")
    if st is None:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"{flag} {shown} is a symbolic link; give a real folder", param=flag)
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"{flag} {shown} exists and is not a folder ({_kind(st.st_mode)}); refusing to replace it", param=flag)
    return True


def write_failure_line(flag: str, path: str | os.PathLike[str], exc: OSError) -> str:
    """The one line for a write of ``flag``'s path that the system refused (a full disk, no
    permission): the flag, the path and the reason, never a raw ``[Errno N]``."""
    why = getattr(exc, "problem", None) or exc.strerror or type(exc).__name__
    if getattr(exc, "errno", None) in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        why = "the disk is full"
    return f"{flag} {str(Path(path))!r}: cannot write it ({why}); nothing was replaced"
