"""The call log (issue 30): one JSON line per tool call, and one per start and refresh.

A call's line holds the tool, a salted hash of who called (``Session.tag``: lines of one caller
link within one run, never to a user id), the outcome (``ok``, the parameter an error named),
the latency, counts (cards, messages, hits, tasks), the config fingerprint and the index version.
Never the query, the arguments (nor the name of an argument the tool does not have: only how many)
or the answer's text, unless the server was started with ``--log-content``. Lines go to the
``searchkit.serve.calls`` logger: to stderr, or to a file made owner-only (``--log-file``).

Every other line the server's process logs (the MCP SDK's, uvicorn's, searchkit's own warnings and
errors, Python warnings, an exception that ends a thread) goes to stderr as JSON too (``JsonLines``:
``event`` ``log``, the level, the logger, the message, a traceback as one string; issue 41 item 4).
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import secrets
import stat
import sys
import threading
from pathlib import Path
from typing import Any, Mapping

from searchkit.errors import InputError

LOGGER = "searchkit.serve.calls"
COUNTED = ("cards", "messages", "hits", "tasks", "comments", "skipped")
"""Lists of an answer's ``to_dict()`` whose lengths a call's line counts."""


class CallLog:
    """Writes the JSON lines; ``content`` adds the arguments and the answer's text (``--log-content``)."""

    def __init__(self, *, content: bool = False, salt: bytes | None = None) -> None:
        self.content = content
        self.salt = salt if salt is not None else secrets.token_bytes(16)
        self.logger = logging.getLogger(LOGGER)

    def write(self, event: str, **fields: object) -> None:
        """One line: the time, the event and ``fields`` (JSON values)."""
        line = {"ts": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"), "event": event, **fields}
        self.logger.info(json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":")))

    def call(self, *, tool: str, who: str, transport: str, ok: bool, latency_ms: float, fingerprint: str,
             version: int | None, counts: Mapping[str, int], error: str | None = None,
             arguments: object = None, text: str | None = None, unknown_arguments: int = 0) -> None:
        """The line of one call; the arguments and the text only with ``content``; of arguments
        that are not the tool's parameters, only how many (their names are the caller's text)."""
        extra: dict[str, Any] = {}
        if unknown_arguments:
            extra["unknown_arguments"] = unknown_arguments
        if self.content:
            extra.update(arguments=arguments, text=text)
        self.write("call", tool=tool, caller=who, transport=transport, ok=ok, error=error,
                   latency_ms=round(latency_ms, 2), counts=dict(counts), fingerprint=fingerprint,
                   index_version=version, **extra)


def counts(answer: Mapping[str, Any]) -> dict[str, int]:
    """The lengths of the lists ``COUNTED`` names in an answer's ``to_dict()``."""
    return {k: len(v) for k, v in answer.items() if k in COUNTED and isinstance(v, list)}


def log_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be the call log (None: it can): it must be a regular file, or a new
    file in an existing folder. Only ``stat`` is used: a FIFO is not opened (that would wait for a
    reader), a device is not chmod-ed."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        parent = p.parent
        if not parent.is_dir():
            return f"{str(p)[:200]}: no such folder {str(parent)[:200]!r}"
        return None
    except OSError as exc:
        return f"{str(p)[:200]}: cannot be read ({exc.strerror or exc})"
    if not stat.S_ISREG(st.st_mode):
        return f"{str(p)[:200]}: not a regular file ({_kind(st.st_mode)}); give the path of a file to append to"
    return None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def open_log_file(path: str | os.PathLike[str]) -> Any:
    """``path`` opened to append (created 0600; an existing file made 0600: the log holds caller
    hashes, and content with ``--log-content``). Opened without waiting (a FIFO with no reader is
    refused, not waited on) and checked on the descriptor: anything but a regular file is refused
    (``InputError``) and left as it was."""
    problem = log_file_problem(path)
    if problem is not None:
        raise InputError(f"--log-file {problem}", param="--log-file")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise InputError(f"--log-file {str(path)[:200]}: cannot be opened ({exc.strerror or exc})",
                           param="--log-file") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced after the check
            raise InputError(f"--log-file {str(path)[:200]}: not a regular file ({_kind(st.st_mode)})",
                               param="--log-file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8")
    except OSError as exc:
        os.close(fd)
        raise InputError(f"--log-file {str(path)[:200]}: cannot be used ({exc.strerror or exc})",
                           param="--log-file") from None
    except BaseException:
        os.close(fd)
        raise


class JsonLines(logging.Formatter):
    """A log record as one JSON line, shaped like the call log's."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _dt.datetime.fromtimestamp(record.created, _dt.timezone.utc).isoformat(timespec="milliseconds"),
            "event": "log", "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str, separators=(",", ":"))


def setup_stderr(level: int = logging.WARNING) -> logging.Handler:
    """Every logger but the call log's (the root's handlers) to stderr as ``JsonLines`` from
    ``level`` up, Python warnings and the exceptions that end a thread included. Returns the handler."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "searchkit_json", False)]:
        root.removeHandler(old)
    _SAVED.setdefault("root_level", root.level)
    _SAVED.setdefault("excepthook", threading.excepthook)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    handler.setLevel(level)  # a logger set lower elsewhere (the CLI's -v) does not reach a server's stderr
    handler.searchkit_json = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)

    def thread_died(args: Any) -> None:
        logging.getLogger("searchkit.serve").error("thread %s ended with an exception", getattr(args.thread, "name", "?"),
                                                   exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
    threading.excepthook = thread_died
    return handler


_SAVED: dict[str, Any] = {}


def teardown() -> None:
    """Undo ``setup``: the handlers it added leave (the log file closed), the root's level, Python
    warnings and the thread hook as they were. A server in its own process never needs it; one run
    in-process (a test, a notebook) must not leave handlers on a stream that closes after it."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "searchkit_json", False)]:
        root.removeHandler(old)
    calls = logging.getLogger(LOGGER)
    for old in [h for h in calls.handlers if getattr(h, "searchkit_calls", False)]:
        calls.removeHandler(old)
        old.close()
        if getattr(old, "searchkit_owns_stream", False):
            old.stream.close()  # type: ignore[attr-defined]
    if "root_level" in _SAVED:
        root.setLevel(_SAVED.pop("root_level"))
    if "excepthook" in _SAVED:
        threading.excepthook = _SAVED.pop("excepthook")
    logging.captureWarnings(False)


def setup(log_file: str | os.PathLike[str] | None = None) -> logging.Handler:
    """Send the call log's lines, bare, to ``log_file`` (appended; ``open_log_file``) or to stderr,
    and every other log line to stderr as JSON (``setup_stderr``). Returns the call log's handler
    (the caller may remove it)."""
    if log_file is not None:
        handler: logging.Handler = logging.StreamHandler(open_log_file(log_file))
        handler.searchkit_owns_stream = True  # type: ignore[attr-defined]
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.searchkit_calls = True  # type: ignore[attr-defined]
    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if getattr(h, "searchkit_calls", False)]:
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    setup_stderr()
    return handler
